// A run on several processes for the main window (Devices tab, Processes > 1): the experiment as
// the panels hold it is written to a temporary file and run by
//   mpirun --oversubscribe --bind-to none -np P fitbench-cli run FILE --events - --devices N ...
// as a child process. Its events (docs/events.md) feed the same LiveFeed a threaded run fills,
// through the same FeedCallback, so the charts, the log and the rehearsal views follow it live;
// the History is rebuilt from its epoch events and the model read from the file rank 0 writes.
// Stop sends mpirun SIGUSR1 (every rank stops after the same batch and rank 0 writes its files);
// Stop again ends the job at once (SIGTERM). The QProcess and the parsing live on the job's own
// thread, so a fast stream of events never stalls the window. The object itself: UI thread.
#pragma once

#include <QObject>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <memory>

#include "ui/window/training_worker.h"

namespace fitbench {

// Where mpirun and fitbench-cli are, and whether runs on several processes can start here.
struct ProcessLauncher {
  QString mpirun;       // its path; "" when not found
  QString cli;          // fitbench-cli's path; "" when not found
  QString unavailable;  // why runs on several processes cannot start ("" when they can)

  // mpirun on PATH; fitbench-cli beside the window's executable, else where the build put it,
  // else on PATH; and a build of the window with Open MPI.
  static ProcessLauncher find();
};

class ProcessWorker;

class ProcessJob : public QObject {
  Q_OBJECT
 public:
  ProcessJob(std::shared_ptr<LiveFeed> feed, QObject* parent = nullptr);
  ~ProcessJob() override;

  bool isRunning() const { return m_running; }
  // Starts `request` on `processes` processes (request.spec.devices.count devices in all).
  // Returns the command line it runs, for the log. Ignored while a job runs.
  QString start(const RunRequest& request, int processes);
  // First: SIGUSR1 to mpirun, a stop after the current batch with the files written. Again: the
  // job ends at once.
  void stop();
  // Ends a running job and joins the thread (the window is closing).
  void shutdown();

 signals:
  void started(int devices, QStringList deviceNames, QString distribution,
               std::shared_ptr<const fitbench::CapacityInput> model);
  void finished(std::shared_ptr<fitbench::RunResult> result);
  void errorOccurred(QString message);

 private:
  std::shared_ptr<LiveFeed> m_feed;
  std::shared_ptr<std::atomic<qint64>> m_pid;  // mpirun's, 0 when none
  std::shared_ptr<TrainingControl> m_control;  // stop requested: the feed sends every point
  QThread m_thread;
  ProcessWorker* m_worker = nullptr;  // lives on m_thread
  bool m_running = false;
  int m_stops = 0;  // Stop presses during this job
};

}  // namespace fitbench
