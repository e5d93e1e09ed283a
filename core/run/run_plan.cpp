#include "core/run/run_plan.h"

#include <cctype>
#include <thread>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/devices.h"
#include "core/distribution/spec/strategies.h"
#include "core/file_checks.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/nn/network.h"
#include "core/run/capacity.h"
#include "core/run/experiment_runner.h"
#include "core/run/memory_check.h"

namespace fitbench {
namespace {

std::string joined_texts(const std::vector<PlanProblem>& problems) {
  std::string out;
  for (const PlanProblem& p : problems) out += (out.empty() ? "" : "\n") + p.text();
  return out;
}

bool ends_with_ci(const std::string& s, const std::string& suffix) {
  if (s.size() < suffix.size()) return false;
  for (size_t i = 0; i < suffix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - suffix.size() + i])) != suffix[i])
      return false;
  return true;
}

// Collects problems; each check runs in its own `attempt`, so one failure does not hide the next.
class Problems {
 public:
  Problems(std::vector<PlanProblem> earlier, std::string source)
      : list_(std::move(earlier)), source_(std::move(source)) {}

  void add(std::string place, std::string sentence) {
    list_.push_back({std::move(place), std::move(sentence)});
  }
  // An InputError from the engine: places inside the experiment ("model.config...", a CSV cell)
  // are named with the experiment file; options ("--mesh") and environment variables
  // (FITBENCH_CPU_DEVICES, XLA_FLAGS) as they are.
  void add(const InputError& e) {
    const std::string& place = e.place();
    const bool outside = place.rfind("--", 0) == 0 || place.rfind("FITBENCH_", 0) == 0 ||
                         place.rfind("XLA_FLAGS", 0) == 0;
    if (source_.empty() || outside || place.rfind(source_, 0) == 0)
      add(place, e.message());
    else
      add(e.within(source_).place(), e.message());
  }
  template <class F>
  bool attempt(F&& f) {
    try {
      f();
      return true;
    } catch (const PlanError& e) {
      for (const PlanProblem& p : e.problems()) list_.push_back(p);
    } catch (const InputError& e) {
      add(e);
    }
    return false;
  }
  bool empty() const { return list_.empty(); }
  std::vector<PlanProblem>& list() { return list_; }

 private:
  std::vector<PlanProblem> list_;
  std::string source_;
};

std::string in_source(const std::string& source, const std::string& place) {
  return source.empty() ? place : source + ": " + place;
}

// --strategy, --mesh and --devices over the experiment's distribution and devices; returns the
// device count. `mesh_fits` is false when --mesh does not cover the devices: said once, at the
// option, so the distribution is not applied (it would say it again at distribution.mesh).
int apply_distribution_overrides(ExperimentSpec& spec, const RunOverrides& o, Problems& problems,
                                 std::vector<PlanNotice>& notices, bool& mesh_fits) {
  mesh_fits = true;
  if (o.strategy) {
    const StrategyInfo* s = find_strategy_by_option(*o.strategy);
    if (!s) {
      problems.add("--strategy",
                   "must be " + strategy_option_names() + ", got \"" + *o.strategy + "\"");
    } else if (s->class_name != spec.distribution.class_name) {
      // The experiment's own ModelParallel (its mesh and layout map) stays when asked for again.
      spec.distribution = DistributionSpec{};
      spec.distribution.class_name = std::string(s->class_name);
    }
  }
  std::optional<int> devices = o.devices;
  const bool model_parallel = spec.distribution.class_name == kModelParallel;
  if (o.mesh && !model_parallel)
    problems.add("--mesh", "needs ModelParallel: the experiment's, or --strategy model_parallel");
  if (model_parallel && o.mesh) {
    const auto [r, c] = *o.mesh;
    spec.distribution.mesh_shape = {r, c};
    if (spec.distribution.axis_names.size() != 2) spec.distribution.axis_names = {"batch", "model"};
  }
  // A mesh whose device count is given nowhere else (--devices, devices.count, the environment)
  // makes as many devices as it needs.
  if (model_parallel && !spec.distribution.mesh_shape.empty() && !devices && !spec.devices.count) {
    std::optional<int> environment;
    try {
      environment = environment_device_count();
    } catch (const InputError&) {
      environment = 0;  // resolve_device_count says what is wrong with it
    }
    long long cells = 1;
    for (int n : spec.distribution.mesh_shape) cells *= std::max(n, 1);
    if (!environment && cells <= kMaxDeviceCount) devices = static_cast<int>(cells);
  }
  int count = 1;
  problems.attempt([&] { count = resolve_device_count(devices, spec.devices.count); });
  if (model_parallel && o.mesh) {
    const auto [r, c] = *o.mesh;
    // The devices come from elsewhere (--devices, devices.count): a mesh that does not cover
    // them is this option's error.
    mesh_fits = r * c == count;
    if (!mesh_fits)
      problems.add("--mesh", std::to_string(r) + "x" + std::to_string(c) + " needs " +
                                 counted(r * c, "device") + ", but " + there_are(count, "device") +
                                 " (--devices or the experiment's devices.count)");
  } else if (model_parallel && spec.distribution.mesh_shape.empty()) {
    spec.distribution.mesh_shape = {1, count};
    spec.distribution.axis_names = {"batch", "model"};
  }
  // Devices without a distribution train nothing in parallel (Keras trains on one device until
  // set_distribution): said, since the run would look like it ignored the flag.
  if (o.devices && *o.devices > 1 && spec.distribution.class_name.empty())
    notices.push_back({PlanNotice::Kind::kNote,
                       "--devices " + std::to_string(*o.devices) +
                           " has no effect without a distribution: the model trains on one "
                           "device; add --strategy data_parallel or model_parallel"});
  return count;
}

// The rehearsal knobs, which need devices to act on, and --trace, which records them.
void apply_device_overrides(ExperimentSpec& spec, const RunOverrides& o, int count,
                            Problems& problems) {
  const bool none = spec.distribution.class_name.empty();
  const std::pair<const char*, bool> needs[] = {
      {"--allreduce", o.allreduce.has_value()},
      {"--device-speed", o.device_speed.has_value()},
      {"--link-latency-us", o.link_latency_us.has_value()},
      {"--link-gbps", o.link_gbps.has_value()},
      {"--batch-norm-statistics", o.batch_norm_statistics.has_value()},
      {"--trace", !o.trace_file.empty()}};
  for (const auto& [flag, given] : needs)
    if (given && none)
      problems.add(flag,
                   "needs a distribution: the experiment's, or --strategy data_parallel or "
                   "model_parallel");
  // A wrong value is this option's problem only: the experiment's own value stays in the spec,
  // so that it is not reported a second time at devices.*.
  if (o.allreduce && problems.attempt([&] { parse_algorithm(*o.allreduce, "--allreduce"); }))
    spec.devices.allreduce = *o.allreduce;
  if (o.device_speed) {
    if (static_cast<int>(o.device_speed->size()) != count)
      problems.add("--device-speed",
                   "lists " + counted(static_cast<long long>(o.device_speed->size()), "speed") +
                       " but " + there_are(count, "device") + "; give one speed per device");
    else
      spec.devices.speed = *o.device_speed;
  }
  if (o.link_latency_us) spec.devices.link_latency_us = *o.link_latency_us;
  if (o.link_gbps) spec.devices.link_gbps = *o.link_gbps;
  if (o.batch_norm_statistics) {
    if (*o.batch_norm_statistics == "global" || *o.batch_norm_statistics == "per_device")
      spec.devices.batch_norm_statistics = *o.batch_norm_statistics;
    else
      problems.add("--batch-norm-statistics",
                   "must be global or per_device, got \"" + *o.batch_norm_statistics + "\"");
  }
}

// The files written after training, checked before it so that a wrong path does not cost the
// run; an output that is one of the run's inputs, or another output, would replace it.
void check_outputs(const ExperimentSpec& spec, const RunOverrides& o, const PlanContext& context,
                   Problems& problems) {
  if (!o.history_file.empty() && !ends_with_ci(o.history_file, ".json") &&
      !ends_with_ci(o.history_file, ".csv"))
    problems.add("--history", "must name a .json or a .csv file, got \"" + o.history_file + "\"");
  // The events are a stream: standard output ("-"), a FIFO or a device (/dev/stderr) take it as
  // well as a file; only a file is checked here.
  static const std::string kNone;
  std::error_code ec;
  const auto stream_type = std::filesystem::status(o.events_file, ec).type();
  const bool events_stream = o.events_file == "-" ||
                             stream_type == std::filesystem::file_type::fifo ||
                             stream_type == std::filesystem::file_type::character;
  const std::pair<const char*, const std::string*> files[] = {
      {"--save-model", &o.save_model_file},
      {"--history", &o.history_file},
      {"--trace", &o.trace_file},
      {"--events", events_stream ? &kNone : &o.events_file}};
  bool writable = true;
  for (const auto& file : files) {
    // Not a structured binding: Clang before 16 cannot capture one in a lambda (the fuzz build).
    const char* option = file.first;
    const std::string* path = file.second;
    if (path->empty()) continue;
    writable &= problems.attempt([&] {
      try {
        check_writable_file(*path);
      } catch (const InputError& e) {
        throw e.within(option);
      }
    });
  }
  if (!writable) return;
  std::vector<RunFile> outputs = callback_outputs(spec.fit, context.source);
  for (const auto& [option, path] : files)
    if (!path->empty()) outputs.push_back({*path, option, std::string(option) + "'s file too"});
  problems.attempt([&] {
    check_outputs_apart(run_inputs(spec, context.experiment_file, context.base_dir), outputs);
  });
}

// ModelParallel without a layout map shards every Dense kernel whose units divide by the model
// axis (default_layout_map), as the CLI's --mesh always did; a one-axis mesh has no model axis,
// so it replicates every variable. docs/experiment-format.md says so. Fills `d`'s layout map and
// says so; returns whether it did.
bool fill_layout_noted(DistributionSpec& d, const std::vector<VariableInfo>& variables,
                       const PlanContext& context, std::vector<PlanNotice>& notices) {
  if (!fill_default_layout(d, variables)) return false;
  notices.push_back(
      {PlanNotice::Kind::kNote,
       in_source(context.source, "distribution.layout_map") + ": none given, so " +
           (d.layout_map.empty()
                ? "every variable is replicated (no Dense kernel's units divide by the "
                  "model axis)"
                : counted(static_cast<long long>(d.layout_map.size()), "Dense kernel") +
                      " split by output units over \"" + d.axis_names[1] +
                      "\" and the rest replicated (write {\".*\": []} to replicate "
                      "everything, as Keras's empty LayoutMap does)")});
  return true;
}

// What to say of a distribution the run can apply: layout-map entries that match no variable
// (probably a typo) and more devices than cores.
void applied_distribution_notices(const DistributionSpec& d,
                                  const std::vector<VariableInfo>& variables, int count,
                                  const PlanContext& context, std::vector<PlanNotice>& notices) {
  if (d.class_name == kModelParallel) {
    const LayoutCheck check = check_layout_map(variables, d, count);
    for (const LayoutDiagnostic& w : check.warnings)
      notices.push_back({PlanNotice::Kind::kWarning, in_source(context.source, w.text())});
  }
  const unsigned cores = std::thread::hardware_concurrency();
  if (cores > 0 && static_cast<unsigned>(count) > cores)
    notices.push_back({PlanNotice::Kind::kNote,
                       std::to_string(count) + " devices share " + std::to_string(cores) +
                           " cores; devices take turns, so steps take longer than on "
                           "real hardware"});
}

// A softmax over one unit learns nothing: a warning per such layer.
void model_notices(const ModelSpec& model, int64_t features, const PlanContext& context,
                   std::vector<PlanNotice>& notices) {
  for (const size_t i : single_unit_softmax_layers(model, features))
    notices.push_back({PlanNotice::Kind::kWarning,
                       in_source(context.source, model.layer_place(i)) +
                           ": softmax over a single unit always outputs 1, so no layer "
                           "before it can learn; use sigmoid for one output"});
}

// The distribution's side of the plan for a prepared model: ModelParallel's default layout map,
// the distribution applied, its warnings and notes.
void plan_distribution(ExperimentSpec& spec, int count, int64_t features,
                       const PlanContext& context, RunPlan& plan, Problems& problems) {
  DistributionSpec& d = spec.distribution;
  const std::vector<VariableInfo> variables = model_variables(spec.model, features);
  plan.default_layout = fill_layout_noted(d, variables, context, plan.notices);
  const bool applied = problems.attempt(
      [&] { apply_distribution(*plan.model, spec.distribution, count, spec.devices); });
  if (applied) applied_distribution_notices(d, variables, count, context, plan.notices);
}

// Refuses a run that would not fit in memory, before its model is built: the estimate and the
// setting to change (memory_check.h), at the option that gave it or the experiment's field.
// Problems it cannot judge (a layout map the distribution step reports) are left to that step.
void check_run_memory(const ExperimentSpec& spec, int count, const Dataset& data,
                      const RunOverrides& o, const PlanContext& context) {
  CapacityInput in;
  in.model = spec.model;
  in.optimizer = spec.compile.optimizer;
  in.distribution = spec.distribution;
  const bool distributed = !spec.distribution.class_name.empty();
  in.devices = distributed ? count : 1;
  try {
    if (distributed) in.options = rehearsal_options(spec.devices, count);
  } catch (const InputError&) {
    // plan_distribution reports it; the defaults size the same buffers.
  }
  in.features = data.x.cols();
  in.targets = data.y.cols();
  in.samples = data.size();
  in.train_rows = training_rows(data.size(), spec.fit.validation_split);
  in.batch_size = spec.fit.batch_size;
  MemoryPlan plan;
  try {
    Network(spec.model).build(in.features);  // the engine's own size limit says it first
    plan = plan_memory(in);
  } catch (const InputError&) {
    return;  // the model's or the layout's own error, reported where it is built
  }
  const MemoryLimit limit = context.memory_limit ? *context.memory_limit : process_memory_limit();
  const MemoryVerdict v = check_memory(in, plan, limit, plan.data);
  if (v.fits) return;
  std::string place;
  switch (v.setting) {
    case MemoryVerdict::Setting::kDevices:
      place = o.devices ? "--devices" : in_source(context.source, "devices.count");
      break;
    case MemoryVerdict::Setting::kBatchSize:
      place = o.batch_size ? "--batch-size" : in_source(context.source, "fit.batch_size");
      break;
    case MemoryVerdict::Setting::kLayerUnits:
      place = in_source(context.source, spec.model.layer_place(v.layer) + ".config.units");
      break;
  }
  throw InputError(place, v.sentence);
}

}  // namespace

PlanError::PlanError(std::vector<PlanProblem> problems)
    : InputError(problems.empty() ? std::string() : problems.front().place,
                 problems.empty() ? std::string("no problem") : problems.front().sentence),
      problems_(std::move(problems)) {
  what_ = joined_texts(problems_);
}

const char* PlanError::what() const noexcept { return what_.c_str(); }

CapacityInput plan_capacity(ExperimentSpec spec, const RunOverrides& o, const PlanContext& context,
                            std::vector<PlanNotice>* said) {
  Problems problems({}, context.source);
  if (o.batch_size) spec.fit.batch_size = *o.batch_size;
  std::vector<PlanNotice> notices;
  bool mesh_fits = true;
  const int count = apply_distribution_overrides(spec, o, problems, notices, mesh_fits);
  apply_device_overrides(spec, o, count, problems);
  resolve_paths(spec, context.base_dir);
  CapacityInput in;
  in.model = spec.model;
  in.optimizer = spec.compile.optimizer;
  in.distribution = spec.distribution;
  in.devices = spec.distribution.class_name.empty() ? 1 : count;
  in.batch_size = spec.fit.batch_size;
  problems.attempt([&] {
    make_optimizer(spec.compile.optimizer, "compile.optimizer");  // its arguments' errors
    const Dataset data = load_dataset(spec.data, std::filesystem::current_path());
    in.features = data.x.cols();
    in.targets = data.y.cols();
    in.samples = data.size();
    in.train_rows = training_rows(data.size(), spec.fit.validation_split);
    Network net(spec.model);
    net.build_shapes(in.features);  // shapes only: nothing is allocated
    model_notices(spec.model, in.features, context, notices);
  });
  if (!spec.distribution.class_name.empty() && mesh_fits && problems.empty()) {
    const bool applicable = problems.attempt([&] {
      in.options = rehearsal_options(spec.devices, count);
      if (spec.distribution.class_name == kModelParallel) {
        Network net(spec.model);
        net.build_shapes(in.features);
        mesh_plan(in, net);
      }
    });
    if (applicable) {
      // What plan_run would say of the distribution; the input keeps the layout as given
      // (mesh_plan fills in the default one the same way).
      DistributionSpec d = spec.distribution;
      const std::vector<VariableInfo> variables = model_variables(spec.model, in.features);
      fill_layout_noted(d, variables, context, notices);
      applied_distribution_notices(d, variables, count, context, notices);
    }
  }
  if (!problems.empty()) throw PlanError(std::move(problems.list()));
  if (said) *said = std::move(notices);
  return in;
}

// Relative data.csv, data.path and initial_weights paths from the experiment's folder.
void resolve_paths(ExperimentSpec& spec, const std::filesystem::path& base) {
  if (base.empty()) return;
  if (!spec.data.csv.empty() && std::filesystem::path(spec.data.csv).is_relative())
    spec.data.csv = (base / spec.data.csv).string();
  if (!spec.data.dataset_dir.empty() && std::filesystem::path(spec.data.dataset_dir).is_relative())
    spec.data.dataset_dir = (base / spec.data.dataset_dir).string();
  if (!spec.data.directory.empty() && std::filesystem::path(spec.data.directory).is_relative())
    spec.data.directory = (base / spec.data.directory).string();
  if (!spec.initial_weights.empty() && std::filesystem::path(spec.initial_weights).is_relative())
    spec.initial_weights = (base / spec.initial_weights).string();
}

Index RunPlan::train_rows() const {
  return validation_split_at(data.size(), spec.fit.validation_split);
}

RunPlan plan_run(ExperimentSpec spec, const RunOverrides& o, const PlanContext& context,
                 std::vector<PlanProblem> earlier_problems) {
  Problems problems(std::move(earlier_problems), context.source);
  RunPlan plan;
  plan.source = context.source;

  if (o.epochs) spec.fit.epochs = *o.epochs;
  if (o.batch_size) spec.fit.batch_size = *o.batch_size;
  if (o.verbose) spec.fit.verbose = *o.verbose;
  if (o.seed) spec.seed = *o.seed;
  bool weights_read = true;
  if (o.initial_weights) {
    spec.initial_weights = *o.initial_weights;
    // Read now, so that its errors name the option rather than the experiment.
    weights_read = problems.attempt([&] {
      try {
        // A .weights.h5 file is read for the model, below.
        if (!is_keras_weights(spec.initial_weights)) read_model_file(spec.initial_weights);
      } catch (const InputError& e) {
        throw e.within("--load-weights");
      }
    });
  }
  bool mesh_fits = true;
  const int count = apply_distribution_overrides(spec, o, problems, plan.notices, mesh_fits);
  apply_device_overrides(spec, o, count, problems);
  if (const std::string error = device_type_error(spec.devices.type); !error.empty())
    problems.add(in_source(context.source, "devices.type"), error);
  check_outputs(spec, o, context, problems);
  plan.history_file = o.history_file;
  plan.trace_file = o.trace_file;
  plan.save_model_file = o.save_model_file;

  resolve_paths(spec, context.base_dir);
  // A --load-weights file refused above is not read again below: its problem is said once.
  if (!weights_read) spec.initial_weights.clear();
  // The data and the model: each step needs the one before.
  const bool prepared = problems.attempt([&] {
    PreparedRun run = prepare_run(spec, [&](const Dataset& data) {
      if (mesh_fits) check_run_memory(spec, count, data, o, context);
    });
    plan.data = std::move(run.data);
    plan.model = std::move(run.model);
    for (const std::string& note : run.notes)
      plan.notices.push_back({PlanNotice::Kind::kNote, note});
  });
  if (prepared) {
    const int64_t features = plan.data.x.cols();
    model_notices(spec.model, features, context, plan.notices);
    if (!spec.distribution.class_name.empty() && mesh_fits)
      problems.attempt([&] { plan_distribution(spec, count, features, context, plan, problems); });
  }
  if (!problems.empty()) throw PlanError(std::move(problems.list()));
  plan.spec = std::move(spec);
  plan.devices = plan.distributed() ? count : 1;
  plan.device_names = list_devices("cpu", plan.devices);
  return plan;
}

}  // namespace fitbench
