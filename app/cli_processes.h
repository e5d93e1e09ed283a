// fitbench-cli run on several processes (mpirun, Keras's KERAS_DISTRIBUTION_* settings): finding
// the layout, starting Open MPI when the build has it (saying what to install when it does not),
// the start checks every rank agrees on, and ending the job. One per run, on the main thread.
#pragma once

#include <QStringList>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/distribution/layout/device_plan.h"
#include "core/distribution/processes/process_group.h"
#include "core/distribution/trace/trace.h"
#include "core/training/callback.h"
#include "core/training/training_control.h"

namespace fitbench::cli {

// Whether this fitbench-cli was built with Open MPI.
bool have_mpi();
// The sentence that says how to get multi-process runs in a build without MPI.
std::string install_mpi_hint();

// SIGUSR1 asks a run to stop after its current batch and write its files, as the window's Stop
// and model.stop_training do (mpirun passes SIGUSR1 on to every process). Installed before
// anything else a run does, so that an early signal is not the default action's end.
void catch_stop_signal();
// Whether SIGUSR1 came.
bool stop_signalled();

// Ends MPI if a ProcessRun started it (MPI_Finalize, where every rank meets): called by main
// after the command has said everything, so that no rank leaves before rank 0 has spoken.
void finish_processes();

class ProcessRun;

// Stops fit() through `control` after the batch in which SIGUSR1 came: on one process at once;
// across processes after the first batch end at which any process has seen it, which all
// processes agree on (a 4-byte all-gather per batch), so every process stops at the same step.
class StopOnSignal : public Callback {
 public:
  StopOnSignal(const ProcessRun& processes, TrainingControl& control)
      : processes_(processes), control_(control) {}
  void on_train_batch_end(int batch, const Logs& logs) override;

 private:
  const ProcessRun& processes_;
  TrainingControl& control_;
};

class ProcessRun {
 public:
  // Reads the layout from the environment; with more than one process, starts MPI and makes it
  // the process group runs use. Throws InputError (the variable) for a bad layout, and
  // InputError naming the settings when this build has no MPI.
  explicit ProcessRun(const ProcessLayout& layout);
  // Stops being the runs' process group; MPI itself ends in finish_processes().
  ~ProcessRun();

  bool multi() const { return layout_.multi(); }
  int rank() const { return layout_.rank; }
  int size() const { return layout_.size; }
  const ProcessLayout& layout() const { return layout_; }
  bool owns_output() const { return layout_.rank == 0; }

  // The run's device count and each process's share: --devices-per-process K, else --devices N
  // (divided by the processes), else the experiment's devices.count (when it divides), else 1
  // per process. Throws InputError at the option that cannot be spread evenly.
  int device_count(std::optional<int> per_process, std::optional<int> devices,
                   std::optional<int> experiment_count);

  // Every process checks the others run the same build, experiment and options; a mismatch
  // throws InputError("", sentence) on every process (said by rank 0 only).
  void check_same(const std::string& experiment_file, const QStringList& args);

  // After each process planned the run, `error` being this process's problem ("" if none): what
  // to do. A process whose plan failed says its problem, with its rank, unless every process
  // failed alike: then rank 0 alone says it, as one process would.
  struct PlanOutcome {
    bool all_planned = true;
    bool say_mine = false;  // this process says its error
    std::string prefix;     // before each of its lines: "rank 1: " or ""
    std::string others;     // what rank 0 says when only others failed
  };
  PlanOutcome plan_outcome(const std::string& error);

  // Notes that the run ended and its files are written (for what rank 0 says if mpirun ends it
  // now).
  void run_ended() const;

  // Every process's devices' usage, in device order (each process measured its own).
  void gather(std::vector<DeviceUsage>& usage) const;

  // The sentence --verbose prints on stderr: which devices and rows this process holds. A batch
  // is split into `shards` (DataParallel: one per device, every process computing the same
  // number; ModelParallel: one per mesh row, `mesh` saying which rows this process's devices are
  // in); 0 without a distribution (every process trains the whole run).
  std::string placement(int devices, int shards, const MeshPlacement* mesh, int batch_size,
                        long long rows) const;

  // A warning when this process may run on fewer CPUs than it hosts devices (mpirun binds each
  // process to one core by default when there are at most 2 processes), else "".
  std::string crowding(int devices) const;

  // Whether any process says `mine` (every process calls it at the same point).
  bool any(bool mine) const;

  // Ends every process now with `code` after this one said why (a failure mid-run).
  [[noreturn]] void abort(int code) const;

 private:
  ProcessLayout layout_;
  std::shared_ptr<ProcessGroup> group_;
  mutable std::vector<int32_t> flags_;  // any()'s gather
};

}  // namespace fitbench::cli
