// The training worker: runs one experiment's fit() on its own QThread, owned by TrainingSession.
// Live values (batch and epoch logs, log text, progress) go into a mutex-guarded LiveFeed that the
// UI drains on its own timer, so a fast model never floods the event loop; start, finish and
// errors are queued signals. Stop / pause / step are TrainingControl calls, safe from any thread.
#pragma once

#include <QObject>
#include <QPointF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "core/distribution/trace/trace.h"
#include "core/io/experiment.h"
#include "core/io/model_file.h"
#include "core/run/capacity.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "core/training/history.h"
#include "core/training/logs.h"
#include "core/training/training_control.h"
#include "ui/rehearsal/decision_grid.h"

namespace fitbench {

// One training run's request: the experiment as the panels hold it, the front end's overrides
// (the window's --history and --trace) and where its relative paths start from. The worker
// builds the RunPlan from it on the training thread.
struct RunRequest {
  ExperimentSpec spec;
  RunOverrides overrides;
  QString baseDir;
  QString experimentFile;  // the file the experiment came from ("" when unsaved)
  // Step pressed while idle: TrainingSession::start holds the run with one batch allowed.
  bool startPaused = false;
};

// What the UI thread takes from the feed on each tick (value copies).
struct FeedUpdate {
  QVector<QPointF> batchLoss;    // x = fractional epoch (epoch + (batch + 1) / steps), 0-based
  QVector<QPointF> batchMetric;  // the chart metric's running mean, same x
  // An epoch's values for the charts (the whole logs are in the run's History).
  struct Epoch {
    int epoch = 0;  // 0-based
    std::optional<double> loss, valLoss, metric, valMetric;
  };
  std::vector<Epoch> epochs;
  std::optional<DecisionGridResult> grid;  // the latest decision grid
  std::vector<StepTrace> traces;           // distributed steps since the last take, in order
  int64_t tracesDropped = 0;               // steps whose trace was not kept (very fast runs)
  QString text;                            // new log text
  // Wall time (seconds) of each train step since the last take, from a step's
  // on_train_batch_begin to its on_train_batch_end, for the run's first kTimedSteps steps.
  QVector<double> stepSeconds;
  int epoch = 0, epochs_total = 0, step = 0, steps = 0;
  double elapsed = 0.0;     // seconds since the run began
  int64_t stepsDone = 0;    // train steps so far in this run
  int64_t samplesDone = 0;  // training samples so far in this run
  bool any = false;
};

class LiveFeed {
 public:
  // Worker side.
  void reset(int epochsTotal, int steps);
  // A batch point; stepsSince / samplesSince: steps and samples trained since the last one.
  void addBatch(int epoch, int batch, int steps, double loss, std::optional<double> metric,
                int64_t stepsSince, int64_t samplesSince, double elapsed);
  void addEpoch(const FeedUpdate::Epoch& epoch);
  void addText(const std::string& text);
  void addStepSeconds(double seconds);
  static constexpr int64_t kTimedSteps = 4096;
  void setGrid(const DecisionGridResult& grid);
  // A distributed step's trace. Kept in a ring of kTraceRing entries whose storage is reused,
  // so steady-state training does not allocate here; past that, the oldest pending are dropped.
  void addTrace(const StepTrace& trace);
  static constexpr size_t kTraceRing = 4096;
  // UI side: everything since the last take.
  FeedUpdate take();

 private:
  std::mutex m_mutex;
  FeedUpdate m_pending;
  std::vector<StepTrace> m_traceRing;  // kTraceRing slots, reused
  size_t m_traceHead = 0;              // oldest pending slot
  size_t m_traceCount = 0;             // pending slots
  int64_t m_traceDropped = 0;
};

class TrainingWorker : public QObject {
  Q_OBJECT
 public:
  TrainingWorker(std::shared_ptr<LiveFeed> feed, std::shared_ptr<TrainingControl> control);

  // The log key the accuracy chart follows for this spec: the first compiled metric's name
  // as given ("accuracy", "mae", ...), or "" when the model has no metric.
  static QString chartMetricKey(const ExperimentSpec& spec);

 public:
  // Runs the whole fit() (blocking this worker's thread). Emits finished or errorOccurred.
  void run(const fitbench::RunRequest& request);

 signals:
  // `distribution`: the strategy's class name (strategies.h), "" on one device; `model`: the
  // plan as the step model takes it (the device timeline's modelled time).
  void started(int devices, QStringList deviceNames, QString distribution,
               std::shared_ptr<const fitbench::CapacityInput> model);
  void finished(std::shared_ptr<fitbench::RunResult> result);
  void errorOccurred(QString message);

 private:
  std::shared_ptr<LiveFeed> m_feed;
  std::shared_ptr<TrainingControl> m_control;
};

}  // namespace fitbench

Q_DECLARE_METATYPE(std::shared_ptr<fitbench::RunResult>)
Q_DECLARE_METATYPE(std::shared_ptr<const fitbench::CapacityInput>)
