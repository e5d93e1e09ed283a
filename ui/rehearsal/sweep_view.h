// The Sweep view: a sweep's trials as a table (sortable by any column, a filter box, each
// trial's status, live while the sweep runs), a parallel-coordinates plot whose brushes filter
// the table, and the objective against each parameter. Selecting trials in the table (or
// clicking one in a plot) is announced for the window to overlay their curves; "Open as
// experiment" asks for a trial's resolved experiment. UI thread only.
#pragma once

#include <QList>
#include <QWidget>

class QHBoxLayout;
class QLabel;
class QLineEdit;
class QAction;
class QPushButton;
class QSpinBox;
class QTableView;

namespace fitbench {

class ObjectiveScatter;
class ParallelCoordinates;
class TrialsFilter;
class TrialsModel;

class SweepView : public QWidget {
  Q_OBJECT
 public:
  explicit SweepView(QWidget* parent = nullptr);

  TrialsModel* model() const { return m_model; }
  TrialsFilter* filter() const { return m_filter; }
  QTableView* table() const { return m_table; }
  ParallelCoordinates* parallel() const { return m_parallel; }
  ObjectiveScatter* scatter() const { return m_scatter; }
  QLineEdit* filterEdit() const { return m_filterEdit; }
  QPushButton* openButton() const { return m_open; }
  QPushButton* clearBrushesButton() const { return m_clearBrushes; }
  // How many cores a sweep's trials share (Run > Sweep's jobs; default: this machine's cores).
  QSpinBox* jobsSpin() const { return m_jobs; }
  int jobs() const;
  // Buttons for the window's Run > Sweep and Stop, left of the filter box.
  void setRunActions(QAction* sweep, QAction* stop);

  // What the view says while it has no trials (how to get some), or a sweep section's problems
  // (`error`: every one, a line each), shown above the table in red.
  void setIntro(const QString& text);
  void setError(const QString& error);
  QString errorText() const;
  // The sweep runs: the summary says so, and Open as experiment waits for its end.
  void setRunning(bool running);

  // The selected trials' numbers, in the table's order; selecting replaces the selection.
  QList<int> selectedTrials() const;
  void selectTrials(const QList<int>& trials);

 signals:
  void selectionChanged(const QList<int>& trials);
  void openAsExperiment(int trial);

 private:
  void connectSignals();
  void updateSummary();
  void onSelectionChanged();

  TrialsModel* m_model = nullptr;
  TrialsFilter* m_filter = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_error = nullptr;
  QLabel* m_intro = nullptr;
  QLineEdit* m_filterEdit = nullptr;
  QPushButton* m_clearBrushes = nullptr;
  QPushButton* m_open = nullptr;
  QSpinBox* m_jobs = nullptr;
  QHBoxLayout* m_bar = nullptr;
  QWidget* m_splitter = nullptr;  // the table and the plots, shown once there are trials
  QTableView* m_table = nullptr;
  ParallelCoordinates* m_parallel = nullptr;
  ObjectiveScatter* m_scatter = nullptr;
  bool m_running = false;
};

}  // namespace fitbench
