// Runs a sweep for the window: run_sweep on a worker thread (never the UI thread), its
// listener's hooks (called on oneTBB threads) queued as value copies and handed to the UI thread
// at most ~30 times a second, Stop as SweepControl's lock-free flag. The owner's destructor (or
// shutdown) stops the sweep and joins the thread. Lives on the UI thread.
#pragma once

#include <QObject>
#include <QVector>
#include <memory>

#include "core/run/sweep.h"

class QThread;
class QTimer;

namespace fitbench {

// One epoch of one trial, as the listener saw it.
struct TrialEpoch {
  int trial = 0;
  int execution = 0;
  int epoch = 0;  // 0-based
  Logs logs;
};

class SweepController : public QObject {
  Q_OBJECT
 public:
  // Shortest time between two hand-overs to the UI thread (about 30 per second).
  static constexpr int kDrainIntervalMs = 33;

  explicit SweepController(QObject* parent = nullptr);
  ~SweepController() override;

  bool isRunning() const { return m_thread != nullptr; }
  // Runs every trial of `plan` on `jobs` cores; ignored while a sweep runs.
  void start(std::shared_ptr<const SweepPlan> plan, int jobs);
  // Running trials end after their current batch, pending ones never start.
  void stop();
  // Stops the sweep and waits for its thread (the window is closing).
  void shutdown();

 signals:
  void trialBegan(int trial);
  void trialEpochs(const QVector<fitbench::TrialEpoch>& epochs);
  void trialEnded(const fitbench::TrialResult& result);
  // The sweep ended (stopped or not): every trial's result.
  void finished(std::shared_ptr<fitbench::SweepResult> result);
  void failed(const QString& message);

 private:
  class Listener;
  void drain();
  void onThreadFinished();

  std::shared_ptr<Listener> m_listener;
  std::shared_ptr<SweepControl> m_control;
  std::shared_ptr<SweepResult> m_result;
  std::shared_ptr<QString> m_error;
  QThread* m_thread = nullptr;
  QTimer* m_drainTimer = nullptr;
};

}  // namespace fitbench

Q_DECLARE_METATYPE(fitbench::TrialEpoch)
