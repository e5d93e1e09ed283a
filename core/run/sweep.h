// Hyperparameter sweeps: an experiment's `sweep` section (named as Keras Tuner names things),
// the trials it stands for, and running them concurrently on a oneTBB task arena. Every trial is
// an ordinary run plan (plan_run / execute_run) of its resolved experiment, so its History equals
// running that experiment alone, whatever the number of jobs (docs/sweeps.md).
//
// Threads: plan_sweep is a plain function. run_sweep blocks the calling thread until the sweep
// ends; trials run on oneTBB worker threads and the SweepListener's hooks are called there,
// concurrently, so a listener must be thread-safe. SweepControl may be used from any thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/run/run.h"
#include "core/run/run_plan.h"

namespace fitbench {

// One entry of sweep.parameters: a path into the experiment and a Keras Tuner hyperparameter.
struct SweepParameter {
  std::string path;  // "compile.optimizer.config.learning_rate", "model.layers[1].config.units"
  std::string class_name;                      // "Choice", "Int", "Float", "Boolean", "Fixed"
  std::vector<nlohmann::ordered_json> values;  // Choice: its values; Fixed: the one value
  double min_value = 0.0, max_value = 0.0;     // Int, Float
  std::optional<double> step;                  // Int (default 1 when linear), Float
  std::string sampling = "linear";             // "linear", "log", "reverse_log"

  // The values a grid walks (Choice, Boolean, Fixed, and Int/Float with a step), in order.
  std::vector<nlohmann::ordered_json> grid_values() const;
  // Keras Tuner's prob_to_value: the value for a uniform draw in [0, 1).
  nlohmann::ordered_json value_for(double u) const;
  // Plotted on a log axis (log or reverse_log sampling).
  bool log_scale() const { return sampling != "linear"; }
  // Numeric (Int, Float, or a Choice of numbers): plotted on a value axis, else by category.
  bool numeric() const;
};

struct SweepObjective {
  std::string name = "val_loss";  // a History key: "loss", "val_loss", "val_accuracy", ...
  bool maximize = false;          // direction "max"; "auto" decided from the name as Keras does
};

// Optuna's MedianPruner rule, made independent of timing: from epoch min_epochs on, a trial
// whose best objective so far is worse than the median of the values the trials numbered before
// it had at that epoch stops, once at least startup_trials of them reached it.
struct SweepPruning {
  int min_epochs = 1;
  int startup_trials = 2;
};

struct SweepSpec {
  std::string method = "random";  // "grid" or "random"
  std::optional<int> max_trials;  // random: required; grid: at most this many of the grid
  uint64_t seed = 0;              // random: np.random.default_rng(seed) draws the values
  SweepObjective objective;
  int executions_per_trial = 1;  // each with the experiment's seed + execution
  std::vector<SweepParameter> parameters;
  std::optional<SweepPruning> pruning;
};

// One trial: its parameters' values and the experiment they resolve to.
struct SweepTrial {
  int number = 0;                              // 0-based, in the order the sampler made them
  std::vector<nlohmann::ordered_json> values;  // one per SweepSpec::parameters entry
  nlohmann::ordered_json document;  // experiment_to_json(base) with the values applied (no
                                    // sweep section; execution 0's seed)
  ExperimentSpec spec;              // document, parsed
  RunOverrides overrides;           // distribution.strategy, which is an option, not a path
};

struct SweepPlan {
  SweepSpec spec;
  std::vector<SweepTrial> trials;
  PlanContext context;
  std::vector<PlanNotice> notices;  // a random space smaller than max_trials, and the like
};

// Parses `base.sweep` and makes every trial: grid in the parameters' order (the last varies
// fastest), or random with Keras Tuner's prob_to_value on np.random.default_rng(seed)'s random(),
// one draw per non-Fixed parameter, repeats redrawn (up to 100 times, as Keras Tuner does).
// Parameter paths are taken in experiment_to_json(base) (a model's layers[0] is its InputLayer,
// as in Keras's get_config), where a key missing from an object is looked for in its "config".
// Every trial's experiment is parsed. Throws PlanError with every problem found, each placed
// ("<source>: sweep.parameters.fit.batch_size.config.min_value", "<source>: trial 3 (units=0):
// model.config.layers[1].config.units").
SweepPlan plan_sweep(const ExperimentSpec& base, const PlanContext& context);

// A trial's values as "learning_rate=0.01, units=8" (each path's last name; numbers with four
// significant digits).
std::string describe_values(const SweepSpec& spec, const SweepTrial& trial);
// The last name of a parameter path: "learning_rate" for "compile.optimizer.config.learning_rate".
std::string parameter_label(const std::string& path);

// What a trial ended with.
struct TrialResult {
  int number = 0;
  enum class Status { kPending, kRunning, kCompleted, kPruned, kStopped, kFailed };
  Status status = Status::kPending;
  std::vector<double> objectives;  // each execution's best objective value
  double objective = 0.0;          // their mean (NaN when none)
  double spread = 0.0;             // their sample standard deviation (0 for one execution)
  int best_epoch = -1;             // execution 0's epoch (0-based) with the best value
  int epochs_run = 0;              // execution 0's
  double seconds = 0.0;            // wall time of every execution
  std::vector<History> histories;  // one per execution that ran
  std::string error;               // kFailed: the sentence
  // The experiment as execution 0 ran it (the values, a swept strategy and the seed applied;
  // null when it never started): trial_NNN/experiment.json, and what the window opens.
  nlohmann::ordered_json experiment;

  bool has_objective() const { return !objectives.empty(); }
};
std::string status_name(TrialResult::Status status);  // "completed", "pruned", ...

// Hooks from the trials' threads (concurrently: implementations must be thread-safe).
class SweepListener {
 public:
  virtual ~SweepListener() = default;
  virtual void on_trial_begin(const SweepTrial& /*trial*/) {}
  // Execution `execution`'s epoch ended with `logs` (the History's keys).
  virtual void on_trial_epoch(const SweepTrial& /*trial*/, int /*execution*/, int /*epoch*/,
                              const Logs& /*logs*/) {}
  virtual void on_trial_end(const SweepTrial& /*trial*/, const TrialResult& /*result*/) {}
};

struct SweepOptions {
  // Cores the trials share: a trial of d devices takes min(d, jobs) of them (1 with
  // oversubscribe), so jobs 2 runs two 1-device trials at once or one 2-device trial.
  int jobs = 1;
  bool oversubscribe = false;
  // Where each trial's experiment and History and trials.csv / trials.json go ("" for nowhere).
  // Written as each trial ends, so a stopped sweep keeps what finished.
  std::filesystem::path out_dir;
};

// Stops a running sweep from any thread (a signal handler included: request_stop is lock-free):
// running trials end after their current batch (status stopped), pending ones never start (and
// stay pending).
class SweepControl {
 public:
  void request_stop() { stop_.store(true, std::memory_order_release); }
  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }

 private:
  std::atomic<bool> stop_{false};
};

struct SweepResult {
  std::vector<TrialResult> trials;  // by trial number
  double seconds = 0.0;
  bool stopped = false;
  bool maximize = false;  // the objective's direction
  // Trials sorted for the table: completed by objective (best first), then pruned by objective,
  // then stopped, failed and pending, each by number.
  std::vector<int> ranking() const;
};

// Runs every trial of `plan`. A trial whose plan or run fails is marked failed with its sentence
// and the sweep goes on. Throws InputError only for an out_dir that cannot be written.
SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& options,
                      SweepListener* listener = nullptr, SweepControl* control = nullptr);

// The files of out_dir (docs/sweeps.md): trial_NNN/experiment.json, trial_NNN/history.json
// (history_E.json for execution E > 0), trials.csv and trials.json. Exposed for the window's
// "Export" of a sweep; run_sweep writes them itself.
void write_trial_files(const SweepPlan& plan, const SweepTrial& trial, const TrialResult& result,
                       const std::filesystem::path& out_dir);
void write_trials_tables(const SweepPlan& plan, const std::vector<TrialResult>& results,
                         const std::filesystem::path& out_dir);
// The trials as the trials.json document (a list of objects) and trials.csv text.
nlohmann::ordered_json trials_json(const SweepPlan& plan, const std::vector<TrialResult>& results);
std::string trials_csv(const SweepPlan& plan, const std::vector<TrialResult>& results);

}  // namespace fitbench
