// A run plan: one experiment with a front end's overrides applied and every default decided once
// (device count, strategy, mesh, layout map, rehearsal knobs, output files), validated with every
// problem reported together, and the data and model it trains prepared. The CLI, the window,
// bench/ and sweeps all build runs this way (docs/architecture.md, "One path for a run").
// A plan owns its model: it is built and then used by one thread at a time.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/data/dataset.h"
#include "core/io/experiment.h"
#include "core/training/sequential.h"

namespace fitbench {

// What a front end changes in an experiment for one run. Errors about them are placed at the
// command-line option that gives them ("--mesh"), which the window's own flags share.
struct RunOverrides {
  std::optional<int> epochs;                   // --epochs: fit.epochs
  std::optional<int> batch_size;               // --batch-size: fit.batch_size
  std::optional<int> verbose;                  // --verbose: fit.verbose
  std::optional<uint64_t> seed;                // --seed: the experiment's seed
  std::optional<std::string> initial_weights;  // --load-weights: a model file to start from
  std::optional<int> devices;                  // --devices: the device count
  std::optional<std::string> strategy;     // --strategy: a strategy's option name (strategies.h)
  std::optional<std::array<int, 2>> mesh;  // --mesh RxC: ModelParallel's batch x model mesh
  std::optional<std::string> allreduce;    // --allreduce: "ring" or "naive"
  std::optional<std::vector<double>> device_speed;   // --device-speed: one per device
  std::optional<double> link_latency_us;             // --link-latency-us
  std::optional<double> link_gbps;                   // --link-gbps
  std::optional<std::string> batch_norm_statistics;  // --batch-norm-statistics
  // Files the run writes when it ends ("" for none): Keras's History (.json or CSVLogger's .csv),
  // the per-step device trace (Chrome trace format, a distributed run only) and the trained model.
  std::string history_file;
  std::string trace_file;
  std::string save_model_file;
  // Where the run's events stream as it trains (run_events.h; "" none, "-" standard output):
  // checked here with the other outputs, written by the front end.
  std::string events_file;
};

// Where the experiment came from, for messages and relative paths.
struct PlanContext {
  // The experiment file as the user named it: places inside the experiment are written
  // "<source>: model.config..." (empty: no prefix, as the window shows them beside a field).
  std::string source;
  // The folder relative data.csv and initial_weights paths start from (empty: the working folder).
  std::filesystem::path base_dir;
  // The experiment's own file, for check_outputs_apart (empty: none, an unsaved experiment).
  std::string experiment_file;
  // What the run may allocate (tests inject one); unset: process_memory_limit().
  std::optional<MemoryLimit> memory_limit;
};

// One problem with a plan: where (an option, "seed.json: fit.epochs", a CSV cell) and what.
struct PlanProblem {
  std::string place;
  std::string sentence;
  std::string text() const { return place.empty() ? sentence : place + ": " + sentence; }
};

// Every problem found while planning, in the order a reader meets them (options, devices,
// outputs, data and model, distribution). what() is their texts, one per line; place() and
// message() are the first one's, so code that shows one problem still shows the first.
class PlanError : public InputError {
 public:
  explicit PlanError(std::vector<PlanProblem> problems);
  const std::vector<PlanProblem>& problems() const { return problems_; }
  const char* what() const noexcept override;

 private:
  std::vector<PlanProblem> problems_;
  std::string what_;
};

// Something the user should know before training starts: a setting with no effect, a layout
// entry that matches nothing, more devices than cores. Printed by the CLI on stderr as
// "fitbench-cli: warning: ..." / "note: ...", logged by the window.
struct PlanNotice {
  enum class Kind { kNote, kWarning };
  Kind kind = Kind::kNote;
  std::string text;
};

struct RunPlan {
  ExperimentSpec spec;  // the experiment as it runs: overrides applied, defaults decided
  std::string source;   // PlanContext::source
  int devices = 1;      // the device count (1 without a distribution)
  std::vector<std::string> device_names;  // "cpu:0", ... (one without a distribution)
  // The layout map was empty, so ModelParallel uses default_layout_map (spec holds the result).
  bool default_layout = false;
  std::vector<PlanNotice> notices;
  // The outputs, checked writable and apart from the inputs.
  std::string history_file, trace_file, save_model_file;
  Dataset data;                       // every sample; fit() takes validation_split from its end
  std::unique_ptr<Sequential> model;  // built, compiled, weights loaded, distribution applied

  bool distributed() const { return !spec.distribution.class_name.empty(); }
  // The rows fit() trains on (before the validation split).
  Index train_rows() const;
};

// Builds the plan: applies `overrides` to `spec`, decides the defaults, checks the outputs,
// seeds the random sequence (spec.seed), loads the data, builds and compiles the model, loads
// initial weights and applies the distribution. A run whose memory plan (capacity.h) does not
// fit in what the process may take is refused before the model is built, at the setting to
// change (memory_check.h). Throws PlanError listing every problem found;
// checks that depend on a failed one (a layout map on a model that did not build) are skipped.
// Extra problems the caller found first (a front end's own option errors) come first in it.
RunPlan plan_run(ExperimentSpec spec, const RunOverrides& overrides, const PlanContext& context,
                 std::vector<PlanProblem> earlier_problems = {});

// Makes the experiment's relative data.csv, data.path, data.directory and initial_weights paths
// absolute from `base` (the experiment's folder), as plan_run does; nothing when `base` is empty.
void resolve_paths(ExperimentSpec& spec, const std::filesystem::path& base);

struct CapacityInput;  // core/run/capacity.h

// What plan_memory and predict_step need of the run plan_run would make, without building the
// model or allocating its variables (a plan too large to build is the point): the overrides
// applied (--devices, --strategy, --mesh, --batch-size, the rehearsal knobs), the data loaded,
// the model's shapes and the layout checked. Throws PlanError as plan_run does. `notices`, when
// given, gets what plan_run would say before training that the shapes show (options without
// effect, ModelParallel's default layout map, layout entries matching nothing, a softmax over one
// unit, more devices than cores).
CapacityInput plan_capacity(ExperimentSpec spec, const RunOverrides& overrides,
                            const PlanContext& context, std::vector<PlanNotice>* notices = nullptr);

// The largest number of steps a run's --trace file keeps (about 200 bytes of JSON per span: some
// 1.5 GB for two devices; a longer run's file would not open in a trace viewer anyway).
inline constexpr size_t kMaxTraceSteps = 1'000'000;

}  // namespace fitbench
