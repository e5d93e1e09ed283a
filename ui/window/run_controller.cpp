#include "ui/window/run_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QTimer>
#include <algorithm>

#include "ui/window/process_job.h"
#include "ui/window/training_session.h"

namespace fitbench {

RunController::RunController(QObject* parent)
    : QObject(parent), m_session(new TrainingSession(this)), m_feedTimer(new QTimer(this)) {
  m_job = new ProcessJob(m_session->sharedFeed(), this);
  m_feedTimer->setObjectName(QStringLiteral("feedTimer"));
  m_feedTimer->setInterval(33);  // at most ~30 redraws per second
  connectSignals();
}

RunController::~RunController() { shutdown(); }

namespace {
// A run's start, end and failure, from the threads (TrainingSession) or a job (ProcessJob).
template <class Source, class Ended, class Failed>
void followRuns(RunController* controller, Source* source, Ended ended, Failed failed) {
  QObject::connect(source, &Source::started, controller, &RunController::started);
  QObject::connect(source, &Source::finished, controller, ended);
  QObject::connect(source, &Source::errorOccurred, controller, failed);
}
}  // namespace

void RunController::connectSignals() {
  connect(m_feedTimer, &QTimer::timeout, this, &RunController::drain);
  auto ended = [this](std::shared_ptr<RunResult> result) {
    end();
    m_lastResult = result;
    emit finished(result);
  };
  auto failedWith = [this](const QString& message) {
    end();
    emit failed(message);
  };
  followRuns(this, m_session, ended, failedWith);
  followRuns(this, m_job, ended, failedWith);
  // Only now does the feed hold this run's points (from either source): see drain().
  connect(this, &RunController::started, this, [this] { m_started = true; });
  connect(m_session, &TrainingSession::pausedChanged, this, &RunController::pausedChanged);
}

bool RunController::isPaused() const { return !m_onProcesses && m_session->isPaused(); }

void RunController::setOutputs(const QString& historyFile, const QString& traceFile) {
  m_historyFile = historyFile;
  m_traceFile = traceFile;
}

QString RunController::start(ExperimentSpec spec, const QString& experimentFile, int devices,
                             bool held, int processes) {
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
  m_onProcesses = processes > 1;
  if (m_onProcesses) {
    const QString command = m_job->start(request, processes);
    if (!command.isEmpty())
      note = tr("Running on %1 processes: %2").arg(processes).arg(command) +
             (note.isEmpty() ? QString() : QStringLiteral("\n") + note);
  } else {
    m_session->start(request);
  }
  m_running = true;
  m_started = false;
  m_longestStallMs = 0.0;
  m_longestTickMs = 0.0;
  m_lastTickNs = 0;
  m_tickClock.start();
  m_feedTimer->start();
  return note;
}

void RunController::stop() {
  if (m_onProcesses)
    m_job->stop();
  else
    m_session->stop();
}

void RunController::pause() {
  if (!m_onProcesses) m_session->pause();
}

void RunController::togglePause() {
  if (!m_running || m_onProcesses) return;
  if (m_session->isPaused())
    m_session->resume();
  else
    m_session->pause();
}

void RunController::stepOnce() {
  if (m_running && !m_onProcesses) m_session->stepOnce();
}

void RunController::shutdown() {
  m_job->shutdown();
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
  // The run's started signal is queued, and the timer can fire first: a fast run may have
  // trained every epoch before the window sees it begin. Its points wait in the feed until the
  // window has begun the run's curves (else they would join the previous run's, or be moved
  // aside as an "earlier run" when it begins). The last drain, at the end, takes everything.
  if (m_running && !m_started) return;
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
