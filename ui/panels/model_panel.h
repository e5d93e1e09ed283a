// The Model panel: edits a Sequential ModelSpec (the layer list, one layer's fields), checks it
// against the data's targets and the loss as the user types, and shows the live Keras summary
// computed from the spec (no model is built). Owns its copy of the spec. Widget; UI thread only.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>
#include <optional>

#include "core/losses/loss_spec.h"
#include "core/nn/layer_spec.h"
#include "ui/panels/model_checks.h"

class QLabel;
class QListWidget;
class QPlainTextEdit;
class QPushButton;

namespace fitbench {

class LayerEditor;

class ModelPanel : public QWidget {
  Q_OBJECT
 public:
  explicit ModelPanel(QWidget* parent = nullptr);

  // Shows `spec` and selects its first layer; emits nothing.
  void setSpec(const ModelSpec& spec);
  // The edited spec. A leading InputLayer is kept when the spec had one, with the input shape
  // (inputShape()) once the data has given one.
  ModelSpec spec() const;
  // The experiment was saved with spec(): the InputLayer it wrote has the input shape.
  void markSaved();
  // The data's feature count (0: not known yet); shown in the Input row and used for the summary.
  void setInputFeatures(int features);
  // The data's sample shape ((28, 28) for an image, (features) for rows; empty: not known yet).
  void setInputShape(const std::vector<int64_t>& shape);
  // The shape the model's input takes: the file's InputLayer's when it holds the data's values
  // as they are or flat (784 for a 28 x 28 image), else the data's.
  std::vector<int64_t> inputShape() const;
  // The data's target columns and classes (0: not known / not a classification set) and the
  // loss, for the last-layer checks.
  void setTargetInfo(int targetColumns, int classes, const LossSpec& loss);
  void setReadOnly(bool readOnly);

  // The first error, "" when the model can be trained.
  QString errorText() const;
  // Every error and warning, in layer order.
  const QVector<ModelIssue>& issues() const { return m_issues; }
  // The model.summary() text shown in the panel.
  QString summaryText() const;

  // Selects a layer (index among the non-input layers; -1: none) as a click on its row would.
  void selectLayer(int index);
  int selectedLayer() const;
  // Adds a layer of `className` (Dense, Dropout, Activation) after the selected one, as the Add
  // menu does, and selects it.
  void addLayer(const QString& className);
  void removeSelectedLayer();
  void moveSelectedLayer(int delta);

  QListWidget* layerList() const { return m_list; }
  LayerEditor* layerEditor() const { return m_editor; }

 signals:
  // The user changed the model (an edit, an added, removed or moved layer).
  void changed();

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void connectSignals();
  void rebuildList(int selectIndex);
  void onSelectionChanged();
  void onLayerEdited();
  void syncOrderFromList();
  void refresh();
  void updateButtons();
  void updateSummary();
  void setSummaryText(const QString& text);
  int inputUnits() const;  // 0 when unknown
  QStringList layerNames() const;
  QString rowText(int index) const;

  std::optional<LayerSpec> m_input;  // the spec's leading InputLayer, if any
  ModelSpec m_spec;                  // without the InputLayer
  int m_inputFeatures = 0;
  std::vector<int64_t> m_inputShape;  // the data's sample shape
  bool m_hasTargetInfo = false;
  int m_targetColumns = 0;
  int m_classes = 0;
  LossSpec m_loss;
  bool m_readOnly = false;
  bool m_rebuilding = false;
  QVector<ModelIssue> m_issues;
  int m_summaryWidth = 0;

  QListWidget* m_list = nullptr;
  QPushButton* m_add = nullptr;
  QPushButton* m_remove = nullptr;
  QPushButton* m_up = nullptr;
  QPushButton* m_down = nullptr;
  QLabel* m_issuesLabel = nullptr;
  LayerEditor* m_editor = nullptr;
  QPlainTextEdit* m_summary = nullptr;
};

}  // namespace fitbench
