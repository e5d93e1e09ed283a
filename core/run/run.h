// Executes a RunPlan: prints what the Keras script prints before training (Devices, Distribution),
// runs fit() with the plan's model and data, reports to a listener (batch and epoch logs, step
// traces, begin and end) and writes the plan's output files (history, trace, model). The one way
// the CLI, the window, bench/ and sweeps train an experiment. Runs on the calling thread; the
// listener's hooks are called there too.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "core/distribution/trace/trace.h"
#include "core/io/model_file.h"
#include "core/run/run_plan.h"
#include "core/training/callback.h"
#include "core/training/history.h"
#include "core/training/training_control.h"

namespace fitbench {

// What a run ended with.
struct RunResult {
  History history;
  // "" (all epochs), "stopped" (TrainingControl::stop), "early_stopping", "invalid_loss"
  // (TerminateOnNaN).
  std::string stop_reason;
  ModelFile model;  // config, compile options and trained weights
  // The epoch (0-based) whose weights EarlyStopping's restore_best_weights put back, and the
  // value it watched; none when the weights are the last epoch's.
  std::optional<int> restored_epoch;
  std::string restored_monitor;
  // A distributed run's per-device busy / communication / idle split over every step (the same
  // figures the CLI prints and the window's timeline totals); empty on one device.
  std::vector<DeviceUsage> usage;
  size_t steps_traced = 0;  // steps the trace file holds (at most kMaxTraceSteps)
  size_t steps_seen = 0;    // distributed steps run
  double seconds = 0.0;     // wall time of fit()
  // Every trained weight is a finite number; false after a run that diverged, whose model file
  // is then not written (a notice says so) and which the front ends report as a failure.
  bool weights_finite = true;
  // Said after the run: the trace file holding only the first steps; a model file not written
  // because the run diverged.
  std::vector<PlanNotice> notices;
};

// A front end's view of a run. Keras's Callback hooks bring the batch and epoch logs and, for a
// distributed run, every step's trace; these two bring the run's state changes.
class RunListener : public Callback {
 public:
  // After the plan's "Devices:" lines are printed, before fit() starts.
  virtual void on_run_begin(const RunPlan& /*plan*/) {}
  // After fit() ended and the output files are written.
  virtual void on_run_end(const RunResult& /*result*/) {}
};

struct RunIO {
  std::ostream* out = nullptr;       // Keras's progress text and the Devices lines; null: std::cout
  std::ostream* warnings = nullptr;  // fit()'s warnings (Sequential::warn); null: std::cerr
  bool interactive = false;          // `out` is a terminal: verbose=1 draws the live bar
  TrainingControl* control = nullptr;  // stop / pause / step from another thread
  std::vector<Callback*> callbacks;    // more callbacks after the listener (not owned)
  // Whether this run writes files: the plan's history, trace and model files and the
  // experiment's ModelCheckpoint and CSVLogger files. False on every process of a multi-process
  // run but the first, which owns the output.
  bool write_files = true;
};

// Trains the plan and writes its output files. Throws InputError (named with the plan's source)
// for a callback's bad configuration or an output that cannot be written; a run that TerminateOnNaN
// stopped still returns (stop_reason "invalid_loss"), its model file left unwritten when its
// weights are not numbers.
RunResult execute_run(RunPlan& plan, const RunIO& io, RunListener* listener = nullptr);

}  // namespace fitbench
