// MainWindow's runs: Run, Step, Pause, Stop and Reset, the UI tick that takes the training
// feed (charts, log, progress, rates, the NaN warning) and the end of a run (its summary in the
// log and the status bar, or its error). The window's other parts: main_window.cpp.
#include <QDir>
#include <QFileInfo>
#include <QLabel>
#include <QLocale>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QScrollBar>
#include <QStatusBar>
#include <QTabWidget>
#include <QTextCursor>
#include <QTimer>
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/spec/strategies.h"
#include "core/run/experiment_runner.h"
#include "core/training/callback_registry.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/plot_style.h"
#include "ui/common/run_naming.h"
#include "ui/common/session_runs.h"
#include "ui/images/images_view.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/panels/training_panel.h"
#include "ui/rehearsal/capacity_view.h"
#include "ui/rehearsal/collectives_view.h"
#include "ui/rehearsal/decision_view.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/rehearsal/trials_model.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/sweep_controller.h"

namespace fitbench {

namespace {

QString formatCount(double v) { return QLocale().toString(std::llround(v)); }

QString formatDuration(double seconds) {
  const int s = int(std::lround(seconds));
  if (s >= 3600)
    return QStringLiteral("%1:%2:%3")
        .arg(s / 3600)
        .arg(s / 60 % 60, 2, 10, QChar('0'))
        .arg(s % 60, 2, 10, QChar('0'));
  return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
}

}  // namespace

QString MainWindow::runLabel(int devices, const QString& distribution) const {
  const QString count = devices == 1 ? tr("1 device") : tr("%1 devices").arg(devices);
  if (distribution.isEmpty()) return tr("run %1 (%2)").arg(m_runCount).arg(count);
  return tr("run %1 (%2, %3)").arg(m_runCount).arg(count, distribution);
}

QString MainWindow::setupError(int* tab) const {
  struct Check {
    QString error;
    int tab;
  };
  const Check checks[] = {{m_dataPanel->errorText(), 0},
                          {m_modelPanel->errorText(), 1},
                          {m_trainingPanel->errorText(), 2},
                          {m_devicesPanel->errorText(), 3},
                          {m_strategyPanel->errorText(), 3}};
  for (const Check& c : checks) {
    if (c.error.isEmpty()) continue;
    if (tab) *tab = c.tab;
    return c.error;
  }
  const ExperimentSpec spec = currentSpec();
  // A job on several processes spreads a distribution's batches (docs/processes.md); under
  // ModelParallel every mesh row and column that spans processes must meet each alike.
  if (const int processes = m_devicesPanel->processCount(); processes > 1) {
    const std::string& d = spec.distribution.class_name;
    QString why;
    if (d.empty())
      why = tr("A job on %1 processes spreads the batches of a distribution, and this "
               "experiment has none: choose DataParallel or ModelParallel under Strategy, or set "
               "Processes to 1.")
                .arg(processes);
    else
      why = m_devicesPanel->processErrorText();
    if (why.isEmpty() && d == kModelParallel)
      why =
          QString::fromStdString(mesh_process_error(mesh_placement(spec.distribution), processes));
    if (!why.isEmpty() && d == kModelParallel && !why.endsWith('.')) {
      why[0] = why[0].toUpper();  // a sentence of its own here
      why += '.';
    }
    if (!why.isEmpty()) {
      if (tab) *tab = 3;
      return why;
    }
  }
  // A ModelCheckpoint or CSVLogger from the file (the Training tab lists them; it does not edit
  // them) must not write over the experiment file, its data or its weights, as in fitbench-cli.
  const QString base = m_doc.folder();
  try {
    check_outputs_apart(run_inputs(spec, m_doc.filePath().toStdString(), base.toStdString()),
                        callback_outputs(spec.fit));
  } catch (const InputError& e) {
    if (tab) *tab = 2;
    return QString::fromStdString(e.what());
  }
  return {};
}

void MainWindow::run() { startRun(false); }

void MainWindow::startRun(bool held) {
  m_lastRunError.clear();
  if (m_runs->isRunning() || isSweeping()) return;
  int tab = 0;
  if (const QString error = setupError(&tab); !error.isEmpty()) {
    m_tabs->setCurrentIndex(tab);
    m_lastRunError = error;
    appendLog(tr("Cannot run: %1").arg(error), QStringLiteral("#b00020"));
    showStatus(tr("Cannot run: %1").arg(error), 8000);
    emit runEnded(false);
    return;
  }
  const ExperimentSpec spec = currentSpec();
  m_metricKey = TrainingWorker::chartMetricKey(spec);
  m_decisionView->clear();
  m_runSpec = spec;
  m_runBaseDir = m_doc.filePath().isEmpty() ? QDir::currentPath() : m_doc.folder();
  m_images->clear(tr("The run in progress fills this view when it ends."));
  const int processes = m_devicesPanel->processCount();
  if (const QString note = m_runs->start(spec, m_doc.filePath(), resolvedDevices(),
                                         held && processes == 1, processes);
      !note.isEmpty())
    appendLog(note, QStringLiteral("#555555"));
  setEditing(false);
  m_progress->setValue(0);
  m_progress->setFormat(tr("Starting…"));
  m_rateTime = 0.0;
  m_rateSteps = m_rateSamples = 0;
  m_warnedNaN = false;
  m_nanEpoch = 0;
  m_plateau.reset();
  updateActions();
}

void MainWindow::step() {
  if (m_runs->isRunning()) {
    if (!m_runs->isPaused()) return;  // Step is for a held run
    m_runs->stepOnce();
    showStatus(tr("Training one more batch…"), 60000);
    return;
  }
  // The run starts held with one batch allowed: pausing it once it runs would race the worker.
  startRun(true);
  if (m_runs->isRunning()) showStatus(tr("Training one batch…"), 60000);
}

void MainWindow::stop() {
  m_runs->stop();
  if (isSweeping()) {
    m_sweeps->stop();
    showStatus(tr("Stopping the sweep: running trials end after their current batch…"), 60000);
  }
}

void MainWindow::togglePause() {
  if (!m_runs->isRunning()) return;
  m_runs->togglePause();
  // Resumed: the "Paused ..." message no longer says what happens.
  if (!m_runs->isPaused()) m_statusTimer->start(0);
  updateActions();
}

void MainWindow::reset() {
  if (m_runs->isRunning()) return;
  m_runs->forget();
  m_decisionView->clear();
  m_lossChart->beginRun(QString());
  m_metricChart->beginRun(QString());
  m_progress->setValue(0);
  m_progress->setFormat(tr("Ready"));
  m_statusRate->clear();
  appendLog(tr("Reset: the next run starts from freshly initialized weights."),
            QStringLiteral("#555555"));
  updateActions();
}

void MainWindow::clearResults() {
  // Open as experiment keeps the sweep it came from and the session's runs.
  if (m_keepResults) return;
  m_sessionRuns->clear();
  m_currentRunId = -1;
  m_sweepCount = 0;
  m_trialRuns.clear();
  m_sweepView->model()->clear();
  m_sweepView->setError(QString());
  m_runs->forget();  // the trained model: its exports are disabled until the next run
  m_runCount = 0;
  for (MetricChart* chart : {m_lossChart, m_metricChart}) {
    chart->beginRun(QString());  // the current run becomes an overlay, cleared with the rest
    chart->clearOverlays();
  }
  m_decisionView->clear();
  m_timeline->clear({});
  m_collectives->clear();
  m_capacity->clearMeasured();
  m_images->clear();
  m_viewsKey.clear();  // updateViews sets every view up again for the experiment now open
  m_progress->setValue(0);
  m_progress->setFormat(tr("Ready"));
  m_statusRate->clear();
}

void MainWindow::onStarted(int devices, const QStringList& names, const QString& distribution,
                           std::shared_ptr<const CapacityInput> model) {
  ++m_runCount;
  // Named by what differs from the session's other runs ("Adam 0.03" beside "SGD 0.1 m0.9"),
  // "run N" while nothing does; earlier runs are named again as this one joins them.
  SessionRun run;
  run.fallbackLabel = tr("run %1").arg(m_runCount);
  run.label = run.fallbackLabel;
  run.settings = run_settings(currentSpec());
  run.color = plot::runColor(m_runCount - 1);
  m_currentRunId = m_sessionRuns->add(run);
  const QString label = m_sessionRuns->find(m_currentRunId)->label;
  m_lossChart->beginRun(label, m_currentRunId, run.color);
  m_metricChart->beginRun(label, m_currentRunId, run.color);
  viewsRunStarted(names, distribution, std::move(model));
  m_capacity->runStarted(label);
  const QString where = runLabel(devices, distribution);  // "run 2 (4 devices, DataParallel)"
  appendLog(label == run.fallbackLabel
                ? tr("── %1: %2 ──").arg(where, names.join(QStringLiteral(", ")))
                : tr("── %1 · %2: %3 ──").arg(where, label, names.join(QStringLiteral(", "))),
            QStringLiteral("#1565c0"));
}

void MainWindow::onTick(const FeedUpdate& u) {
  if (u.grid) m_decisionView->setGrid(*u.grid);
  viewsTakeSteps(u.traces);
  m_capacity->addMeasuredSteps(u.stepSeconds);
  if (!u.batchLoss.isEmpty()) m_lossChart->addBatchPoints(u.batchLoss);
  if (!u.batchMetric.isEmpty()) m_metricChart->addBatchPoints(u.batchMetric);
  QString nanWarning;  // logged after this tick's text, so that it follows its epoch's line
  QString plateauWarning;
  for (const FeedUpdate::Epoch& e : u.epochs) {
    const double x = e.epoch + 1;
    if (e.loss && !std::isfinite(*e.loss) && !m_warnedNaN) {
      m_warnedNaN = true;
      m_nanEpoch = e.epoch + 1;
      const auto& callbacks = currentSpec().fit.callbacks;
      const bool terminates =
          std::any_of(callbacks.begin(), callbacks.end(),
                      [](const CallbackSpec& c) { return c.class_name == kTerminateOnNaN; });
      nanWarning =
          (terminates ? tr("The loss became %1 in epoch %2: the weights diverged; try a smaller "
                           "learning rate.")
           : m_runs->isRunning()
               ? tr("The loss became %1 in epoch %2: the weights diverged. Stop, then "
                    "try a smaller learning rate (or add TerminateOnNaN to stop by "
                    "itself).")
               : tr("The loss became %1 in epoch %2: the weights diverged; try a "
                    "smaller learning rate (or add TerminateOnNaN to stop by "
                    "itself)."))
              .arg(std::isnan(*e.loss) ? QStringLiteral("NaN") : QStringLiteral("infinite"))
              .arg(e.epoch + 1);
    }
    if (e.loss && m_plateau.add(*e.loss)) {
      // A loss that stopped moving far above where it would be if the model learned.
      const ExperimentSpec spec = currentSpec();
      const double level = m_plateau.level();
      const bool coinFlip =
          spec.compile.loss.name == "binary_crossentropy" && std::abs(level - std::log(2.0)) < 0.01;
      plateauWarning =
          tr("The loss has stayed near %1 for 20 epochs (up to epoch %2): the model is not "
             "learning. Try a larger learning rate or another optimizer (Training tab), or more "
             "units or another hidden layer (Model tab).")
              .arg(level, 0, 'f', 3)
              .arg(e.epoch + 1);
      if (coinFlip)
        plateauWarning +=
            tr(" A binary crossentropy near ln 2 = 0.693 means the model says "
               "about 0.5 for every sample: a coin flip.");
    }
    if (e.loss) m_lossChart->addEpochPoint(false, x, *e.loss);
    if (e.valLoss) m_lossChart->addEpochPoint(true, x, *e.valLoss);
    if (e.metric) m_metricChart->addEpochPoint(false, x, *e.metric);
    if (e.valMetric) m_metricChart->addEpochPoint(true, x, *e.valMetric);
  }
  if (!u.text.isEmpty()) {
    QString text = u.text;
    if (text.endsWith('\n')) text.chop(1);
    // Thousands of tiny epochs a second would keep the UI thread laying out text: show the first
    // and last lines of each burst and say how many were left out (the history has them all).
    constexpr int kHead = 40, kTail = 200;
    const int lines = int(text.count('\n')) + 1;
    if (lines > kHead + kTail + 1) {
      // Cut at the kHead-th newline from the start and the kTail-th from the end, without
      // splitting the whole burst into lines.
      qsizetype headEnd = -1;
      for (int i = 0; i < kHead; ++i) headEnd = text.indexOf('\n', headEnd + 1);
      qsizetype tailStart = text.size();
      for (int i = 0; i < kTail; ++i) tailStart = text.lastIndexOf('\n', tailStart - 1);
      appendLog(text.left(headEnd));
      appendLog(tr("… %1 lines not shown (File > Export > History has every epoch)")
                    .arg(lines - kHead - kTail),
                QStringLiteral("#777777"));
      appendLog(text.mid(tailStart + 1));
    } else {
      appendLog(text);
    }
  }
  if (!nanWarning.isEmpty()) {
    appendLog(nanWarning, QStringLiteral("#b00020"));
    showStatus(nanWarning, 20000);
  }
  if (!plateauWarning.isEmpty()) {
    appendLog(plateauWarning, QStringLiteral("#e65100"));
    showStatus(plateauWarning, 20000);
  }
  if (u.epochs_total > 0 && u.steps > 0) {
    const double done = (u.epoch + double(u.step) / u.steps) / u.epochs_total;
    m_progress->setValue(int(std::lround(std::clamp(done, 0.0, 1.0) * 1000)));
    QString eta;
    if (done > 0.0 && u.elapsed > 0.0)
      eta = tr(" · ETA %1").arg(formatDuration(u.elapsed / done * (1.0 - done)));
    m_progress->setFormat(tr("Epoch %1/%2 · step %3/%4%5")
                              .arg(u.epoch + 1)
                              .arg(u.epochs_total)
                              .arg(u.step)
                              .arg(u.steps)
                              .arg(m_runs->isPaused() ? tr(" · paused") : eta));
    // Held (Pause or Step): say where, and what the keys do now.
    if (m_runs->isPaused() && !u.batchLoss.isEmpty())
      showStatus(tr("Paused at epoch %1, step %2/%3: Step (F10) trains one more batch, "
                    "Resume (Ctrl+P) goes on")
                     .arg(u.epoch + 1)
                     .arg(u.step)
                     .arg(u.steps),
                 3600000);
  }
  // Rates over the last half second or more.
  if (u.elapsed - m_rateTime >= 0.5) {
    const double dt = u.elapsed - m_rateTime;
    const double steps = (u.stepsDone - m_rateSteps) / dt;
    const double samples = (u.samplesDone - m_rateSamples) / dt;
    m_statusRate->setText(
        tr("%1 steps/s · %2 samples/s").arg(formatCount(steps), formatCount(samples)));
    m_rateTime = u.elapsed;
    m_rateSteps = u.stepsDone;
    m_rateSamples = u.samplesDone;
  } else if (m_rateTime == 0.0 && u.elapsed > 0.0 && u.stepsDone > 0) {
    m_statusRate->setText(
        tr("%1 steps/s · %2 samples/s")
            .arg(formatCount(u.stepsDone / u.elapsed), formatCount(u.samplesDone / u.elapsed)));
  }
}

void MainWindow::onFinished(std::shared_ptr<RunResult> result) {
  // The run controller has taken the feed's last values (ticked) before this.
  m_lossChart->flushNow();
  m_metricChart->flushNow();
  viewsRunEnded();
  setEditing(true);
  m_sessionRuns->setHistory(m_currentRunId, result->history);
  if (m_runSpec) m_images->setRun(*m_runSpec, m_runBaseDir, result->model);
  QString how;
  QString color = QStringLiteral("#2e7d32");
  if (result->stop_reason == "stopped") {
    how = tr("Stopped");
    color = QStringLiteral("#555555");
  } else if (result->stop_reason == "early_stopping") {
    how = tr("Stopped early by EarlyStopping");
  } else if (result->stop_reason == "invalid_loss") {
    how = tr("Stopped by TerminateOnNaN");
    color = QStringLiteral("#b00020");
  } else {
    how = tr("Finished");
  }
  const int epochs = int(result->history.epoch.size());
  const QString took = result->seconds < 1.0 ? tr("%1 ms").arg(result->seconds * 1000.0, 0, 'f', 0)
                                             : tr("%1 s").arg(result->seconds, 0, 'f', 2);
  const QString after = epochs == 1 ? tr("after 1 epoch") : tr("after %1 epochs").arg(epochs);
  QString summary = tr("%1 %2 in %3").arg(how, after, took);
  // The status bar's shorter line: what ended it and the one thing to know.
  QString status = tr("%1 %2").arg(how, after);
  const std::string metric = m_metricKey.toStdString();
  if (!metric.empty() && result->history.history.count(metric))
    summary += tr(" · final %1 %2").arg(m_metricKey).arg(result->history.last(metric), 0, 'f', 4);
  else if (result->history.history.count("loss"))
    summary += tr(" · final loss %1").arg(result->history.last("loss"), 0, 'f', 4);
  if (result->restored_epoch) {
    // The final values above are the last epoch's; the model now holds an earlier epoch's weights.
    const History& h = result->history;
    const auto at = std::find(h.epoch.begin(), h.epoch.end(), *result->restored_epoch);
    const auto values = h.history.find(result->restored_monitor);
    summary += tr(" · weights restored from epoch %1").arg(*result->restored_epoch + 1);
    if (at != h.epoch.end() && values != h.history.end())
      summary += tr(" (%1 %2)")
                     .arg(QString::fromStdString(result->restored_monitor))
                     .arg(values->second[size_t(at - h.epoch.begin())], 0, 'f', 4);
  }
  // A run whose loss went NaN and stayed so ends in red, whether or not TerminateOnNaN stopped it.
  const bool stillNaN = m_nanEpoch > 0 && result->history.history.count("loss") &&
                        !std::isfinite(result->history.last("loss"));
  const bool diverged = result->stop_reason == "invalid_loss" || stillNaN;
  if (result->stop_reason == "invalid_loss")
    summary += tr(" · the loss is not a finite number: try a smaller learning rate");
  else if (stillNaN)
    summary += tr(" · the loss has not been a finite number since epoch %1").arg(m_nanEpoch);
  if (diverged) {
    color = QStringLiteral("#b00020");
    status += tr(" · the loss is not finite: try a smaller learning rate");
  } else {
    status = summary;
  }
  appendLog(summary, color);
  if (how == tr("Finished"))
    m_progress->setFormat(diverged ? tr("Done · diverged") : tr("Done"));
  else
    m_progress->setFormat(how.section(':', 0, 0));
  if (how == tr("Finished")) m_progress->setValue(1000);
  showStatus(status, 10000);
  updateActions();
  // A run TerminateOnNaN stopped failed: its line is the error (fitbench --quit prints it).
  if (result->stop_reason == "invalid_loss") m_lastRunError = summary;
  emit runEnded(result->stop_reason != "invalid_loss");
}

void MainWindow::onError(const QString& message) {
  viewsRunEnded();
  m_sessionRuns->setHistory(m_currentRunId, History{});
  setEditing(true);
  m_lastRunError = message;
  appendLog(tr("Error: %1").arg(message), QStringLiteral("#b00020"));
  m_progress->setFormat(tr("Error"));
  showStatus(message, 15000);
  updateActions();
  if (isVisible() && !property("batch").toBool())
    QMessageBox::warning(this, tr("Training could not run"), message);
  emit runEnded(false);
}

void MainWindow::showStatus(const QString& text, int milliseconds) {
  m_statusMessage->setText(text);
  m_statusMessage->setToolTip(text);
  m_statusRate->hide();
  m_statusMessage->show();
  m_statusTimer->start(milliseconds);
}

void MainWindow::appendLog(const QString& text, const QString& color) {
  if (color.isEmpty()) {
    m_log->appendPlainText(text);
  } else {
    m_log->appendHtml(
        QStringLiteral("<span style=\"color:%1\">%2</span>").arg(color, text.toHtmlEscaped()));
  }
  // The log does not wrap (Keras's lines keep their columns): a long line is read from its start,
  // so the cursor (which the view keeps in sight) goes to the start of the last line.
  QTextCursor cursor = m_log->textCursor();
  cursor.movePosition(QTextCursor::End);
  cursor.movePosition(QTextCursor::StartOfBlock);
  m_log->setTextCursor(cursor);
  m_log->horizontalScrollBar()->setValue(0);
}

}  // namespace fitbench
