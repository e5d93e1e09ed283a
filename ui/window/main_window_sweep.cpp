// MainWindow's sweeps: Run > Sweep plans the experiment's sweep section (its problems shown as
// the window shows other plan errors) and runs it on a worker thread (SweepController); each
// trial's progress feeds the Sweep view live, each trial that ends joins the runs list; selecting
// trials in the view overlays their curves in the charts; Open as experiment loads a trial's
// resolved settings. The window's other parts: main_window.cpp.
#include <QAction>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QMessageBox>
#include <QProgressBar>
#include <QTableView>
#include <QTimer>
#include <cmath>
#include <set>

#include "core/base/error.h"
#include "core/distribution/spec/strategies.h"
#include "core/io/json_file.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/plot_style.h"
#include "ui/common/session_runs.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/rehearsal/trials_model.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/sweep_controller.h"

namespace fitbench {

void MainWindow::buildSweep(QDockWidget* besideRight) {
  m_sweeps = new SweepController(this);
  m_sweepView = new SweepView;
  m_sweepDock = new QDockWidget(tr("Sweep"), this);
  m_sweepDock->setObjectName(QStringLiteral("SweepDock"));
  m_sweepDock->setWidget(m_sweepView);
  addDockWidget(Qt::RightDockWidgetArea, m_sweepDock);
  tabifyDockWidget(besideRight, m_sweepDock);
  connect(m_sweeps, &SweepController::trialBegan, this, &MainWindow::onTrialBegan);
  connect(m_sweeps, &SweepController::trialEpochs, this, &MainWindow::onTrialEpochs);
  connect(m_sweeps, &SweepController::trialEnded, this, &MainWindow::onTrialEnded);
  connect(m_sweeps, &SweepController::finished, this, &MainWindow::onSweepFinished);
  connect(m_sweeps, &SweepController::failed, this, &MainWindow::onSweepFailed);
  connect(m_sweepView, &SweepView::selectionChanged, this, &MainWindow::onTrialsSelected);
  connect(m_sweepView, &SweepView::openAsExperiment, this, &MainWindow::openTrial);
}

bool MainWindow::isSweeping() const { return m_sweeps->isRunning(); }

void MainWindow::updateSweepIntro() {
  if (m_sweepView->model()->trialCount() > 0) {
    m_sweepView->setIntro(QString());
    return;
  }
  m_sweepView->setIntro(
      m_doc.base().sweep.is_null()
          ? tr("This experiment has no sweep section. Open one that has (File > Examples > "
               "spiral_lr_sweep), or add a \"sweep\" section to the experiment file "
               "(docs/sweeps.md); then Run > Sweep runs its trials here.")
          : tr("Run > Sweep (Ctrl+Shift+W) runs this experiment's sweep: its trials appear "
               "here as they run."));
}

void MainWindow::runSweep(int jobs) {
  m_lastRunError.clear();
  if (m_runs->isRunning() || m_sweeps->isRunning()) return;
  const auto refuse = [this](const QStringList& problems) {
    m_lastRunError = problems.join('\n');
    m_sweepView->setError(m_lastRunError);
    for (const QString& line : problems)
      appendLog(tr("Cannot run the sweep: %1").arg(line), QStringLiteral("#b00020"));
    showStatus(tr("Cannot run the sweep: %1").arg(problems.front()), 15000);
    showView(QStringLiteral("sweep"));
    if (isVisible() && !property("batch").toBool())
      QMessageBox::warning(this, tr("The sweep cannot run"), m_lastRunError);
    emit sweepEnded(false);
  };
  int tab = 0;
  if (const QString error = setupError(&tab); !error.isEmpty()) {
    m_tabs->setCurrentIndex(tab);
    return refuse({error});
  }
  ExperimentSpec spec = currentSpec();
  if (spec.sweep.is_null())
    return refuse(
        {tr("the experiment has no sweep section; add one to its file "
            "(docs/sweeps.md), or open an example that has one")});
  spec.devices.count = resolvedDevices();
  PlanContext context;
  const QString file = m_doc.filePath();
  context.base_dir = m_doc.folder().toStdString();
  context.experiment_file = file.toStdString();
  std::shared_ptr<SweepPlan> plan;
  try {
    plan = std::make_shared<SweepPlan>(plan_sweep(spec, context));
  } catch (const PlanError& e) {
    QStringList lines;
    for (const PlanProblem& p : e.problems()) lines << QString::fromStdString(p.text());
    return refuse(lines);
  } catch (const InputError& e) {
    return refuse({QString::fromStdString(e.what())});
  }
  ++m_sweepCount;
  m_trialRuns.clear();
  m_sweepView->setError(QString());
  m_sweepView->model()->setPlan(plan);
  m_sweepView->setRunning(true);
  updateSweepIntro();
  const int cores = jobs > 0 ? jobs : m_sweepView->jobs();
  appendLog(tr("── sweep %1: %2 trials (%3), %4 on %5 cores ──")
                .arg(m_sweepCount)
                .arg(plan->trials.size())
                .arg(QString::fromStdString(plan->spec.method),
                     QString::fromStdString(plan->spec.objective.name))
                .arg(cores),
            QStringLiteral("#1565c0"));
  for (const PlanNotice& n : plan->notices)
    appendLog(QString::fromStdString(n.text), QStringLiteral("#555555"));
  m_metricKey = TrainingWorker::chartMetricKey(spec);
  setEditing(false);
  m_progress->setValue(0);
  m_progress->setFormat(tr("Sweep · 0/%1 trials").arg(plan->trials.size()));
  showView(QStringLiteral("sweep"));
  m_sweeps->start(plan, cores);
  updateActions();
}

void MainWindow::onTrialBegan(int trial) {
  TrialsModel* model = m_sweepView->model();
  model->trialBegan(trial);
  // Listed (running) from its start; a trial Stop keeps from starting never is.
  SessionRun run;
  run.label = model->trialLabel(trial);
  if (m_sweepCount > 1) run.label = tr("sweep %1 · %2").arg(m_sweepCount).arg(run.label);
  run.fromSweep = true;
  run.trial = trial;
  run.color = plot::runColor(trial);
  // Shown when selected: a sweep's trials would crowd the charts.
  run.shown = m_sweepView->selectedTrials().contains(trial);
  m_trialRuns[trial] = m_sessionRuns->add(run);
}

void MainWindow::onTrialEpochs(const QVector<TrialEpoch>& epochs) {
  TrialsModel* model = m_sweepView->model();
  std::set<int> trials;
  for (const TrialEpoch& e : epochs) {
    model->trialEpoch(e.trial, e.execution, e.epoch, e.logs);
    trials.insert(e.trial);
  }
  // A selected trial's curves grow as it trains (the charts redraw at most ~30 times a second).
  for (const int trial : trials) {
    const auto id = m_trialRuns.find(trial);
    const SessionRun* run = id == m_trialRuns.end() ? nullptr : m_sessionRuns->find(id->second);
    if (!run || !run->shown) continue;
    SessionRun live = *run;
    live.history = model->history(trial);
    addRunToCharts(live);
  }
}

void MainWindow::onTrialEnded(const TrialResult& result) {
  TrialsModel* model = m_sweepView->model();
  model->trialEnded(result);
  const auto id = m_trialRuns.find(result.number);
  if (id != m_trialRuns.end() &&
      (result.histories.empty() || result.histories.front().epoch.empty())) {
    // Begun, but stopped or failed before its first epoch: no curves, no run to list.
    m_sessionRuns->remove(id->second);
    m_trialRuns.erase(id);
  } else if (id != m_trialRuns.end()) {
    m_sessionRuns->setHistory(id->second,
                              result.histories.empty() ? History{} : result.histories.front(),
                              result.best_epoch);
    // Its final curves and best epoch, if drawn while it ran.
    if (const SessionRun* run = m_sessionRuns->find(id->second); run && run->shown)
      addRunToCharts(*run);
  }
  const QString label = model->trialLabel(result.number);
  int done = 0;
  for (int t = 0; t < model->trialCount(); ++t)
    if (model->result(t).status != TrialResult::Status::kPending &&
        model->result(t).status != TrialResult::Status::kRunning)
      ++done;
  m_progress->setValue(model->trialCount() ? done * 1000 / model->trialCount() : 0);
  m_progress->setFormat(tr("Sweep · %1/%2 trials").arg(done).arg(model->trialCount()));
  QString line = tr("%1 %2").arg(label, QString::fromStdString(status_name(result.status)));
  if (result.has_objective())
    line += tr(" · %1 %2").arg(model->objectiveName()).arg(result.objective, 0, 'g', 4);
  if (!result.error.empty()) line += tr(" · %1").arg(QString::fromStdString(result.error));
  appendLog(line, result.error.empty() ? QString() : QStringLiteral("#b00020"));
}

void MainWindow::onSweepFinished(const std::shared_ptr<SweepResult>& result) {
  setEditing(true);
  m_sweepView->setRunning(false);
  TrialsModel* model = m_sweepView->model();
  const int best = model->bestTrial();
  QString summary = result->stopped ? tr("Sweep stopped") : tr("Sweep finished");
  summary += tr(" in %1 s").arg(result->seconds, 0, 'f', 1);
  if (best >= 0)
    summary += tr(" · best %1 %2: %3")
                   .arg(model->objectiveName())
                   .arg(model->result(best).objective, 0, 'g', 4)
                   .arg(model->trialLabel(best));
  appendLog(summary, QStringLiteral("#2e7d32"));
  // Still in trial order: best first, which is what a finished sweep is read for.
  QTableView* table = m_sweepView->table();
  if (table->horizontalHeader()->sortIndicatorSection() == 0)
    table->sortByColumn(model->objectiveColumn(),
                        model->maximize() ? Qt::DescendingOrder : Qt::AscendingOrder);
  // Nothing chosen yet: the three best trials' curves go into the charts, to compare at once.
  if (m_sweepView->selectedTrials().isEmpty()) {
    QList<int> chosen;
    for (const int t : result->ranking())
      if (chosen.size() < 3 && result->trials[size_t(t)].status == TrialResult::Status::kCompleted)
        chosen << t;
    m_sweepView->selectTrials(chosen);
  }
  showStatus(summary, 15000);
  m_progress->setFormat(result->stopped ? tr("Sweep stopped") : tr("Sweep done"));
  updateActions();
  emit sweepEnded(true);
}

void MainWindow::onSweepFailed(const QString& message) {
  setEditing(true);
  m_sweepView->setRunning(false);
  m_lastRunError = message;
  m_sweepView->setError(message);
  appendLog(tr("Error: %1").arg(message), QStringLiteral("#b00020"));
  showStatus(message, 15000);
  m_progress->setFormat(tr("Error"));
  updateActions();
  if (isVisible() && !property("batch").toBool())
    QMessageBox::warning(this, tr("The sweep failed"), message);
  emit sweepEnded(false);
}

void MainWindow::onTrialsSelected(const QList<int>& trials) {
  for (const auto& [trial, id] : m_trialRuns) m_sessionRuns->setShown(id, trials.contains(trial));
}

void MainWindow::exportTrials() {
  const TrialsModel* model = m_sweepView->model();
  if (!model->plan() || isSweeping()) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export sweep trials"), QDir::home().filePath(QStringLiteral("trials.csv")),
      tr("CSV (*.csv);;JSON (*.json)"));
  if (path.isEmpty()) return;
  const std::vector<TrialResult> results = model->results();
  const std::string text = path.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive)
                               ? trials_json(*model->plan(), results).dump(2) + "\n"
                               : trials_csv(*model->plan(), results);
  try {
    json_io::write_file_atomically(path.toStdString(), text);
    showStatus(tr("Wrote %1").arg(path), 5000);
  } catch (const InputError& e) {
    QMessageBox::warning(this, tr("Could not export"), QString::fromStdString(e.what()));
  }
}

void MainWindow::openTrial(int trial) {
  const SweepPlan* plan = m_sweepView->model()->plan();
  if (!plan || trial < 0 || trial >= int(plan->trials.size()) || m_runs->isRunning() ||
      m_sweeps->isRunning())
    return;
  const SweepTrial& t = plan->trials[size_t(trial)];
  ExperimentSpec spec = t.spec;
  // A strategy swept is a run option, not a path: it becomes the experiment's distribution.
  if (t.overrides.strategy)
    if (const StrategyInfo* s = find_strategy_by_option(*t.overrides.strategy);
        s && s->class_name != spec.distribution.class_name) {
      spec.distribution = DistributionSpec{};
      spec.distribution.class_name = std::string(s->class_name);
    }
  const QString label = m_sweepView->model()->trialLabel(trial);
  spec.name = (spec.name.empty() ? std::string("Sweep") : spec.name) + " · " + label.toStdString();
  m_keepResults = true;
  loadSpec(spec, QString());
  m_keepResults = false;
  updateSweepIntro();
  appendLog(tr("Opened %1 as an untitled experiment: its settings are in the panels.").arg(label),
            QStringLiteral("#1565c0"));
  showStatus(tr("Opened %1 as an untitled experiment").arg(label), 8000);
}

}  // namespace fitbench
