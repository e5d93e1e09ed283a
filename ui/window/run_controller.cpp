#include "ui/window/run_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <algorithm>

#include "ui/window/training_session.h"

namespace fitbench {

RunController::RunController(QObject* parent)
    : QObject(parent), m_session(new TrainingSession(this)), m_feedTimer(new QTimer(this)) {
  m_feedTimer->setInterval(33);  // at most ~30 redraws per second
  connectSignals();
}

RunController::~RunController() { shutdown(); }

void RunController::connectSignals() {
  connect(m_feedTimer, &QTimer::timeout, this, &RunController::drain);
  connect(m_session, &TrainingSession::started, this, &RunController::started);
  connect(m_session, &TrainingSession::finished, this, [this](std::shared_ptr<RunResult> result) {
    end();
    m_lastResult = result;
    emit finished(result);
  });
  connect(m_session, &TrainingSession::errorOccurred, this, [this](const QString& message) {
    end();
    emit failed(message);
  });
  connect(m_session, &TrainingSession::pausedChanged, this, &RunController::pausedChanged);
}

bool RunController::isPaused() const { return m_session->isPaused(); }

void RunController::setOutputs(const QString& historyFile, const QString& traceFile) {
  m_historyFile = historyFile;
  m_traceFile = traceFile;
}

QString RunController::start(ExperimentSpec spec, const QString& experimentFile, int devices,
                             bool held) {
  if (m_running) return {};
  RunRequest request;
  request.startPaused = held;
  request.spec = std::move(spec);
  request.spec.devices.count = devices;
  request.baseDir =
      experimentFile.isEmpty() ? QDir::currentPath() : QFileInfo(experimentFile).absolutePath();
  request.experimentFile = experimentFile;
  request.overrides.history_file = m_historyFile.toStdString();
  QString note;
  // A single-device run has no device trace: --trace waits for a distributed one.
  if (!request.spec.distribution.class_name.empty())
    request.overrides.trace_file = m_traceFile.toStdString();
  else if (!m_traceFile.isEmpty())
    note = tr("Note: --trace %1 is written by distributed runs only; this run is on one device.")
               .arg(m_traceFile);
  m_session->start(request);
  m_running = true;
  m_longestStallMs = 0.0;
  m_longestTickMs = 0.0;
  m_lastTickNs = 0;
  m_tickClock.start();
  m_feedTimer->start();
  return note;
}

void RunController::stop() { m_session->stop(); }

void RunController::pause() { m_session->pause(); }

void RunController::togglePause() {
  if (!m_running) return;
  if (m_session->isPaused())
    m_session->resume();
  else
    m_session->pause();
}

void RunController::stepOnce() {
  if (m_running) m_session->stepOnce();
}

void RunController::shutdown() {
  m_session->shutdown();
  m_feedTimer->stop();
}

void RunController::drain() {
  // How late this tick is: the longest gap beyond the timer's interval while training runs.
  if (m_running && m_tickClock.isValid()) {
    const qint64 now = m_tickClock.nsecsElapsed();
    m_longestStallMs =
        std::max(m_longestStallMs, (now - m_lastTickNs) * 1e-6 - m_feedTimer->interval());
    m_lastTickNs = now;
  }
  QElapsedTimer work;
  work.start();
  const FeedUpdate update = m_session->feed().take();
  if (update.any) emit tick(update);  // the window draws it, on this thread, before emit returns
  m_longestTickMs = std::max(m_longestTickMs, work.nsecsElapsed() * 1e-6);
}

void RunController::end() {
  m_feedTimer->stop();
  m_running = false;  // before the last drain: its notices speak of a run that has ended
  drain();
}

}  // namespace fitbench
