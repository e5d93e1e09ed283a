// Owns the training thread and its TrainingWorker for the main window: starts runs, forwards
// stop / pause / step as direct thread-safe calls (never queued behind a running fit()), and
// stops and joins the thread when destroyed. Lives on the UI thread.
#pragma once

#include <QObject>
#include <QThread>
#include <memory>

#include "ui/window/training_worker.h"

namespace fitbench {

class TrainingSession : public QObject {
  Q_OBJECT
 public:
  explicit TrainingSession(QObject* parent = nullptr);
  ~TrainingSession() override;

  bool isRunning() const { return m_running; }
  bool isPaused() const { return m_control->paused(); }
  LiveFeed& feed() { return *m_feed; }
  const std::shared_ptr<LiveFeed>& sharedFeed() const { return m_feed; }
  TrainingWorker* worker() const { return m_worker; }

  // Starts a run (held after one batch when request.startPaused); ignored while one runs.
  void start(const RunRequest& request);
  void stop();
  void pause();
  void resume();
  // While paused: one more batch.
  void stepOnce();
  // The pace: at least `seconds` between two batches (0: real time), for this run and the next.
  void setMinStepInterval(double seconds) { m_control->set_min_step_interval(seconds); }
  // Stops a run and waits for the thread to finish it (used when the window closes).
  void shutdown();

 signals:
  void started(int devices, QStringList deviceNames, QString distribution,
               std::shared_ptr<const fitbench::CapacityInput> model);
  void finished(std::shared_ptr<fitbench::RunResult> result);
  void errorOccurred(QString message);
  void runningChanged(bool running);
  void pausedChanged(bool paused);

 private:
  void connectSignals();

  std::shared_ptr<LiveFeed> m_feed;
  std::shared_ptr<TrainingControl> m_control;
  QThread m_thread;
  TrainingWorker* m_worker = nullptr;  // lives on m_thread, deleted when it finishes
  bool m_running = false;
};

}  // namespace fitbench
