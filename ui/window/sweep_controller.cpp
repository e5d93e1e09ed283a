#include "ui/window/sweep_controller.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>
#include <QTimer>
#include <atomic>
#include <mutex>
#include <variant>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/base/error.h"

namespace fitbench {

// Called on oneTBB threads: keeps each event as a value copy under a lock and asks the UI thread,
// once per batch of events, to come and take them.
class SweepController::Listener : public SweepListener {
 public:
  using Event = std::variant<int, TrialEpoch, TrialResult>;  // begin, epoch, end

  explicit Listener(SweepController* owner) : m_owner(owner) {}

  void on_trial_begin(const SweepTrial& trial) override { push(trial.number); }
  void on_trial_epoch(const SweepTrial& trial, int execution, int epoch,
                      const Logs& logs) override {
    push(TrialEpoch{trial.number, execution, epoch, logs});
  }
  void on_trial_end(const SweepTrial&, const TrialResult& result) override { push(result); }

  std::vector<Event> take() {
    m_posted.store(false, std::memory_order_release);
    std::lock_guard<std::mutex> lock(m_mutex);
    return std::exchange(m_events, {});
  }

 private:
  void push(Event event) {
    {
      std::lock_guard<std::mutex> lock(m_mutex);
      m_events.push_back(std::move(event));
    }
    if (m_posted.exchange(true, std::memory_order_acq_rel)) return;
    // The owner outlives the thread (its destructor joins it), so the pointer is valid here.
    QMetaObject::invokeMethod(
        m_owner,
        [owner = m_owner] {
          if (!owner->m_drainTimer->isActive()) owner->m_drainTimer->start();
        },
        Qt::QueuedConnection);
  }

  SweepController* m_owner;
  std::mutex m_mutex;
  std::vector<Event> m_events;
  std::atomic<bool> m_posted{false};
};

SweepController::SweepController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<fitbench::TrialEpoch>();
  m_drainTimer = new QTimer(this);
  m_drainTimer->setSingleShot(true);
  m_drainTimer->setInterval(kDrainIntervalMs);
  connect(m_drainTimer, &QTimer::timeout, this, &SweepController::drain);
}

SweepController::~SweepController() { shutdown(); }

void SweepController::start(std::shared_ptr<const SweepPlan> plan, int jobs) {
  if (m_thread) return;
  m_listener = std::make_shared<Listener>(this);
  m_control = std::make_shared<SweepControl>();
  m_result = std::make_shared<SweepResult>();
  m_error = std::make_shared<QString>();
  SweepOptions options;
  options.jobs = std::max(1, jobs);
  m_thread = QThread::create([plan, options, listener = m_listener, control = m_control,
                              result = m_result, error = m_error] {
#ifdef __linux__
    // As the training thread: the sweep yields to the UI thread when both want a core. Threads
    // created from this one inherit it (oneTBB's workers when this thread is the one that brings
    // them up, and so the trials' device threads); with the UI idle, trials get every core.
    setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
    try {
      *result = run_sweep(*plan, options, listener.get(), control.get());
    } catch (const InputError& e) {
      *error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      *error = QStringLiteral("The sweep failed: ") + QString::fromUtf8(e.what());
    }
  });
  m_thread->setObjectName(QStringLiteral("sweep"));
  connect(m_thread, &QThread::finished, this, &SweepController::onThreadFinished);
  m_thread->start();
}

void SweepController::stop() {
  if (m_control) m_control->request_stop();
}

void SweepController::shutdown() {
  if (!m_thread) return;
  stop();
  m_thread->wait();
  delete m_thread;
  m_thread = nullptr;
}

void SweepController::drain() {
  if (!m_listener) return;
  QVector<TrialEpoch> epochs;
  const auto flushEpochs = [&] {
    if (!epochs.isEmpty()) emit trialEpochs(std::exchange(epochs, {}));
  };
  // In order: a trial's begin before its epochs, its epochs before its end.
  for (auto& event : m_listener->take()) {
    if (auto* begin = std::get_if<int>(&event)) {
      flushEpochs();
      emit trialBegan(*begin);
    } else if (auto* epoch = std::get_if<TrialEpoch>(&event)) {
      epochs.push_back(std::move(*epoch));
    } else {
      flushEpochs();
      emit trialEnded(std::get<TrialResult>(event));
    }
  }
  flushEpochs();
}

void SweepController::onThreadFinished() {
  if (!m_thread) return;  // joined by shutdown
  m_thread->deleteLater();
  m_thread = nullptr;
  m_drainTimer->stop();
  drain();
  if (!m_error->isEmpty())
    emit failed(*m_error);
  else
    emit finished(m_result);
}

}  // namespace fitbench
