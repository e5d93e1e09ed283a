// The Strategy panel: single device, DataParallel, or ModelParallel with its device mesh
// (shape, axis names, batch axis) and a layout map table (regex -> axes) that shows live which
// variables each row matches and marks errors beside the row. Edits a DistributionSpec. A file's
// mesh the fields cannot show (not 2 axes, or an axis over 16) is kept as it is, with a note,
// until Shape, Axis names or Batch axis is edited. Widget; UI thread only.
#pragma once

#include <QWidget>
#include <string>
#include <vector>

#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/layer_spec.h"

class QComboBox;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableWidget;

namespace fitbench {

class StrategyPanel : public QWidget {
  Q_OBJECT
 public:
  explicit StrategyPanel(QWidget* parent = nullptr);

  void setSpec(const DistributionSpec& spec);
  DistributionSpec spec() const;
  // The model, its input width and the device count the layout map is checked against. A mesh
  // chosen for the device count (ModelParallel picked in the combo, its fields not edited since)
  // follows a new count: read spec() again after this call.
  void setModelContext(const ModelSpec& model, int inputFeatures, int devices);
  void setReadOnly(bool readOnly);
  // The first error of the ModelParallel settings, "" when valid (or another strategy).
  QString errorText() const { return m_error; }
  // Per layout-map row: the variables it matches (tests and tooltips).
  QStringList rowMatches(int row) const;

  // "None, model" <-> {"", "model"}.
  static QString axesToText(const std::vector<std::string>& axes);
  static std::vector<std::string> axesFromText(const QString& text);

 signals:
  void changed();

 private:
  void connectSignals();
  void addRow(const QString& key, const QString& axes);
  // Whether table row `row` is a layout map entry (a key or axes typed), not a blank row.
  bool isEntryRow(int row) const;
  // Fills the table with the default layout's rules; returns why it split nothing ("" when it
  // split something or the model has no variables yet).
  QString fillDenseLayout();
  void showFillNote(const QString& note);
  // The mesh fields to the most square mesh of the device count.
  void setMeshForDevices();
  void updateVisibility();
  void updateBatchAxes();
  void validate();
  void edited();

  QComboBox* m_strategy = nullptr;
  QLabel* m_explain = nullptr;
  QGroupBox* m_meshBox = nullptr;
  QSpinBox* m_rows = nullptr;
  QSpinBox* m_cols = nullptr;
  QLineEdit* m_axis0 = nullptr;
  QLineEdit* m_axis1 = nullptr;
  QComboBox* m_batchAxis = nullptr;
  QLabel* m_meshNote = nullptr;   // the kept file mesh
  QLabel* m_meshError = nullptr;  // the mesh's first error, beside its fields
  // The file's mesh when the fields cannot show it; spec() returns it while set.
  std::vector<int> m_fileShape;
  std::vector<std::string> m_fileAxes;
  std::string m_fileBatchDim;
  bool m_keepFileMesh = false;
  // The mesh fields hold the shape chosen for the device count (ModelParallel chosen in the
  // combo, the mesh not edited since): it follows the Devices panel's count.
  bool m_meshFollowsDevices = false;
  // Why Fill default found nothing to split (shown until the next edit).
  QString m_fillNote;
  QGroupBox* m_layoutBox = nullptr;
  QTableWidget* m_table = nullptr;
  QPushButton* m_add = nullptr;
  QPushButton* m_remove = nullptr;
  QPushButton* m_suggest = nullptr;
  QLabel* m_messages = nullptr;

  ModelSpec m_model;
  int m_features = 0;
  int m_devices = 1;
  QString m_error;
  std::vector<QStringList> m_matches;
  bool m_filling = false;
};

}  // namespace fitbench
