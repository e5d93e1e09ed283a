// The sweep section: Keras Tuner's hyperparameters, the grid and random samplers, and the trials'
// experiments (core/run/sweep.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include "core/distribution/spec/strategies.h"
#include "core/io/json_reader.h"
#include "core/metrics/metric.h"
#include "core/python/numpy_generator.h"
#include "core/python/random.h"
#include "core/run/sweep.h"
#include "core/run/sweep_paths.h"
#include "core/training/callbacks.h"

namespace fitbench {
namespace {

using Json = nlohmann::ordered_json;
using json_io::describe;

constexpr int kDefaultRandomTrials = 10;  // keras_tuner.RandomSearch(max_trials=10)
constexpr int kMaxTrials = 10000;
constexpr int kMaxExecutions = 100;
constexpr int kMaxRedraws = 100;           // Keras Tuner's _max_collisions
constexpr double kMaxGridValues = 100000;  // one parameter's values in a grid
constexpr size_t kMaxTrialProblems = 10;   // trials whose problems are listed one by one
constexpr const char* kStrategyPath = "distribution.strategy";

// Every problem, placed in the experiment file.
struct SweepProblems {
  std::vector<PlanProblem> list;
  std::string source;

  void add(const std::string& place, const std::string& sentence) {
    list.push_back({source.empty()  ? place
                    : place.empty() ? source
                                    : source + ": " + place,
                    sentence});
  }
  template <typename F>
  bool attempt(F&& f) {
    try {
      f();
      return true;
    } catch (const InputError& e) {
      add(e.place(), e.message());
      return false;
    }
  }
};

// "sweep.parameters[\"fit.batch_size\"]".
std::string parameter_place(const std::string& path) {
  return "sweep.parameters[" + Json(path).dump() + "]";
}

// Keys of `value` outside `allowed`, each a problem (ObjectReader stops at the first).
void check_keys(const Json& value, const std::string& place,
                const std::vector<std::string>& allowed, SweepProblems& problems) {
  for (auto it = value.begin(); it != value.end(); ++it)
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
      problems.add(json_io::key_path(place, it.key()),
                   "is not a key fitbench knows here; expected one of: " + json_io::join(allowed));
}

double grid_count(const SweepParameter& p) {
  if (!p.step) return 0;
  if (p.sampling == "linear") return std::floor((p.max_value - p.min_value) / *p.step + 1e-9) + 1;
  return std::floor(std::log(p.max_value / p.min_value) / std::log(*p.step) + 1e-9) + 1;
}

SweepParameter parse_parameter(const std::string& path, const Json& v) {
  const std::string place = parameter_place(path);
  json_io::ObjectReader r(v, place, {"class_name", "config"});
  SweepParameter p;
  p.path = path;
  p.class_name = r.string("class_name", "", "one of Choice, Int, Float, Boolean, Fixed");
  static const std::vector<std::string> kClasses = {"Choice", "Int", "Float", "Boolean", "Fixed"};
  if (std::find(kClasses.begin(), kClasses.end(), p.class_name) == kClasses.end())
    json_io::fail_expected(r.path_of("class_name"),
                           "one of Choice, Int, Float, Boolean, Fixed (Keras Tuner's names)",
                           r.value().contains("class_name") ? r.value().at("class_name") : Json());
  static const Json kEmpty = Json::object();
  const Json* config = r.get_non_null("config");
  if (!config) config = &kEmpty;
  const std::string cplace = r.path_of("config");
  const bool is_int = p.class_name == "Int";
  if (p.class_name == "Choice") {
    json_io::ObjectReader c(*config, cplace, {"name", "values", "ordered", "default"});
    const Json& values = c.require("values", "the values to choose from");
    if (!values.is_array() || values.empty() || values.size() > kMaxGridValues)
      json_io::fail_expected(c.path_of("values"), "a list of 1 to 100000 values", values);
    for (size_t i = 0; i < values.size(); ++i) {
      const Json& x = values[i];
      const bool same = x.is_number() ? values[0].is_number() : x.type() == values[0].type();
      if (!(x.is_number() || x.is_string() || x.is_boolean()) || !same)
        json_io::fail_expected(json_io::index_path(c.path_of("values"), i),
                               "a number, string or boolean of the same kind as the first value",
                               x);
      p.values.push_back(x);
    }
  } else if (p.class_name == "Fixed") {
    json_io::ObjectReader c(*config, cplace, {"name", "value"});
    p.values.push_back(c.require("value", "the value every trial takes"));
  } else if (p.class_name == "Boolean") {
    json_io::ObjectReader c(*config, cplace, {"name", "default"});
  } else {
    json_io::ObjectReader c(*config, cplace,
                            {"name", "min_value", "max_value", "step", "sampling", "default"});
    const auto bound = [&](const char* key) {
      const Json& x = c.require(key, is_int ? "a whole number" : "a number");
      return is_int ? static_cast<double>(json_io::to_int(x, c.path_of(key), "a whole number",
                                                          -1'000'000'000'000, 1'000'000'000'000))
                    : json_io::to_number(x, c.path_of(key), "a finite number");
    };
    p.min_value = bound("min_value");
    p.max_value = bound("max_value");
    p.sampling = c.string("sampling", "linear", "\"linear\", \"log\" or \"reverse_log\"");
    if (p.sampling != "linear" && p.sampling != "log" && p.sampling != "reverse_log")
      json_io::fail_expected(c.path_of("sampling"), "\"linear\", \"log\" or \"reverse_log\"",
                             c.value().at("sampling"));
    if (!(p.min_value < p.max_value))
      json_io::fail(c.path_of("max_value"),
                    "must be greater than min_value (for one value use Fixed)");
    if (p.sampling != "linear" && p.min_value <= 0)
      json_io::fail(c.path_of("min_value"), "must be above 0 for " + p.sampling + " sampling");
    if (const Json* step = c.get_non_null("step")) {
      const bool linear = p.sampling == "linear";
      p.step = is_int ? static_cast<double>(json_io::to_int(
                            *step, c.path_of("step"),
                            linear ? "a whole number above 0" : "a whole number above 1",
                            linear ? 1 : 2, 1'000'000'000))
                      : json_io::to_number(
                            *step, c.path_of("step"),
                            linear ? "a number above 0" : "a factor above 1 (log steps multiply)",
                            {linear ? 0.0 : 1.0, 1e300, true, false});
    } else if (is_int && p.sampling == "linear") {
      p.step = 1.0;  // Keras Tuner's Int steps by 1
    }
    if (p.step && grid_count(p) > kMaxGridValues)
      json_io::fail(c.path_of("step"), "makes " + std::to_string(grid_count(p)) +
                                           " values; a parameter takes at most 100000");
  }
  return p;
}

Json number_json(double v, bool is_int) {
  return is_int ? Json(static_cast<int64_t>(std::llround(v))) : Json(v);
}

SweepObjective parse_objective(const Json& v, const std::string& place, std::string& direction) {
  SweepObjective o;
  direction = "auto";
  if (v.is_string()) {
    o.name = v.get<std::string>();
  } else {
    json_io::ObjectReader r(v, place, {"name", "direction"});
    o.name = r.string("name", "", "a History key such as \"val_loss\"");
    direction = r.string("direction", "auto", "\"min\" or \"max\"");
    if (direction != "min" && direction != "max" && direction != "auto")
      json_io::fail_expected(r.path_of("direction"), "\"min\" or \"max\"",
                             r.value().at("direction"));
  }
  if (o.name.empty())
    json_io::fail(place, "must name a History key such as \"val_loss\" or \"val_accuracy\"");
  return o;
}

// The History keys a trial's fit() writes.
std::vector<std::string> history_keys(const ExperimentSpec& spec) {
  std::vector<std::string> keys = {"loss"};
  for (const std::string& k : metric_log_keys(spec.compile.all_metric_names())) keys.push_back(k);
  if (spec.fit.validation_split > 0 || spec.data.has_own_validation()) {
    const size_t n = keys.size();
    for (size_t i = 0; i < n; ++i) keys.push_back("val_" + keys[i]);
  }
  return keys;
}

}  // namespace

std::vector<nlohmann::ordered_json> SweepParameter::grid_values() const {
  if (class_name == "Choice" || class_name == "Fixed") return values;
  if (class_name == "Boolean") return {Json(false), Json(true)};
  std::vector<Json> out;
  if (!step) return out;
  const bool is_int = class_name == "Int";
  const auto n = static_cast<int64_t>(grid_count(*this));
  for (int64_t i = 0; i < n; ++i) {
    const double v = sampling == "linear" ? min_value + static_cast<double>(i) * *step
                                          : min_value * std::pow(*step, static_cast<double>(i));
    out.push_back(number_json(sampling == "reverse_log" ? max_value + min_value - v : v, is_int));
  }
  if (sampling == "reverse_log") std::reverse(out.begin(), out.end());
  return out;
}

nlohmann::ordered_json SweepParameter::value_for(double u) const {
  const bool is_int = class_name == "Int";
  if (class_name == "Fixed") return values[0];
  if (class_name == "Boolean") return Json(u >= 0.5);
  if (class_name == "Choice" || step) {
    const std::vector<Json> all = class_name == "Choice" ? values : grid_values();
    const auto i =
        std::min(static_cast<size_t>(u * static_cast<double>(all.size())), all.size() - 1);
    return all[i];
  }
  // Continuous (Float, or Int with log sampling and no step: floored over [min, max + 1)).
  const double lo = min_value, hi = is_int ? max_value + 1 : max_value;
  double v = lo + u * (hi - lo);
  if (sampling == "log") v = lo * std::pow(hi / lo, u);
  if (sampling == "reverse_log") v = hi + lo - lo * std::pow(hi / lo, 1 - u);
  if (is_int) return Json(static_cast<int64_t>(std::min(std::floor(v), max_value)));
  return Json(v);
}

bool SweepParameter::numeric() const {
  if (class_name == "Int" || class_name == "Float") return true;
  if (class_name == "Boolean" || values.empty()) return false;
  return std::all_of(values.begin(), values.end(), [](const Json& v) { return v.is_number(); });
}

std::string parameter_label(const std::string& path) {
  const size_t dot = path.find_last_of('.');
  return dot == std::string::npos ? path : path.substr(dot + 1);
}

std::string describe_values(const SweepSpec& spec, const SweepTrial& trial) {
  std::string out;
  for (size_t i = 0; i < spec.parameters.size() && i < trial.values.size(); ++i) {
    const Json& v = trial.values[i];
    std::string text = v.is_string() ? v.get<std::string>() : v.dump();
    if (v.is_number_float()) {  // 4 significant digits, as a table shows them
      char buffer[32];
      std::snprintf(buffer, sizeof buffer, "%.4g", v.get<double>());
      text = buffer;
    }
    out += (out.empty() ? "" : ", ") + parameter_label(spec.parameters[i].path) + "=" + text;
  }
  return out;
}

SweepPlan plan_sweep(const ExperimentSpec& base, const PlanContext& context) {
  SweepPlan plan;
  plan.context = context;
  SweepProblems problems{{}, context.source};
  if (!base.sweep.is_object()) {
    problems.add("", "has no sweep section; `fitbench-cli run` trains it as it is");
    throw PlanError(problems.list);
  }
  const Json& sweep = base.sweep;
  SweepSpec& spec = plan.spec;
  check_keys(sweep, "sweep",
             {"method", "max_trials", "seed", "objective", "executions_per_trial", "parameters",
              "pruning"},
             problems);
  const auto get = [&](const char* key) -> const Json* {
    auto it = sweep.find(key);
    return it == sweep.end() || it->is_null() ? nullptr : &*it;
  };
  std::string direction = "auto";
  problems.attempt([&] {
    if (const Json* m = get("method")) {
      spec.method = json_io::to_string(*m, "sweep.method", "\"grid\" or \"random\"");
      if (spec.method != "grid" && spec.method != "random")
        json_io::fail_expected("sweep.method", "\"grid\" or \"random\"", *m);
    }
  });
  problems.attempt([&] {
    if (const Json* m = get("max_trials"))
      spec.max_trials = static_cast<int>(
          json_io::to_int(*m, "sweep.max_trials", "a whole number from 1 to 10000", 1, kMaxTrials));
  });
  problems.attempt([&] {
    if (const Json* s = get("seed"))
      spec.seed = json_io::to_uint64(*s, "sweep.seed", "a non-negative integer");
    else
      spec.seed = base.seed.value_or(0);
  });
  problems.attempt([&] {
    if (const Json* e = get("executions_per_trial"))
      spec.executions_per_trial = static_cast<int>(json_io::to_int(
          *e, "sweep.executions_per_trial", "a whole number from 1 to 100", 1, kMaxExecutions));
  });
  problems.attempt([&] {
    if (const Json* o = get("objective"))
      spec.objective = parse_objective(*o, "sweep.objective", direction);
  });
  problems.attempt([&] {
    const Json* pr = get("pruning");
    if (!pr) return;
    json_io::ObjectReader p(*pr, "sweep.pruning", {"min_epochs", "startup_trials"});
    SweepPruning pruning;
    pruning.min_epochs = static_cast<int>(
        p.integer("min_epochs", 1, "a whole number from 1 to 1000000", 1, 1000000));
    pruning.startup_trials = static_cast<int>(
        p.integer("startup_trials", 5, "a whole number from 1 to 10000", 1, kMaxTrials));
    spec.pruning = pruning;
  });

  // The parameters, each path tried on the experiment.
  const Json canonical = [&] {
    Json doc = experiment_to_json(base);
    doc.erase("sweep");
    return doc;
  }();
  const Json* params = get("parameters");
  if (!params || !params->is_object() || params->empty()) {
    problems.add("sweep.parameters",
                 "must be an object with at least one entry: a path into the experiment and a "
                 "Keras Tuner hyperparameter, e.g. \"compile.optimizer.config.learning_rate\": "
                 "{\"class_name\": \"Float\", \"config\": {\"min_value\": 0.001, \"max_value\": "
                 "0.1, \"sampling\": \"log\"}}");
  } else {
    for (auto it = params->begin(); it != params->end(); ++it) {
      const std::string& path = it.key();
      problems.attempt([&] {
        SweepParameter p = parse_parameter(path, it.value());
        if (path == kStrategyPath) {
          // Names, so a Choice or a Fixed: an Int or Float draws numbers, and a Boolean true or
          // false, which no strategy is called.
          if (p.class_name != "Choice" && p.class_name != "Fixed")
            json_io::fail(parameter_place(path), "takes strategy names (a Choice or a Fixed of " +
                                                     strategy_option_names() + "), not " +
                                                     (p.class_name == "Int" ? "an " : "a ") +
                                                     p.class_name);
          for (const Json& v : p.grid_values().empty() ? p.values : p.grid_values())
            if (!v.is_string() || !find_strategy_by_option(v.get<std::string>()))
              json_io::fail(
                  parameter_place(path),
                  "takes strategy names: " + strategy_option_names() + ", got " + describe(v));
        } else {
          Json probe = canonical;
          try {
            set_json_path(probe, path, p.value_for(0.0));
          } catch (const InputError& e) {
            json_io::fail(parameter_place(path), e.message());
          }
        }
        if (spec.method == "grid" && p.grid_values().empty())
          json_io::fail(
              parameter_place(path) + ".config.step",
              "is needed for a grid over a " + p.class_name + " (or give its values with Choice)");
        spec.parameters.push_back(std::move(p));
      });
    }
  }
  if (!problems.list.empty()) throw PlanError(problems.list);

  // The trials' values.
  std::vector<std::vector<Json>> samples;
  if (spec.method == "grid") {
    std::vector<std::vector<Json>> axes;
    double total = 1;
    for (const SweepParameter& p : spec.parameters) {
      axes.push_back(p.grid_values());
      total *= static_cast<double>(axes.back().size());
    }
    const double wanted = spec.max_trials ? std::min<double>(*spec.max_trials, total) : total;
    if (wanted > kMaxTrials) {
      problems.add("sweep.parameters", "make a grid of " + std::to_string(total) +
                                           " trials; set max_trials (at most 10000)");
      throw PlanError(problems.list);
    }
    for (int64_t t = 0; t < static_cast<int64_t>(wanted); ++t) {
      std::vector<Json> values(axes.size());
      int64_t rest = t;
      for (size_t a = axes.size(); a-- > 0;) {
        const auto n = static_cast<int64_t>(axes[a].size());
        values[a] = axes[a][static_cast<size_t>(rest % n)];
        rest /= n;
      }
      samples.push_back(std::move(values));
    }
  } else {
    NumpyGenerator rng(spec.seed);
    std::set<std::string> seen;
    const int wanted = spec.max_trials.value_or(kDefaultRandomTrials);
    for (int t = 0; t < wanted; ++t) {
      bool fresh = false;
      std::vector<Json> values;
      for (int attempt = 0; attempt < kMaxRedraws && !fresh; ++attempt) {
        values.clear();
        for (const SweepParameter& p : spec.parameters)
          values.push_back(p.class_name == "Fixed" ? p.values[0] : p.value_for(rng.random()));
        fresh = seen.insert(Json(values).dump()).second;
      }
      if (!fresh) {
        plan.notices.push_back({PlanNotice::Kind::kNote,
                                "the search space has only " + std::to_string(samples.size()) +
                                    " different trials, fewer than max_trials " +
                                    std::to_string(wanted)});
        break;
      }
      samples.push_back(std::move(values));
    }
  }

  // Each trial's experiment.
  size_t failed_trials = 0;
  for (size_t t = 0; t < samples.size(); ++t) {
    SweepTrial trial;
    trial.number = static_cast<int>(t);
    trial.values = samples[t];
    trial.document = canonical;
    const std::string where =
        "trial " + std::to_string(t) + " (" + describe_values(spec, trial) + ")";
    const bool ok = [&] {
      try {
        for (size_t i = 0; i < spec.parameters.size(); ++i) {
          if (spec.parameters[i].path == kStrategyPath)
            trial.overrides.strategy = trial.values[i].get<std::string>();
          else
            set_json_path(trial.document, spec.parameters[i].path, trial.values[i]);
        }
        if (!trial.document.contains("seed") || !trial.document["seed"].is_number_unsigned())
          trial.document["seed"] = base.seed.value_or(0);
        trial.spec = parse_experiment(trial.document, "", context.base_dir);
        return true;
      } catch (const InputError& e) {
        if (++failed_trials <= kMaxTrialProblems)
          problems.add(where + (e.place().empty() ? "" : ": " + e.place()), e.message());
        return false;
      }
    }();
    if (ok) plan.trials.push_back(std::move(trial));
  }
  if (failed_trials > kMaxTrialProblems)
    problems.add("sweep",
                 std::to_string(failed_trials - kMaxTrialProblems) + " more trials have problems");

  // The objective: a key of every trial's History, and which way is better.
  for (const SweepTrial& trial : plan.trials) {
    const std::vector<std::string> keys = history_keys(trial.spec);
    if (std::find(keys.begin(), keys.end(), spec.objective.name) == keys.end()) {
      const bool needs_validation = spec.objective.name.rfind("val_", 0) == 0 &&
                                    trial.spec.fit.validation_split <= 0 &&
                                    !trial.spec.data.has_own_validation();
      problems.add("sweep.objective",
                   "\"" + spec.objective.name + "\" is not in the History of trial " +
                       std::to_string(trial.number) +
                       (needs_validation ? ", which has no validation_split" : "") +
                       "; its keys are " + json_io::join(keys));
      break;
    }
    const std::optional<bool> up =
        monitor_improves_upward(spec.objective.name, direction,
                                trial.spec.compile.all_metric_names(), trial.spec.compile.metrics);
    if (!up) {
      problems.add("sweep.objective", "cannot tell whether \"" + spec.objective.name +
                                          "\" is better low or high; give \"direction\": "
                                          "\"min\" or \"max\"");
      break;
    }
    spec.objective.maximize = *up;
  }
  if (!problems.list.empty()) throw PlanError(problems.list);
  return plan;
}

}  // namespace fitbench
