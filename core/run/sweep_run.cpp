// Running a sweep's trials on a oneTBB task arena (core/run/sweep.h).
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <sstream>

#include "core/base/statistics.h"
#include "core/base/tasks.h"
#include "core/python/random.h"
#include "core/run/sweep.h"

namespace fitbench {
namespace {

// Trials run on oneTBB's worker threads; Eigen keeps GEMM packing buffers on the stack up to 4 MiB
// (core/CMakeLists.txt), so they get the stack the CLI's training thread has, twice over.
constexpr size_t kTrialStackBytes = size_t{16} << 20;
constexpr std::chrono::milliseconds kPoll{50};

// The cores the trials share, taken in trial order: trial t takes its cores only after every
// trial before it took theirs, so a trial never waits on one that has not started (pruning waits
// on earlier trials).
class CoreSlots {
 public:
  explicit CoreSlots(int total) : free_(total) {}

  // False when the sweep stopped before the cores were free.
  bool acquire(int ticket, int cores, const SweepControl* control) {
    std::unique_lock lock(mutex_);
    // A stop request comes from a signal handler, which cannot notify: look every 50 ms.
    while (!(next_ == ticket && free_ >= cores) && !(control && control->stop_requested()))
      cv_.wait_for(lock, kPoll);
    const bool ok = next_ == ticket && free_ >= cores;
    if (ok) free_ -= cores;
    next_ = std::max(next_, ticket + 1);
    cv_.notify_all();
    return ok;
  }
  // A trial that will not run (its plan failed) passes its turn.
  void pass(int ticket) {
    std::unique_lock lock(mutex_);
    cv_.wait(lock, [&] { return next_ >= ticket; });
    next_ = std::max(next_, ticket + 1);
    cv_.notify_all();
  }
  void release(int cores) {
    std::lock_guard lock(mutex_);
    free_ += cores;
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  int free_;
  int next_ = 0;
};

// Each trial's objective per epoch (execution 0), for the pruning rule.
class PruningBoard {
 public:
  explicit PruningBoard(size_t trials) : rows_(trials) {}

  void report(int trial, double value) {
    std::lock_guard lock(mutex_);
    rows_[static_cast<size_t>(trial)].values.push_back(value);
    cv_.notify_all();
  }
  void end(int trial) {
    std::lock_guard lock(mutex_);
    rows_[static_cast<size_t>(trial)].ended = true;
    cv_.notify_all();
  }
  // Waits until every trial before `trial` reached epoch `epoch` (0-based count) or ended, and
  // returns the values they had there.
  std::vector<double> earlier_values(int trial, size_t epoch, const SweepControl* control) {
    std::unique_lock lock(mutex_);
    const auto done = [&] {
      if (control && control->stop_requested()) return true;
      for (int j = 0; j < trial; ++j) {
        const Row& row = rows_[static_cast<size_t>(j)];
        if (row.values.size() <= epoch && !row.ended) return false;
      }
      return true;
    };
    while (!done()) cv_.wait_for(lock, kPoll);
    std::vector<double> values;
    for (int j = 0; j < trial; ++j) {
      const Row& row = rows_[static_cast<size_t>(j)];
      if (row.values.size() > epoch && std::isfinite(row.values[epoch]))
        values.push_back(row.values[epoch]);
    }
    return values;
  }

 private:
  struct Row {
    std::vector<double> values;
    bool ended = false;
  };
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<Row> rows_;
};

bool better(double a, double b, bool maximize) { return maximize ? a > b : a < b; }

// Watches one execution of a trial: reports its epochs, applies the pruning rule (execution 0)
// and passes a sweep's stop request to the run.
class TrialWatcher : public RunListener {
 public:
  TrialWatcher(const SweepPlan& plan, const SweepTrial& trial, int execution, PruningBoard& board,
               SweepListener* listener, const SweepControl* control, TrainingControl& run_control)
      : plan_(plan),
        trial_(trial),
        execution_(execution),
        board_(board),
        listener_(listener),
        control_(control),
        run_control_(run_control) {}

  void on_train_batch_end(int /*batch*/, const Logs& /*logs*/) override {
    if (control_ && control_->stop_requested()) run_control_.request_stop();
  }

  void on_epoch_end(int epoch, Logs& logs) override {
    if (listener_) listener_->on_trial_epoch(trial_, execution_, epoch, logs);
    if (execution_ != 0) return;
    const SweepObjective& objective = plan_.spec.objective;
    const auto it = logs.find(objective.name);
    const double value = it == logs.end() ? std::numeric_limits<double>::quiet_NaN() : it->second;
    board_.report(trial_.number, value);
    ++epochs_;
    if (std::isfinite(value) && (!std::isfinite(best_) || better(value, best_, objective.maximize)))
      best_ = value;
    const auto& pruning = plan_.spec.pruning;
    if (!pruning || epochs_ < pruning->min_epochs) return;
    const std::vector<double> earlier =
        board_.earlier_values(trial_.number, static_cast<size_t>(epochs_ - 1), control_);
    if (static_cast<int>(earlier.size()) < pruning->startup_trials) return;
    const double m = median(earlier);
    if (!std::isfinite(best_) || better(m, best_, objective.maximize)) {
      pruned_ = true;
      model_->stop_training = true;
    }
  }

  bool pruned() const { return pruned_; }

 private:
  const SweepPlan& plan_;
  const SweepTrial& trial_;
  int execution_;
  PruningBoard& board_;
  SweepListener* listener_;
  const SweepControl* control_;
  TrainingControl& run_control_;
  int epochs_ = 0;
  double best_ = std::numeric_limits<double>::quiet_NaN();
  bool pruned_ = false;
};

// The run of one execution: the trial's overrides, its seed + execution, silent, and
// ModelCheckpoint / CSVLogger writing inside the trial's folder (or not at all without one).
RunPlan plan_execution(const SweepPlan& plan, const SweepTrial& trial, int execution,
                       const std::filesystem::path& trial_dir) {
  ExperimentSpec spec = trial.spec;
  std::vector<CallbackSpec> kept;
  for (CallbackSpec cb : spec.fit.callbacks) {
    if (!cb.filepath.empty()) {
      if (trial_dir.empty()) continue;
      cb.filepath = (trial_dir / std::filesystem::path(cb.filepath).filename()).string();
    }
    kept.push_back(std::move(cb));
  }
  spec.fit.callbacks = std::move(kept);
  RunOverrides o = trial.overrides;
  o.verbose = 0;
  o.seed = spec.seed.value_or(0) + static_cast<uint64_t>(execution);
  PlanContext context;
  context.base_dir = plan.context.base_dir;
  return plan_run(std::move(spec), o, context);
}

std::string trial_place(const SweepPlan& plan, const SweepTrial& trial) {
  return "trial " + std::to_string(trial.number) + " (" + describe_values(plan.spec, trial) + ")";
}

std::filesystem::path trial_dir_of(const std::filesystem::path& out_dir, int number) {
  if (out_dir.empty()) return {};
  char name[32];
  std::snprintf(name, sizeof name, "trial_%03d", number);
  return out_dir / name;
}

}  // namespace

std::string status_name(TrialResult::Status status) {
  switch (status) {
    case TrialResult::Status::kPending:
      return "pending";
    case TrialResult::Status::kRunning:
      return "running";
    case TrialResult::Status::kCompleted:
      return "completed";
    case TrialResult::Status::kPruned:
      return "pruned";
    case TrialResult::Status::kStopped:
      return "stopped";
    case TrialResult::Status::kFailed:
      return "failed";
  }
  return "";
}

std::vector<int> SweepResult::ranking() const {
  std::vector<int> order;
  for (const TrialResult& t : trials) order.push_back(t.number);
  const auto group = [&](const TrialResult& t) {
    switch (t.status) {
      case TrialResult::Status::kCompleted:
        return 0;
      case TrialResult::Status::kPruned:
        return 1;
      case TrialResult::Status::kStopped:
        return 2;
      case TrialResult::Status::kFailed:
        return 3;
      default:
        return 4;
    }
  };
  // The direction is not kept here: objectives are stored so that lower sorts first.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const TrialResult& x = trials[static_cast<size_t>(a)];
    const TrialResult& y = trials[static_cast<size_t>(b)];
    if (group(x) != group(y)) return group(x) < group(y);
    if (group(x) > 1) return false;
    const double kx = maximize ? -x.objective : x.objective;
    const double ky = maximize ? -y.objective : y.objective;
    if (std::isnan(kx) || std::isnan(ky)) return !std::isnan(kx) && std::isnan(ky);
    return kx < ky;
  });
  return order;
}

SweepResult run_sweep(const SweepPlan& plan, const SweepOptions& options, SweepListener* listener,
                      SweepControl* control) {
  const auto start = std::chrono::steady_clock::now();
  const int jobs = std::max(1, options.jobs);
  const size_t n = plan.trials.size();
  SweepResult result;
  result.maximize = plan.spec.objective.maximize;
  result.trials.resize(n);
  for (size_t t = 0; t < n; ++t) result.trials[t].number = plan.trials[t].number;
  if (!options.out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(options.out_dir, ec);
    if (ec || !std::filesystem::is_directory(options.out_dir))
      throw InputError(options.out_dir.string(), "cannot be made a folder: " + ec.message());
  }

  tbb::global_control stack(tbb::global_control::thread_stack_size, kTrialStackBytes);
  tbb::global_control parallelism(tbb::global_control::max_allowed_parallelism,
                                  static_cast<size_t>(jobs));
  tbb::task_arena arena(jobs);

  // Every trial's plan first: a problem in any of them (a mesh the device count cannot make) is
  // said before anything runs.
  {
    std::mutex mutex;
    std::vector<std::pair<int, PlanError>> failures;
    run_tasks(arena, n, [&](size_t t) {
      RandomScope scope;
      try {
        (void)plan_execution(plan, plan.trials[t], 0, {});
      } catch (const PlanError& e) {
        std::lock_guard lock(mutex);
        failures.emplace_back(static_cast<int>(t), e);
      } catch (const InputError& e) {
        std::lock_guard lock(mutex);
        failures.emplace_back(static_cast<int>(t), PlanError({{e.place(), e.message()}}));
      }
    });
    if (!failures.empty()) {
      std::sort(failures.begin(), failures.end(),
                [](const auto& a, const auto& b) { return a.first < b.first; });
      std::vector<PlanProblem> problems;
      const std::string prefix = plan.context.source.empty() ? "" : plan.context.source + ": ";
      for (const auto& [t, error] : failures)
        for (const PlanProblem& p : error.problems())
          problems.push_back({prefix + trial_place(plan, plan.trials[static_cast<size_t>(t)]) +
                                  (p.place.empty() ? "" : ": " + p.place),
                              p.sentence});
      throw PlanError(std::move(problems));
    }
  }

  // A failure outside a trial's training (its folder or files cannot be written) ends the sweep:
  // the running trials stop, and run_sweep throws it once every worker is out.
  SweepControl own_control;
  SweepControl* stop = control ? control : &own_control;
  std::mutex error_mutex;
  std::exception_ptr error;

  CoreSlots slots(jobs);
  PruningBoard board(n);
  std::mutex results_mutex;  // result.trials and the tables in out_dir
  std::atomic<size_t> next{0};

  // One trial: its executions, its result and files. `turn` says whether it passed its turn at
  // the cores or holds `cores` of them, for the caller to give back whatever happens.
  enum class Turn { kWaiting, kPassed, kHolding };
  const auto run_trial = [&](size_t t, Turn& turn, int& cores) {
    const SweepTrial& trial = plan.trials[t];
    const int ticket = static_cast<int>(t);
    TrialResult r;
    r.number = trial.number;
    const std::filesystem::path dir = trial_dir_of(options.out_dir, trial.number);
    if (!dir.empty()) {
      std::error_code ec;
      std::filesystem::create_directories(dir, ec);
      if (ec || !std::filesystem::is_directory(dir))
        throw InputError(dir.string(), "cannot be made a folder for the trial's files" +
                                           (ec ? ": " + ec.message() : std::string()));
    }
    RandomScope scope;
    std::optional<RunPlan> first;
    try {
      first.emplace(plan_execution(plan, trial, 0, dir));
    } catch (const InputError& e) {
      r.status = TrialResult::Status::kFailed;
      r.error = e.what();
    }
    cores = !first ? 0 : options.oversubscribe ? 1 : std::min(jobs, std::max(1, first->devices));
    if (!first) {
      slots.pass(ticket);
      turn = Turn::kPassed;
    } else if (slots.acquire(ticket, cores, stop)) {
      turn = Turn::kHolding;
    } else {
      turn = Turn::kPassed;  // the sweep stopped before its turn: it never starts
    }
    if (turn == Turn::kHolding && stop->stop_requested()) {
      // It won its cores as the stop came: it does not start either.
    } else if (turn == Turn::kHolding) {
      {
        std::lock_guard lock(results_mutex);
        result.trials[t].status = TrialResult::Status::kRunning;
      }
      // The experiment as execution 0 runs it: the values, the strategy and the seed applied,
      // its callbacks' files in the trial's folder, verbose as the file had it.
      r.experiment = experiment_to_json(first->spec);
      r.experiment["fit"]["verbose"] = trial.spec.fit.verbose;
      if (listener) listener->on_trial_begin(trial);
      r.status = TrialResult::Status::kCompleted;
      const auto trial_start = std::chrono::steady_clock::now();
      for (int e = 0; e < plan.spec.executions_per_trial; ++e) {
        if (stop->stop_requested()) {
          r.status = TrialResult::Status::kStopped;
          break;
        }
        try {
          RunPlan run = e == 0 ? std::move(*first) : plan_execution(plan, trial, e, dir);
          TrainingControl run_control;
          TrialWatcher watcher(plan, trial, e, board, listener, stop, run_control);
          std::ostringstream sink;
          RunIO io;
          io.out = &sink;
          io.warnings = &sink;
          io.control = &run_control;
          RunResult rr = execute_run(run, io, &watcher);
          const std::vector<double>* values = nullptr;
          if (auto it = rr.history.history.find(plan.spec.objective.name);
              it != rr.history.history.end())
            values = &it->second;
          double best = std::numeric_limits<double>::quiet_NaN();
          int best_epoch = -1;
          for (size_t k = 0; values && k < values->size(); ++k)
            if (std::isfinite((*values)[k]) &&
                (best_epoch < 0 || better((*values)[k], best, plan.spec.objective.maximize))) {
              best = (*values)[k];
              best_epoch = static_cast<int>(k);
            }
          r.objectives.push_back(best);
          if (e == 0) {
            r.best_epoch = best_epoch;
            r.epochs_run = static_cast<int>(rr.history.epoch.size());
          }
          r.histories.push_back(std::move(rr.history));
          if (rr.stop_reason == "stopped") {
            r.status = TrialResult::Status::kStopped;
            break;
          }
          if (watcher.pruned()) {
            r.status = TrialResult::Status::kPruned;
            break;
          }
        } catch (const std::exception& ex) {
          r.status = TrialResult::Status::kFailed;
          r.error = ex.what();
          break;
        }
        if (e == 0) board.end(trial.number);
      }
      r.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - trial_start).count();
    }
    board.end(trial.number);
    double sum = 0;
    int finite = 0;
    for (double v : r.objectives)
      if (std::isfinite(v)) sum += v, ++finite;
    r.objective = finite ? sum / finite : std::numeric_limits<double>::quiet_NaN();
    double ss = 0;
    for (double v : r.objectives)
      if (std::isfinite(v)) ss += (v - r.objective) * (v - r.objective);
    r.spread = finite > 1 ? std::sqrt(ss / (finite - 1)) : 0.0;
    {
      std::lock_guard lock(results_mutex);
      result.trials[t] = r;
      if (!options.out_dir.empty()) {
        if (!r.histories.empty()) write_trial_files(plan, trial, r, options.out_dir);
        write_trials_tables(plan, result.trials, options.out_dir);
      }
    }
    if (listener) listener->on_trial_end(trial, r);
  };

  const auto worker = [&] {
    for (;;) {
      const size_t t = next.fetch_add(1);
      if (t >= n) return;
      Turn turn = Turn::kWaiting;
      int cores = 0;
      try {
        run_trial(t, turn, cores);
      } catch (...) {
        {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
        stop->request_stop();
        board.end(static_cast<int>(t));
        if (turn == Turn::kWaiting) slots.pass(static_cast<int>(t));
      }
      // Its cores go to the next trial once its end is told (a listener never sees more trials
      // running than there are cores).
      if (turn == Turn::kHolding) slots.release(cores);
    }
  };
  run_tasks(arena, std::min(n, static_cast<size_t>(jobs)), [&](size_t) { worker(); });
  if (error) std::rethrow_exception(error);
  result.stopped = control && control->stop_requested();
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace fitbench
