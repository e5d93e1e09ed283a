#include "ui/window/main_window.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QDockWidget>
#include <QFileInfo>
#include <QFontDatabase>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPainter>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/distribution/spec/devices.h"
#include "core/io/new_experiment.h"
#include "imageio/qt_image_decoder.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/about_view.h"
#include "ui/common/glossary.h"
#include "ui/common/text_style.h"
#include "ui/common/zoom.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/panels/training_panel.h"
#include "ui/rehearsal/decision_view.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/rehearsal/trials_model.h"
#include "ui/window/process_job.h"
#include "ui/window/run_controller.h"
#include "ui/window/sweep_controller.h"
#include "ui/window/training_session.h"

namespace fitbench {

namespace {

// One line of text, elided at the right to the width it gets.
class ElidedLabel : public QLabel {
 public:
  QSize minimumSizeHint() const override { return {0, QLabel::minimumSizeHint().height()}; }
  QSize sizeHint() const override { return {0, QLabel::sizeHint().height()}; }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    painter.setPen(palette().color(QPalette::WindowText));
    const QRect r = contentsRect();
    painter.drawText(r, Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine,
                     fontMetrics().elidedText(text(), Qt::ElideRight, r.width()));
  }
};

QWidget* scrolled(QWidget* panel) {
  auto* area = new QScrollArea;
  area->setWidget(panel);
  area->setWidgetResizable(true);
  area->setFrameShape(QFrame::NoFrame);
  return area;
}

}  // namespace

ExperimentSpec default_experiment() { return new_experiment(); }

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName(QStringLiteral("MainWindow"));
  install_qt_image_decoder();  // data.directory: folders of images
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  m_runs = new RunController(this);
  buildPanels();
  buildCentre();
  buildActions();
  buildMenus();
  connectSignals();
  loadSpec(default_experiment(), QString());
  m_defaultState = saveState();
  restoreSettings();
  updateActions();
}

MainWindow::~MainWindow() {
  m_sweeps->shutdown();
  m_runs->shutdown();
}

TrainingSession* MainWindow::session() const { return m_runs->session(); }
const RunResult* MainWindow::lastResult() const { return m_runs->lastResult().get(); }
double MainWindow::longestStallMs() const { return m_runs->longestStallMs(); }
double MainWindow::longestTickMs() const { return m_runs->longestTickMs(); }

void MainWindow::showEvent(QShowEvent* event) {
  QMainWindow::showEvent(event);
  // Automation (screenshots, --quit) always shows the default layout, not the user's.
  if (property("batch").toBool() && !m_defaultLayoutPending) {
    restoreState(m_defaultState);
    m_defaultLayoutPending = true;
  }
  if (m_defaultLayoutPending) {
    // The first show without a saved layout: the docks' default sizes (they need a laid-out
    // window to apply).
    m_defaultLayoutPending = false;
    applyDefaultDockSizes();
  }
  QTimer::singleShot(0, this, &MainWindow::fitAboutDock);  // once the docks are laid out
}

void MainWindow::fitAboutDock() {
  auto* about = findChild<QDockWidget*>(QStringLiteral("AboutDock"));
  QDockWidget* decision = findChild<QDockWidget*>(QStringLiteral("DecisionDock"));
  if (!about || !decision || !isVisible() || !about->isVisible() || about->isFloating()) return;
  // The dock below: the decision boundary, or the tab in front of it (Batch split, ...; the
  // tabs behind keep a place off the window).
  QList<QDockWidget*> tabs = tabifiedDockWidgets(decision);
  tabs.prepend(decision);
  decision = nullptr;
  for (QDockWidget* tab : tabs)
    if (tab->isVisible() && !tab->isFloating() && tab->y() > about->y()) decision = tab;
  if (!decision || dockWidgetArea(about) != dockWidgetArea(decision)) return;
  const int width = m_about->viewport()->width();
  if (width < 50) return;
  std::unique_ptr<QTextDocument> doc(m_about->document()->clone());
  doc->setTextWidth(width);
  const int chrome = about->height() - m_about->viewport()->height();  // title bar and frame
  const int total = about->height() + decision->height();
  // Up to the larger of half the column and what leaves the boundary 340 px.
  const int want = std::min(static_cast<int>(std::ceil(doc->size().height())) + chrome + 2,
                            std::max(total / 2, total - 340));
  if (want <= about->height()) return;
  resizeDocks({about, decision}, {want, total - want}, Qt::Vertical);
}

void MainWindow::buildPanels() {
  m_dataPanel = new DataPanel;
  m_modelPanel = new ModelPanel;
  m_trainingPanel = new TrainingPanel;
  m_devicesPanel = new DevicesPanel;
  m_devicesPanel->setProcessesUnavailable(ProcessLauncher::find().unavailable);
  m_strategyPanel = new StrategyPanel;

  auto* devicesPage = new QWidget;
  auto* devicesLayout = new QVBoxLayout(devicesPage);
  devicesLayout->setContentsMargins(0, 0, 0, 0);
  devicesLayout->addWidget(m_devicesPanel);
  devicesLayout->addWidget(m_strategyPanel);
  devicesLayout->addStretch(1);

  m_tabs = new QTabWidget;
  m_tabs->setObjectName(QStringLiteral("experimentTabs"));
  m_tabs->setDocumentMode(true);
  m_tabs->addTab(scrolled(m_dataPanel), tr("Data"));
  m_tabs->addTab(scrolled(m_modelPanel), tr("Model"));
  m_tabs->addTab(scrolled(m_trainingPanel), tr("Training"));
  m_tabs->addTab(scrolled(devicesPage), tr("Devices"));
  m_tabs->setTabToolTip(3, glossary::device());

  auto* dock = new QDockWidget(tr("Experiment"), this);
  dock->setObjectName(QStringLiteral("ExperimentDock"));
  dock->setWidget(m_tabs);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  dock->setMinimumWidth(380);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  m_about = new AboutView;
  m_about->setObjectName(QStringLiteral("about"));
  m_about->setOpenExternalLinks(true);
  auto* aboutDock = new QDockWidget(tr("About this experiment"), this);
  aboutDock->setObjectName(QStringLiteral("AboutDock"));
  aboutDock->setWidget(m_about);
  addDockWidget(Qt::RightDockWidgetArea, aboutDock);

  m_decisionView = new DecisionView;
  m_decisionView->setMinimumSize(240, 240);
  m_decisionView->setToolTip(
      tr("What the model predicts over the input plane, redrawn as it trains (every epoch), "
         "with the training points on top."));
  auto* decisionDock = new QDockWidget(tr("Decision boundary"), this);
  decisionDock->setObjectName(QStringLiteral("DecisionDock"));
  decisionDock->setWidget(m_decisionView);
  splitDockWidget(aboutDock, decisionDock, Qt::Vertical);

  m_log = new QPlainTextEdit;
  m_log->setObjectName(QStringLiteral("log"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(20000);
  setZoomedFont(m_log, QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_log->setLineWrapMode(QPlainTextEdit::NoWrap);
  auto* logDock = new QDockWidget(tr("Log"), this);
  logDock->setObjectName(QStringLiteral("LogDock"));
  logDock->setWidget(m_log);
  addDockWidget(Qt::BottomDockWidgetArea, logDock);
  buildViews(decisionDock, logDock);
  buildRuns(logDock);
  buildSweep(decisionDock);
  decisionDock->raise();
}

void MainWindow::buildCentre() {
  m_lossChart = new MetricChart(QStringLiteral("loss"));
  m_metricChart = new MetricChart(QStringLiteral("accuracy"));
  // Sweep trials' names once, below the loss chart: both charts draw the same runs.
  m_metricChart->setRunsLegendVisible(false);
  auto* splitter = new QSplitter(Qt::Vertical);
  splitter->addWidget(m_lossChart);
  splitter->addWidget(m_metricChart);
  setCentralWidget(splitter);

  m_progress = new QProgressBar;
  m_progress->setRange(0, 1000);
  m_progress->setValue(0);
  m_progress->setTextVisible(true);
  m_progress->setFormat(tr("Ready"));
  m_progress->setMinimumWidth(280);
  m_progress->setMaximumWidth(420);  // the rest is the messages' room
  m_statusDevices = new QLabel;
  m_statusDevices->setContentsMargins(12, 0, 0, 0);  // apart from an elided message
  m_statusRate = new QLabel;
  // The devices and strategy stay in sight on the right, beside the progress; a message (e.g.
  // "Opened ...", showStatus) takes the training rate's place on the left for a while, as
  // QStatusBar's own temporary messages do, but elided to its room: QStatusBar would cut a long
  // one off under the devices label.
  m_statusMessage = new ElidedLabel;
  m_statusMessage->hide();
  m_statusTimer = new QTimer(this);
  m_statusTimer->setSingleShot(true);
  connect(m_statusTimer, &QTimer::timeout, this, [this] {
    m_statusMessage->hide();
    m_statusMessage->clear();
    m_statusRate->show();
  });
  statusBar()->addWidget(m_statusMessage, 1);
  statusBar()->addWidget(m_statusRate, 1);
  statusBar()->addPermanentWidget(m_statusDevices);
  statusBar()->addPermanentWidget(m_progress);
}

void MainWindow::connectSignals() {
  connect(m_newAct, &QAction::triggered, this, &MainWindow::newExperiment);
  connect(m_openAct, &QAction::triggered, this, &MainWindow::openDialog);
  connect(m_saveAct, &QAction::triggered, this, &MainWindow::save);
  connect(m_saveAsAct, &QAction::triggered, this, &MainWindow::saveAsDialog);
  connect(m_runAct, &QAction::triggered, this, &MainWindow::run);
  connect(m_pauseAct, &QAction::triggered, this, &MainWindow::togglePause);
  connect(m_stepAct, &QAction::triggered, this, &MainWindow::step);
  connect(m_stopAct, &QAction::triggered, this, &MainWindow::stop);
  connect(m_resetAct, &QAction::triggered, this, &MainWindow::reset);
  connect(m_clearRunsAct, &QAction::triggered, this, [this] {
    m_lossChart->clearOverlays();
    m_metricChart->clearOverlays();
  });

  connect(m_dataPanel, &DataPanel::changed, this, &MainWindow::onPanelChanged);
  connect(m_modelPanel, &ModelPanel::changed, this, &MainWindow::onPanelChanged);
  connect(m_trainingPanel, &TrainingPanel::changed, this, &MainWindow::onPanelChanged);
  connect(m_devicesPanel, &DevicesPanel::changed, this, &MainWindow::onPanelChanged);
  connect(m_devicesPanel, &DevicesPanel::processesChanged, this, &MainWindow::updateActions);
  connect(m_strategyPanel, &StrategyPanel::changed, this, &MainWindow::onPanelChanged);

  connect(m_runs, &RunController::tick, this, &MainWindow::onTick);
  connect(m_runs, &RunController::started, this, &MainWindow::onStarted);
  connect(m_runs, &RunController::finished, this, &MainWindow::onFinished);
  connect(m_runs, &RunController::failed, this, &MainWindow::onError);
  connect(m_runs, &RunController::pausedChanged, this, [this] { updateActions(); });
  connect(m_sweepAct, &QAction::triggered, this, [this] { runSweep(); });
  connectRuns();
}

void MainWindow::loadSpec(const ExperimentSpec& given, const QString& filePath) {
  ExperimentSpec spec = given;
  // Reading a file resolves data.csv to an absolute path; a file beside the experiment (or below
  // it) is shown and saved relative to it again, so the experiment stays portable.
  // The same for a folder of images (data.directory).
  for (std::string* path : {&spec.data.csv, &spec.data.directory}) {
    if (path->empty() || filePath.isEmpty()) continue;
    const QDir dir = QFileInfo(filePath).absoluteDir();
    const QString given = QString::fromStdString(*path);
    const QString relative = dir.relativeFilePath(given);
    if (QDir::isAbsolutePath(given) && !relative.startsWith(QStringLiteral("..")))
      *path = relative.toStdString();
  }
  clearResults();
  m_filling = true;
  m_doc.reset(spec, filePath);
  m_dataPanel->setBaseDir(m_doc.folder());
  m_dataPanel->setSpec(spec.data);
  m_dataPanel->setValidationSplit(spec.fit.validation_split);
  m_modelPanel->setSpec(spec.model);
  m_trainingPanel->setSpec(spec.compile, spec.fit, spec.seed);
  int envCount = 1;
  QString envError;  // fitbench-cli's error too, when the count is left to the environment
  try {
    envCount = environment_device_count().value_or(1);
  } catch (const InputError& e) {
    envError = QString::fromStdString(e.what());
  }
  m_devicesPanel->setSpec(spec.devices, envCount, envError);
  m_strategyPanel->setSpec(spec.distribution);
  m_filling = false;
  updateSweepIntro();
  m_about->setDescription(
      QString::fromStdString(spec.name.empty() ? std::string("Untitled") : spec.name),
      QString::fromStdString(spec.description));
  m_metricKey = TrainingWorker::chartMetricKey(spec);
  if (isVisible()) QTimer::singleShot(0, this, &MainWindow::fitAboutDock);
  // The model panel takes the data's feature count in updateContext: the file as opened is
  // what is saved, so an untouched experiment is never modified.
  updateContext();
  m_doc.markSaved(currentSpec());
  updateTitle();
  updateActions();
}

ExperimentSpec MainWindow::currentSpec() const {
  ExperimentSpec spec = m_doc.base();
  spec.data = m_dataPanel->spec();
  spec.model = m_modelPanel->spec();
  spec.compile = m_trainingPanel->compileOptions();
  spec.fit = m_trainingPanel->fitOptions();
  spec.fit.validation_split = m_dataPanel->validationSplit();
  spec.seed = m_trainingPanel->seed();
  spec.devices = m_devicesPanel->spec();
  spec.distribution = m_strategyPanel->spec();
  return spec;
}

bool MainWindow::isModified() const { return m_doc.isModified(currentSpec()); }

void MainWindow::setDeviceOverride(int devices) {
  m_devicesPanel->overrideCount(devices);
  onPanelChanged();
}

QString MainWindow::setProcessCount(int processes) {
  return m_devicesPanel->setProcessCount(processes);
}

void MainWindow::setRunOutputs(const QString& historyFile, const QString& traceFile) {
  m_runs->setOutputs(historyFile, traceFile);
}

int MainWindow::resolvedDevices() const { return m_devicesPanel->deviceCount(); }

void MainWindow::onPanelChanged() {
  if (m_filling) return;
  updateContext();
  updateTitle();
  updateActions();
}

void MainWindow::updateContext() {
  // The model's input follows the data first, so that the spec below (and the views it sets up)
  // has the data's width, not the previous experiment's.
  m_modelPanel->setInputShape(m_dataPanel->sampleShape());
  ExperimentSpec spec = currentSpec();
  // Generators give one target column (a label or a value); a CSV file its target columns.
  const int targetColumns =
      spec.data.csv.empty() ? 1 : std::max<int>(1, int(spec.data.target.size()));
  m_modelPanel->setTargetInfo(targetColumns, m_dataPanel->classCount(), spec.compile.loss);
  m_trainingPanel->setValidationSplit(m_dataPanel->validationSplit());
  m_strategyPanel->setModelContext(spec.model, m_dataPanel->featureCount(),
                                   m_devicesPanel->deviceCount());
  spec.distribution = m_strategyPanel->spec();  // a mesh that follows the device count
  const QString devices = m_devicesPanel->deviceCount() == 1
                              ? tr("1 device")
                              : tr("%1 devices").arg(m_devicesPanel->deviceCount());
  // Without a strategy, a run trains on the first device whatever the count (the others idle).
  const QString strategy =
      !spec.distribution.class_name.empty() ? QString::fromStdString(spec.distribution.class_name)
      : m_devicesPanel->deviceCount() == 1  ? tr("single device")
                                            : tr("no strategy: training uses cpu:0");
  m_statusDevices->setText(QStringLiteral("%1 (%2) · %3")
                               .arg(devices, QString::fromStdString(spec.devices.type), strategy));
  updateViews(spec);
  updateTabMarks();
  const QString key = TrainingWorker::chartMetricKey(spec);
  m_metricChart->setEnabled(!key.isEmpty());
  if (!key.isEmpty()) m_metricChart->setMetricName(key);
}

void MainWindow::updateTabMarks() {
  // A tab whose settings stop a run carries a mark and says why in its tooltip, so that an opened
  // file's problem is in sight before Run (which brings the tab forward and logs it).
  const QString errors[] = {m_dataPanel->errorText(), m_modelPanel->errorText(),
                            m_trainingPanel->errorText(),
                            m_devicesPanel->errorText().isEmpty() ? m_strategyPanel->errorText()
                                                                  : m_devicesPanel->errorText()};
  for (int tab = 0; tab < 4; ++tab) {
    const QString& error = errors[tab];
    m_tabs->setTabIcon(
        tab, error.isEmpty() ? QIcon() : style()->standardIcon(QStyle::SP_MessageBoxCritical));
    QString tip = tab == 3 ? glossary::device() : QString();
    if (!error.isEmpty())
      tip = tr("Cannot run: %1").arg(error) + (tip.isEmpty() ? QString() : "\n\n" + tip);
    m_tabs->setTabToolTip(tab, tip);
  }
}

void MainWindow::updateTitle() {
  setWindowTitle(QStringLiteral("%1[*] — fitbench").arg(m_doc.displayName()));
  setWindowModified(isModified());
}

void MainWindow::updateActions() {
  const bool sweeping = m_sweeps->isRunning();
  const bool running = m_runs->isRunning() || sweeping;
  const bool paused = m_runs->isPaused();
  m_runAct->setEnabled(!running);
  // Without a sweep section there is nothing to run (the Sweep view says how to add one).
  m_sweepAct->setEnabled(!running && !m_doc.base().sweep.is_null());
  // A job on several processes runs until it ends or Stop: one process's fit() cannot be held.
  const bool processes = m_runs->onProcesses() || (!running && m_devicesPanel->processCount() > 1);
  m_pauseAct->setEnabled(running && !sweeping && !processes);
  m_pauseAct->setText(paused ? tr("Resume") : tr("Pause"));
  m_pauseAct->setIcon(style()->standardIcon(paused ? QStyle::SP_MediaPlay : QStyle::SP_MediaPause));
  m_stepAct->setEnabled(!sweeping && (!running || paused) && !processes);
  // What Step does now (shown while the pointer is on it, over the status bar's text).
  m_stepAct->setStatusTip(processes ? tr("Step holds a run of this window's threads: set "
                                         "Processes to 1 (Devices tab)")
                          : running ? tr("Train one more batch, then hold")
                                    : tr("Start a run and hold it after its first batch"));
  m_stopAct->setEnabled(running);
  m_resetAct->setEnabled(!running);
  m_sweepView->openButton()->setEnabled(!running && m_sweepView->selectedTrials().size() == 1);
  for (QAction* a : {m_newAct, m_openAct}) a->setEnabled(!running);
  m_recentMenu->setEnabled(!running);
  m_examplesMenu->setEnabled(!running);
  for (QAction* a : m_exportActs) a->setEnabled(!running && lastResult() != nullptr);
  m_exportTrialsAct->setEnabled(!running && m_sweepView->model()->trialCount() > 0);
  const bool trained = !running && lastResult() != nullptr;
  for (QAction* a : {m_evaluateAct, m_predictAct}) {
    a->setEnabled(trained);
    const QString key = a->shortcut().toString(QKeySequence::NativeText);
    a->setToolTip(trained ? QStringLiteral("%1 (%2)").arg(a->statusTip(), key)
                  : running
                      ? tr("Wait for the run to end: it needs the trained model (%1)").arg(key)
                      : tr("Train first (Run): it needs a trained model (%1)").arg(key));
  }
}

void MainWindow::setEditing(bool editable) {
  m_dataPanel->setReadOnly(!editable);
  m_modelPanel->setReadOnly(!editable);
  m_trainingPanel->setReadOnly(!editable);
  m_devicesPanel->setReadOnly(!editable);
  m_strategyPanel->setReadOnly(!editable);
}

}  // namespace fitbench
