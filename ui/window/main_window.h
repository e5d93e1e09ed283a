// The workbench window: the experiment's panels (data, model, training, devices, strategy) in a
// left dock, live loss and metric charts in the centre, the Keras log below, the experiment's
// explanation on the right; File/Run/View menus, a toolbar, progress and status. Its runs are
// started and fed by a RunController (run_controller.h: the training thread, the feed timer, the
// last result); what the window does with them (Run .. Reset, each tick's charts and log, a run's
// end) is in main_window_run.cpp, its files in main_window_files.cpp, its actions and menus in
// main_window_actions.cpp, the rehearsal views in main_window_views.cpp, the runs list in
// main_window_runs.cpp and sweeps (Run > Sweep, the Sweep view) in main_window_sweep.cpp.
// UI thread only.
#pragma once

#include <QMainWindow>
#include <QPointer>
#include <QVector>
#include <map>
#include <memory>
#include <optional>

#include "core/io/experiment.h"
#include "core/training/teaching_checks.h"
#include "ui/window/experiment_document.h"
#include "ui/window/training_worker.h"

class QAction;
class QToolBar;
class QDockWidget;
class QLabel;
class QMenu;
class QPlainTextEdit;
class QProgressBar;
class QTabWidget;
class QTimer;

namespace fitbench {

class AboutView;
class BatchSplitView;
class CapacityView;
class CollectivesView;
class DataPanel;
class DecisionView;
class DeviceTimelineView;
class DevicesPanel;
class ImagesView;
class MetricChart;
class ModelPanel;
class RunsList;
class SessionRuns;
class SweepController;
class SweepView;
struct SessionRun;
struct SweepResult;
struct TrialEpoch;
struct TrialResult;
class StrategyPanel;
class TrainingPanel;
class RunController;
class TrainingSession;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  // Opens an experiment file, or a .keras model (openKerasModel); on failure shows the error
  // (unless `quiet`) and returns false with the message in `error`, keeping the current
  // experiment.
  bool openFile(const QString& path, QString* error = nullptr, bool quiet = false);
  bool saveTo(const QString& path);
  // Replaces the experiment with `spec` (File > New uses the default one).
  void loadSpec(const ExperimentSpec& spec, const QString& filePath);
  // The experiment as the widgets describe it now.
  ExperimentSpec currentSpec() const;
  bool isModified() const;
  QString filePath() const { return m_doc.filePath(); }
  // --devices N on the command line: overrides the panel for every run.
  void setDeviceOverride(int devices);
  // --processes P: runs are jobs of P processes (Devices tab, Processes). Returns why it cannot
  // be ("" when set): Open MPI missing, a count out of range.
  QString setProcessCount(int processes);
  // Files every run writes when it ends, as fitbench-cli's --history and --trace ("" for none).
  void setRunOutputs(const QString& historyFile, const QString& traceFile);
  // Restores the last session's experiment when nothing else is opened.
  void restoreLastSession();

  // The views --show can bring to the front, and doing so (unknown names are ignored).
  static QStringList viewNames();
  void showView(const QString& name);
  // One-click layouts (View > Layout, the Layout toolbar, Ctrl+1 ... Ctrl+6): "standard" (the
  // first-start layout) or one view brought large to the front: "charts", "timeline",
  // "batch-split", "collectives", "boundary". Unknown names are ignored.
  static QStringList layoutNames();
  void applyLayout(const QString& name);

  // Why Run would refuse the experiment as set up (the first panel's error; `tab` gets that
  // panel's Experiment tab), or empty.
  QString setupError(int* tab = nullptr) const;
  // Run controls (also the toolbar's actions).
  void run();
  void stop();
  void togglePause();
  void step();
  void reset();
  // Run > Sweep: runs the experiment's sweep section on `jobs` cores (the Sweep view's setting
  // when 0) on a worker thread; a section's problems are shown as the window shows other plan
  // errors (lastRunError has them, a line each). Stop stops it.
  void runSweep(int jobs = 0);
  bool isSweeping() const;
  // Loads trial `trial`'s resolved experiment into the panels as an untitled experiment; the
  // sweep and the runs stay.
  void openTrial(int trial);

  TrainingSession* session() const;
  RunController* runs() const { return m_runs; }
  MetricChart* lossChart() const { return m_lossChart; }
  MetricChart* metricChart() const { return m_metricChart; }
  DataPanel* dataPanel() const { return m_dataPanel; }
  ModelPanel* modelPanel() const { return m_modelPanel; }
  TrainingPanel* trainingPanel() const { return m_trainingPanel; }
  DevicesPanel* devicesPanel() const { return m_devicesPanel; }
  StrategyPanel* strategyPanel() const { return m_strategyPanel; }
  DecisionView* decisionView() const { return m_decisionView; }
  DeviceTimelineView* timelineView() const { return m_timeline; }
  BatchSplitView* batchSplitView() const { return m_batchSplit; }
  CollectivesView* collectivesView() const { return m_collectives; }
  CapacityView* capacityView() const { return m_capacity; }
  ImagesView* imagesView() const { return m_images; }
  SweepView* sweepView() const { return m_sweepView; }
  RunsList* runsList() const { return m_runsList; }
  SessionRuns* sessionRuns() const { return m_sessionRuns; }
  QPlainTextEdit* logView() const { return m_log; }
  const RunResult* lastResult() const;
  // Why the last run could not start or failed (a panel's error, an error from the engine), or
  // empty when it ran.
  const QString& lastRunError() const { return m_lastRunError; }
  // The UI thread's longest gap between two feed ticks during the last run (ms).
  double longestStallMs() const;
  // The longest time one feed tick's own work (charts, log, progress) took in the last run (ms).
  double longestTickMs() const;

 signals:
  // A run ended: ok is false when it failed with an error.
  void runEnded(bool ok);
  // A sweep ended (stopped or not: ok), or could not start or failed (not ok).
  void sweepEnded(bool ok);

 protected:
  void closeEvent(QCloseEvent* event) override;
  void showEvent(QShowEvent* event) override;
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void buildPanels();
  // The device timeline, batch split and collectives views (main_window_views.cpp).
  void buildViews(QDockWidget* besideRight, QDockWidget* besideBottom);
  void updateViews(const ExperimentSpec& spec);
  // Grows the About dock (taking the height from the decision boundary below it) until the
  // experiment's description fits, up to half the column or what leaves that view 340 px (the
  // larger); never shrinks it.
  void fitAboutDock();
  void viewsRunStarted(const QStringList& names, const QString& distribution,
                       std::shared_ptr<const CapacityInput> model);
  void viewsTakeSteps(const std::vector<StepTrace>& steps);
  void viewsRunEnded();
  // The runs list and the Sweep view, docked beside `besideRight` (main_window_runs.cpp,
  // main_window_sweep.cpp).
  void buildRuns(QDockWidget* besideBottom);
  void buildSweep(QDockWidget* besideRight);
  void connectRuns();
  // Brings run `id`'s curves into the charts as the runs list says (shown or not, its label).
  void applyRunToCharts(int id);
  void addRunToCharts(const SessionRun& run);
  void onTrialBegan(int trial);
  void onTrialEpochs(const QVector<TrialEpoch>& epochs);
  void onTrialEnded(const TrialResult& result);
  void onSweepFinished(const std::shared_ptr<SweepResult>& result);
  void onSweepFailed(const QString& message);
  void onTrialsSelected(const QList<int>& trials);
  void updateSweepIntro();
  // File > Export > Sweep trials: the trials table as trials.csv or trials.json.
  void exportTrials();
  void buildCentre();
  void buildActions();
  void buildMenus();
  void connectSignals();
  void restoreSettings();
  void saveSettings();
  // File > Name and lesson: edits the experiment's name and description.
  void editLesson();
  // View > Zoom: `steps` zoom steps up (down when negative); 0 back to actual size.
  void zoomBy(int steps);
  // The Layout toolbar and View > Layout (main_window_layouts.cpp).
  void buildLayouts(QMenu* view);
  // The docks' first-start sizes for this window's size.
  void applyDefaultDockSizes();
  void applyZoom(double factor);

  void newExperiment();
  void openDialog();
  bool save();
  bool saveAsDialog();
  bool maybeSave();
  void addRecentFile(const QString& path);
  void updateRecentMenu();
  void updateExamplesMenu();
  void exportHistory(bool csv);
  void exportChart(MetricChart* chart);
  // File > Export > Trained model: fitbench's JSON, a .keras archive or a .weights.h5 file.
  enum class ModelFormat { kFitbench, kKeras, kKerasWeights };
  void exportModel(ModelFormat format);
  // A .keras file becomes an untitled experiment: its model, compile options and weights (with
  // the optimizer's state) on the current experiment's data and devices.
  bool openKerasModel(const QString& path, QString* error, bool quiet);
  // File > Export > Keras script: the experiment as a Keras 3 script in a dialog.
  void exportKerasScript();
  // Run > Evaluate on CSV... / Predict on CSV...: the trained model on another CSV file in an
  // EvaluateDialog (evaluate_dialog.h), window-modal; `predict` chooses which.
  void openEvaluateDialog(bool predict);

  void onPanelChanged();
  void updateContext();
  void updateTabMarks();
  void updateTitle();
  void updateActions();
  void onTick(const FeedUpdate& u);
  void onStarted(int devices, const QStringList& names, const QString& distribution,
                 std::shared_ptr<const CapacityInput> model);
  void onFinished(std::shared_ptr<RunResult> result);
  void onError(const QString& message);
  void setEditing(bool editable);
  // Forgets every result of the experiment that was open: the charts' runs and overlays, the
  // decision boundary, the batch split's step, the device timeline, measured collectives and
  // the trained model. Results belong to their experiment (opening another, or New).
  void clearResults();
  // Run (held: paused with one batch allowed, as Step from idle starts it).
  void startRun(bool held);
  void appendLog(const QString& text, const QString& color = {});
  // A status bar message for `milliseconds`, elided to the room left of the devices label and
  // the progress bar, the whole text in its tooltip.
  void showStatus(const QString& text, int milliseconds);
  int resolvedDevices() const;
  QString runLabel(int devices, const QString& distribution) const;

  RunController* m_runs = nullptr;
  DataPanel* m_dataPanel = nullptr;
  ModelPanel* m_modelPanel = nullptr;
  TrainingPanel* m_trainingPanel = nullptr;
  DevicesPanel* m_devicesPanel = nullptr;
  StrategyPanel* m_strategyPanel = nullptr;
  QTabWidget* m_tabs = nullptr;
  MetricChart* m_lossChart = nullptr;
  MetricChart* m_metricChart = nullptr;
  QPlainTextEdit* m_log = nullptr;
  AboutView* m_about = nullptr;
  DecisionView* m_decisionView = nullptr;
  DeviceTimelineView* m_timeline = nullptr;
  QDockWidget* m_timelineDock = nullptr;
  BatchSplitView* m_batchSplit = nullptr;
  CollectivesView* m_collectives = nullptr;
  CapacityView* m_capacity = nullptr;
  QDockWidget* m_capacityDock = nullptr;
  ImagesView* m_images = nullptr;  // the last run's classifier of images
  QDockWidget* m_imagesDock = nullptr;
  // The experiment the running (or last) run trains and where its relative paths start: the
  // Images view reads its data again when it ends.
  std::optional<ExperimentSpec> m_runSpec;
  QString m_runBaseDir;
  SessionRuns* m_sessionRuns = nullptr;
  RunsList* m_runsList = nullptr;
  SweepView* m_sweepView = nullptr;
  QDockWidget* m_sweepDock = nullptr;
  SweepController* m_sweeps = nullptr;
  int m_currentRunId = -1;         // the session run of Run's current run
  int m_sweepCount = 0;            // sweeps started in this experiment's session
  std::map<int, int> m_trialRuns;  // the current sweep's trial -> session run id
  bool m_keepResults = false;      // loadSpec keeps the runs and the sweep (Open as experiment)
  QProgressBar* m_progress = nullptr;
  QLabel* m_statusDevices = nullptr;
  QLabel* m_statusRate = nullptr;
  QLabel* m_statusMessage = nullptr;  // showStatus's text, in the rate's place while it shows
  QTimer* m_statusTimer = nullptr;
  QMenu* m_recentMenu = nullptr;
  QMenu* m_examplesMenu = nullptr;

  QAction* m_newAct = nullptr;
  QAction* m_openAct = nullptr;
  QAction* m_saveAct = nullptr;
  QAction* m_saveAsAct = nullptr;
  QAction* m_runAct = nullptr;
  QAction* m_pauseAct = nullptr;
  QAction* m_stepAct = nullptr;
  QAction* m_stopAct = nullptr;
  QAction* m_resetAct = nullptr;
  QAction* m_clearRunsAct = nullptr;
  QAction* m_zoomInAct = nullptr;
  QAction* m_zoomOutAct = nullptr;
  QAction* m_zoomResetAct = nullptr;
  QToolBar* m_toolBar = nullptr;
  QSize m_baseIconSize;
  QAction* m_sweepAct = nullptr;
  QAction* m_exportTrialsAct = nullptr;
  QAction* m_evaluateAct = nullptr;  // Run > Evaluate on CSV... (Ctrl+E)
  QAction* m_predictAct = nullptr;   // Run > Predict on CSV... (Ctrl+Shift+P)
  QList<QAction*> m_exportActs;

  ExperimentDocument m_doc;  // the file, the fields no panel shows, the saved state
  bool m_filling = false;    // loadSpec is filling the panels
  bool m_defaultLayoutPending = true;
  QByteArray m_defaultState;  // the docks as built, before the saved layout  // no saved dock
                              // layout: size the docks on the first show
  QString m_lastRunError;
  QString m_metricKey;        // the log key the metric chart follows
  std::string m_viewsKey;     // the experiment the rehearsal views were last set up for
  QString m_runDistribution;  // the running (or last) run's strategy, as started() names it
  int m_runCount = 0;
  bool m_warnedNaN = false;  // the NaN-loss message was shown for this run
  int m_nanEpoch = 0;        // the 1-based epoch whose loss first was not finite
  PlateauWatch m_plateau;    // a loss that stopped moving far from where it started
  // Rates for the status bar.
  double m_rateTime = 0.0;
  int64_t m_rateSteps = 0, m_rateSamples = 0;
};

// The experiment File > New starts from: the seed example's model on a Playground data set.
ExperimentSpec default_experiment();

}  // namespace fitbench
