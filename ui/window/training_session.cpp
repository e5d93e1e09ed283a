#include "ui/window/training_session.h"

namespace fitbench {

TrainingSession::TrainingSession(QObject* parent)
    : QObject(parent),
      m_feed(std::make_shared<LiveFeed>()),
      m_control(std::make_shared<TrainingControl>()) {
  qRegisterMetaType<std::shared_ptr<RunResult>>();
  qRegisterMetaType<std::shared_ptr<const CapacityInput>>();
  m_thread.setObjectName(QStringLiteral("fitbench-training"));
  // fit() keeps Eigen's GEMM packing buffers on its stack (EIGEN_STACK_ALLOCATION_LIMIT).
  m_thread.setStackSize(16u << 20);
  m_worker = new TrainingWorker(m_feed, m_control);
  m_worker->moveToThread(&m_thread);
  connectSignals();
  m_thread.start();
}

TrainingSession::~TrainingSession() { shutdown(); }

void TrainingSession::connectSignals() {
  connect(&m_thread, &QThread::finished, m_worker, &QObject::deleteLater);
  connect(m_worker, &TrainingWorker::started, this, &TrainingSession::started);
  connect(m_worker, &TrainingWorker::finished, this, [this](std::shared_ptr<RunResult> result) {
    m_running = false;
    m_control->reset();
    emit pausedChanged(false);
    emit runningChanged(false);
    emit finished(result);
  });
  connect(m_worker, &TrainingWorker::errorOccurred, this, [this](const QString& message) {
    m_running = false;
    m_control->reset();
    emit pausedChanged(false);
    emit runningChanged(false);
    emit errorOccurred(message);
  });
}

void TrainingSession::start(const RunRequest& request) {
  if (m_running || !m_thread.isRunning()) return;
  m_control->reset();
  // Held before the worker can see the control: a pause sent after the queued run began would
  // race fit(), which may run many batches (a small model, all of them) before it arrives.
  if (request.startPaused) m_control->step_once();
  m_running = true;
  emit runningChanged(true);
  if (request.startPaused) emit pausedChanged(true);
  TrainingWorker* worker = m_worker;
  QMetaObject::invokeMethod(
      worker, [worker, request] { worker->run(request); }, Qt::QueuedConnection);
}

void TrainingSession::stop() {
  if (!m_running) return;
  m_control->request_stop();
}

void TrainingSession::pause() {
  if (!m_running || m_control->paused()) return;
  m_control->pause();
  emit pausedChanged(true);
}

void TrainingSession::resume() {
  if (!m_control->paused()) return;
  m_control->resume();
  emit pausedChanged(false);
}

void TrainingSession::stepOnce() {
  if (m_running && m_control->paused()) m_control->step_once();
}

void TrainingSession::shutdown() {
  if (!m_thread.isRunning()) return;
  m_control->request_stop();
  m_thread.quit();
  m_thread.wait();
  m_running = false;
}

}  // namespace fitbench
