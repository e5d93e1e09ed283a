// The runs table: every run of the session (from Run and each sweep trial) with a check box that
// shows or hides its curves in the charts, its name (double-click or F2 to rename; a run from Run
// is named by what differs from the others), its settings, its epochs and its last epoch's
// values (a column per history key: loss, the metrics, the validation ones); Delete removes the
// selected runs, Export CSV writes their histories (all runs when none is selected). A view of a
// SessionRuns, which it edits. UI thread only.
#pragma once

#include <QStringList>
#include <QWidget>

class QLabel;
class QPushButton;
class QTreeWidget;
class QTreeWidgetItem;

namespace fitbench {

class SessionRuns;

class RunsList : public QWidget {
  Q_OBJECT
 public:
  explicit RunsList(SessionRuns* runs, QWidget* parent = nullptr);

  QTreeWidget* tree() const { return m_tree; }
  // The history keys with a column, in order (after Run, Settings and Epochs).
  QStringList valueColumns() const { return m_keys; }
  QPushButton* deleteButton() const { return m_delete; }
  QPushButton* exportButton() const { return m_export; }
  // The selected runs' ids, in list order.
  std::vector<int> selectedIds() const;
  // Deletes the selected runs.
  void deleteSelected();
  // Writes the selected runs' (or every run's) histories to `path`; false with *error on failure.
  bool exportTo(const QString& path, QString* error = nullptr);

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override;  // Delete in the list

 private:
  void connectSignals();
  QStringList metricKeys() const;  // every run's history keys, in Keras's order
  void setColumns();
  void rebuild();
  void refresh(int id);
  QTreeWidgetItem* itemFor(int id) const;
  void fill(QTreeWidgetItem* item, int id);
  void onItemChanged(QTreeWidgetItem* item, int column);
  void onExportClicked();
  void updateButtons();

  SessionRuns* m_runs;
  QTreeWidget* m_tree = nullptr;
  QLabel* m_empty = nullptr;
  QPushButton* m_delete = nullptr;
  QPushButton* m_export = nullptr;
  bool m_filling = false;
  QStringList m_keys;  // the value columns' history keys
};

}  // namespace fitbench
