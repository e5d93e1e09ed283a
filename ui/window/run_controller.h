// The window's runs as a controller: owns the TrainingSession (the training thread) and the
// feed timer, turns the window's experiment into a RunRequest (with the window's --history and
// --trace files), hands each tick's FeedUpdate to the window, and keeps what the last run ended
// with and how the UI thread kept up. The window draws; this decides when. UI thread only.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QStringList>
#include <memory>

#include "ui/window/training_worker.h"

class QTimer;

namespace fitbench {

class ProcessJob;
class TrainingSession;

class RunController : public QObject {
  Q_OBJECT
 public:
  explicit RunController(QObject* parent = nullptr);
  ~RunController() override;

  TrainingSession* session() const { return m_session; }
  bool isRunning() const { return m_running; }
  bool isPaused() const;

  // Files every run writes when it ends, as fitbench-cli's --history and --trace ("" for none).
  void setOutputs(const QString& historyFile, const QString& traceFile);
  // Starts a run of `spec` on `devices` devices, its relative paths taken from the folder of
  // `experimentFile` (the working folder when it is ""). Returns a note for the log ("" when
  // none): a --trace file that this one-device run does not write. Ignored while a run runs.
  // `held`: the run starts paused with one batch allowed (Step from idle), so it trains exactly
  // one batch and holds, however fast the model.
  // `processes` > 1: the run is a job of that many processes started with mpirun (ProcessJob;
  // no pause or step), and the note is its command line.
  QString start(ExperimentSpec spec, const QString& experimentFile, int devices, bool held = false,
                int processes = 1);
  // Whether the run that runs is a job on several processes.
  bool onProcesses() const { return m_running && m_onProcesses; }
  void stop();
  void pause();
  void togglePause();
  // While running and paused: one more batch. Idle: nothing (the window starts a held run).
  void stepOnce();
  // Stops a run and joins the training thread (the window is closing).
  void shutdown();

  // What the last run that ended returned; null before one, and after forget().
  const std::shared_ptr<RunResult>& lastResult() const { return m_lastResult; }
  void forget() { m_lastResult.reset(); }
  // The UI thread's longest gap between two feed ticks during the last run (ms), and the
  // longest time one tick's own work (the window's drawing) took (ms).
  double longestStallMs() const { return m_longestStallMs; }
  double longestTickMs() const { return m_longestTickMs; }

 signals:
  void started(int devices, QStringList deviceNames, QString distribution,
               std::shared_ptr<const fitbench::CapacityInput> model);
  // Every ~33 ms while a run has news, and once more when it ends (before finished / failed).
  void tick(const fitbench::FeedUpdate& update);
  void finished(std::shared_ptr<fitbench::RunResult> result);
  void failed(QString message);
  void pausedChanged(bool paused);

 private:
  void connectSignals();
  void drain();
  void end();

  TrainingSession* m_session = nullptr;
  ProcessJob* m_job = nullptr;
  bool m_onProcesses = false;
  QTimer* m_feedTimer = nullptr;
  QString m_historyFile, m_traceFile;
  std::shared_ptr<RunResult> m_lastResult;
  bool m_running = false;
  bool m_started = false;  // the running run's started signal has arrived
  double m_longestStallMs = 0.0;
  double m_longestTickMs = 0.0;
  qint64 m_lastTickNs = 0;
  QElapsedTimer m_tickClock;
};

}  // namespace fitbench
