// The editor for one layer of the Model panel (any class of the layer registry): it holds a copy of
// the LayerSpec, writes each user edit into it and says so with layerEdited(). Also NumberSpinBox,
// the %g-formatted spin box the Model and Training panels share. Widgets; UI thread only.
#pragma once

#include <QDoubleSpinBox>
#include <QHash>
#include <QString>
#include <QVector>
#include <QWidget>

#include "core/nn/layer_spec.h"
#include "ui/common/number_spin_box.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QSpinBox;
class QToolButton;

namespace fitbench {

// One validation message about a layer field ("units", "rate", "activation", "name").
struct LayerIssue {
  QString field;
  QString text;
  bool error = true;  // false: a warning
};

class LayerEditor : public QWidget {
  Q_OBJECT
 public:
  explicit LayerEditor(QWidget* parent = nullptr);

  // Shows `layer`; `autoName` is the name Keras would give it, shown when its name is empty.
  // Emits nothing.
  void setLayer(const LayerSpec& layer, const QString& autoName);
  // Updates the automatic name shown when the name is empty (other layers' names changed).
  void setAutoName(const QString& autoName);
  // Nothing selected: shows a hint instead of fields.
  void clearLayer();
  bool hasLayer() const { return m_hasLayer; }
  // The layer with every edit made since setLayer.
  const LayerSpec& layer() const { return m_layer; }
  // The messages for the shown layer: each appears under its field and as the field's tooltip.
  void setIssues(const QVector<LayerIssue>& issues);
  void setReadOnly(bool readOnly);

 signals:
  // The user changed a field; layer() holds the new value.
  void layerEdited();

 private:
  // The widgets of one initializer (kernel or bias) and the form rows they sit in.
  struct InitializerRows {
    QGroupBox* box = nullptr;
    QFormLayout* form = nullptr;
    QComboBox* name = nullptr;
    NumberSpinBox* mean = nullptr;
    NumberSpinBox* stddev = nullptr;
    NumberSpinBox* minval = nullptr;
    NumberSpinBox* maxval = nullptr;
    QCheckBox* seedSet = nullptr;
    QSpinBox* seed = nullptr;
  };

  void buildLayerBox();
  void buildInitializerBox(InitializerRows& rows, const QString& title, const QString& prefix);
  void buildRegularizerBox();
  void connectSignals();
  void connectInitializer(InitializerRows& rows, InitializerSpec LayerSpec::*member);
  void fillInitializer(InitializerRows& rows, const InitializerSpec& spec);
  void updateVisibility();
  void edited();
  QLabel* issueLabelFor(const QString& field) const;
  QWidget* fieldWidget(const QString& field) const;

  LayerSpec m_layer;
  bool m_hasLayer = false;
  bool m_filling = false;                 // setLayer is filling the widgets: no layerEdited()
  QHash<QString, QString> m_defaultTips;  // field -> its tooltip when it has no issue

  QLabel* m_hint = nullptr;
  QGroupBox* m_layerBox = nullptr;
  QFormLayout* m_layerForm = nullptr;
  QLineEdit* m_name = nullptr;
  QSpinBox* m_units = nullptr;
  QLabel* m_unitsIssue = nullptr;
  QSpinBox* m_filters = nullptr;  // Conv2D
  QLabel* m_filtersIssue = nullptr;
  QWidget* m_kernelSize = nullptr;  // Conv2D: height x width
  QSpinBox* m_kernelHeight = nullptr;
  QSpinBox* m_kernelWidth = nullptr;
  QLabel* m_kernelSizeIssue = nullptr;
  QWidget* m_poolSize = nullptr;  // MaxPooling2D, AveragePooling2D: height x width
  QSpinBox* m_poolHeight = nullptr;
  QSpinBox* m_poolWidth = nullptr;
  QLabel* m_poolSizeIssue = nullptr;
  QWidget* m_strides = nullptr;  // Conv2D and pooling: height x width
  QSpinBox* m_strideHeight = nullptr;
  QSpinBox* m_strideWidth = nullptr;
  QComboBox* m_padding = nullptr;  // Conv2D: valid or same
  QComboBox* m_activation = nullptr;
  QLabel* m_activationIssue = nullptr;
  QCheckBox* m_useBias = nullptr;
  QCheckBox* m_trainable = nullptr;
  NumberSpinBox* m_rate = nullptr;
  QLabel* m_rateIssue = nullptr;
  NumberSpinBox* m_scale = nullptr;     // Rescaling
  NumberSpinBox* m_offset = nullptr;    // Rescaling
  NumberSpinBox* m_momentum = nullptr;  // BatchNormalization
  NumberSpinBox* m_epsilon = nullptr;   // LayerNormalization, BatchNormalization
  QCheckBox* m_scaleGamma = nullptr;    // LayerNormalization: Keras's "scale"
  QCheckBox* m_center = nullptr;        // LayerNormalization
  QLineEdit* m_targetShape = nullptr;   // Reshape: "7, 112"
  QLabel* m_targetShapeIssue = nullptr;
  QCheckBox* m_seedSet = nullptr;
  QSpinBox* m_seed = nullptr;
  QLabel* m_nameIssue = nullptr;
  QToolButton* m_advanced = nullptr;  // shows the initializer and regularizer boxes
  InitializerRows m_kernelInit;
  InitializerRows m_biasInit;
  InitializerRows m_gammaInit;  // LayerNormalization
  InitializerRows m_betaInit;
  InitializerRows m_movingMeanInit;  // BatchNormalization
  InitializerRows m_movingVarianceInit;
  QGroupBox* m_regularizerBox = nullptr;
  QFormLayout* m_regularizerForm = nullptr;
  NumberSpinBox* m_kernelL1 = nullptr;
  NumberSpinBox* m_kernelL2 = nullptr;
  NumberSpinBox* m_biasL1 = nullptr;
  NumberSpinBox* m_biasL2 = nullptr;
  NumberSpinBox* m_gammaL1 = nullptr;
  NumberSpinBox* m_gammaL2 = nullptr;
  NumberSpinBox* m_betaL1 = nullptr;
  NumberSpinBox* m_betaL2 = nullptr;
};

// Keras's activation names as the layers take them, in the order the editors list them.
QStringList activationNames();
// The 10 initializer names of keras.initializers that fitbench has.
QStringList initializerNames();

}  // namespace fitbench
