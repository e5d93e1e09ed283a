// compile() options as Keras 3 serializes them: the model's compile_config
// (keras/src/trainers/trainer.py), optimizers' get_config (keras/src/optimizers/base_optimizer.py
// and sgd/adam/adamw/rmsprop/adagrad.py), losses' get_config (keras/src/losses/losses.py) and
// learning-rate schedules (keras/src/optimizers/schedules/learning_rate_schedule.py).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "core/base/error.h"
#include "core/io/json_reader.h"
#include "core/io/keras_json.h"
#include "core/losses/loss_registry.h"
#include "core/metrics/metric_registry.h"
#include "core/optimizers/optimizer_registry.h"

namespace fitbench {

using json_io::Bounds;
using json_io::fail;
using json_io::fail_expected;
using json_io::fail_unsupported;
using json_io::index_path;
using json_io::join;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

std::string optimizer_choices() {
  return "; expected one of: " +
         join_names(optimizers(), [](const OptimizerInfo& o) { return o.class_name; });
}

// keras/src/utils/naming.py to_snake_case: "BinaryAccuracy" -> "binary_accuracy", "AUC" -> "auc".
std::string to_snake_case(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    const unsigned char c = name[i];
    if (std::isupper(c) && i > 0) {
      const unsigned char prev = name[i - 1];
      const bool next_lower = i + 1 < name.size() && std::islower(name[i + 1]);
      if (std::islower(prev) || std::isdigit(prev) || (std::isupper(prev) && next_lower)) {
        out += '_';
      }
    }
    out += static_cast<char>(std::tolower(c));
  }
  return out;
}

// A number written as an integer when it is one (Keras writes decay_steps as an int).
Json step_count(double v) {
  if (v == std::floor(v) && std::fabs(v) < 9.0e15) return Json(static_cast<int64_t>(v));
  return Json(v);
}

OptimizerSpec parse_optimizer(const Json& v, const std::string& path) {
  OptimizerSpec spec;
  const Json* config = nullptr;
  std::string class_name;
  std::string class_place = path;
  static const Json kEmpty = Json::object();
  if (v.is_string()) {
    class_name = v.get<std::string>();
    config = &kEmpty;
  } else if (v.is_object()) {
    class_name = json_io::read_keras_object(v, path, &config);
    class_place = key_path(path, "class_name");
  } else {
    fail_expected(path, "an optimizer name or {\"class_name\": ..., \"config\": {...}}", v);
  }
  // Compared in lower case, as Keras's deserialization of optimizers does.
  std::string lower = class_name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const OptimizerInfo* info = find_optimizer(lower);
  if (info == nullptr) fail_unsupported(class_place, Json(class_name), optimizer_choices());
  spec.class_name = std::string(info->class_name);
  // The common fields, Keras's other base-optimizer arguments, then the rule's own fields.
  std::vector<std::string> keys = {"name"};
  for (const FieldInfo& f : common_optimizer_fields()) keys.emplace_back(f.key);
  keys.insert(keys.end(), {"use_ema", "ema_momentum", "ema_overwrite_frequency",
                           "loss_scale_factor", "gradient_accumulation_steps"});
  for (const OptimizerField& f : info->fields) keys.emplace_back(f.info.key);
  ObjectReader r(*config, key_path(path, "config"), keys);

  if (const Json* name = r.get_non_null("name")) json_io::to_string(*name, r.path_of("name"));
  if (const Json* lr = r.get_non_null("learning_rate")) {
    if (lr->is_object()) {
      spec.schedule = parse_schedule(*lr, r.path_of("learning_rate"));
    } else {
      // Keras's rate is a float32 variable: beyond its range the rate would be inf.
      spec.learning_rate =
          json_io::to_number(*lr, r.path_of("learning_rate"),
                             "a positive number within float32's range or a learning-rate schedule",
                             {.lo = 0.0, .hi = std::numeric_limits<float>::max(), .lo_open = true});
    }
  }
  const Bounds non_negative{.lo = 0.0};
  const Bounds positive{.lo = 0.0, .lo_open = true};
  const Bounds unit{.lo = 0.0, .hi = 1.0};
  const Bounds unit_open{.lo = 0.0, .hi = 1.0, .hi_open = true};
  spec.weight_decay = r.optional_number("weight_decay", "null or a number >= 0", non_negative);
  std::string clip_key;
  for (const char* key : {"clipnorm", "clipvalue", "global_clipnorm"}) {
    auto value = r.optional_number(key, "null or a positive number", positive);
    if (!value) continue;
    if (!clip_key.empty()) {
      fail(r.path_of(key), "cannot be combined with " + clip_key +
                               " (only one of clipnorm, clipvalue and global_clipnorm can be set)");
    }
    clip_key = key;
    if (std::string(key) == "clipnorm") spec.clipnorm = value;
    if (std::string(key) == "clipvalue") spec.clipvalue = value;
    if (std::string(key) == "global_clipnorm") spec.global_clipnorm = value;
  }
  r.only("use_ema", {false});
  r.optional_number("ema_momentum", "a number in [0, 1]", unit);
  r.optional_integer("ema_overwrite_frequency", "null or a positive integer", 1);
  r.only("loss_scale_factor", {});
  r.only("gradient_accumulation_steps", {});

  spec.momentum = r.number("momentum", spec.momentum, "a number in [0, 1]", unit);
  spec.nesterov = r.boolean("nesterov", spec.nesterov);
  spec.beta_1 = r.number("beta_1", spec.beta_1, "a number in [0, 1)", unit_open);
  spec.beta_2 = r.number("beta_2", spec.beta_2, "a number in [0, 1)", unit_open);
  spec.epsilon = r.number("epsilon", spec.epsilon, "a positive number", positive);
  spec.amsgrad = r.boolean("amsgrad", spec.amsgrad);
  spec.rho = r.number("rho", spec.rho, "a number in [0, 1)", unit_open);
  spec.centered = r.boolean("centered", spec.centered);
  spec.initial_accumulator_value = r.number(
      "initial_accumulator_value", spec.initial_accumulator_value, "a number >= 0", non_negative);
  return spec;
}

Json optimizer_to_json(const OptimizerSpec& spec) {
  Json config = Json::object();
  if (spec.schedule) {
    config["learning_rate"] = schedule_to_ordered_json(*spec.schedule);
  } else if (spec.learning_rate) {
    config["learning_rate"] = *spec.learning_rate;
  }
  if (const OptimizerInfo* info = find_optimizer(spec.class_name)) {
    for (const OptimizerField& f : info->fields) {
      const std::string key(f.info.key);
      if (f.number != nullptr) config[key] = spec.*f.number;
      if (f.flag != nullptr) config[key] = spec.*f.flag;
    }
  }
  if (spec.weight_decay) config["weight_decay"] = *spec.weight_decay;
  if (spec.clipnorm) config["clipnorm"] = *spec.clipnorm;
  if (spec.clipvalue) config["clipvalue"] = *spec.clipvalue;
  if (spec.global_clipnorm) config["global_clipnorm"] = *spec.global_clipnorm;
  Json doc = Json::object();
  doc["module"] = "keras.optimizers";
  doc["class_name"] = spec.class_name;
  doc["config"] = std::move(config);
  return doc;
}

std::string loss_choices() {
  return "; expected one of: " +
         join_names(loss_classes(), [](const LossInfo& l) { return l.name; });
}

LossSpec parse_loss(const Json& v, const std::string& path) {
  LossSpec spec;
  if (v.is_string()) {
    const LossInfo* loss = find_loss(v.get<std::string>());
    if (loss == nullptr) fail_unsupported(path, v, loss_choices());
    spec.name = std::string(loss->name);
    return spec;
  }
  if (!v.is_object()) {
    fail_expected(path, "a loss name or {\"class_name\": ..., \"config\": {...}}", v);
  }
  const Json* config = nullptr;
  const std::string class_name = json_io::read_keras_object(v, path, &config);
  const LossInfo* loss = find_loss(class_name);
  if (loss == nullptr)
    fail_unsupported(key_path(path, "class_name"), v.at("class_name"), loss_choices());
  spec.name = std::string(loss->name);
  std::vector<std::string> keys = {"name", "reduction", "dtype"};
  const bool crossentropy = spec.name.find("crossentropy") != std::string::npos;
  if (crossentropy) keys.insert(keys.end(), {"from_logits", "axis"});
  if (spec.name == "binary_crossentropy" || spec.name == "categorical_crossentropy") {
    keys.push_back("label_smoothing");
  }
  if (spec.name == "sparse_categorical_crossentropy") keys.push_back("ignore_class");
  if (spec.name == "huber") keys.push_back("delta");
  ObjectReader r(*config, key_path(path, "config"), keys);
  if (const Json* name = r.get_non_null("name")) json_io::to_string(*name, r.path_of("name"));
  r.only("reduction", {"sum_over_batch_size"});
  r.only_float32_dtype("dtype");
  spec.from_logits = r.boolean("from_logits", false);
  r.only("axis", {-1});
  r.only("label_smoothing", {0});
  r.only("ignore_class", {});
  r.only("k", {5});
  r.only("from_sorted_ids", {false});
  spec.delta = r.number("delta", spec.delta, "a positive number", {.lo = 0.0, .lo_open = true});
  return spec;
}

Json loss_to_json(const LossSpec& spec) {
  const LossInfo* loss = find_loss(spec.name);
  const bool crossentropy = spec.name.find("crossentropy") != std::string::npos;
  const bool plain =
      !(crossentropy && spec.from_logits) && !(spec.name == "huber" && spec.delta != 1.0);
  if (loss == nullptr || plain) return Json(spec.name);
  Json config = Json::object();
  if (crossentropy) config["from_logits"] = spec.from_logits;
  if (spec.name == "huber") config["delta"] = spec.delta;
  Json doc = Json::object();
  doc["module"] = "keras.losses";
  doc["class_name"] = std::string(loss->class_name);
  doc["config"] = std::move(config);
  return doc;
}

// A metric's identifier and, for an object whose config names it otherwise, that name.
std::pair<std::string, std::string> parse_metric(const Json& v, const std::string& path) {
  if (v.is_string()) return {v.get<std::string>(), ""};
  if (!v.is_object())
    fail_expected(path, "a metric name or {\"class_name\": ..., \"config\": {...}}", v);
  const Json* config = nullptr;
  const std::string class_name = json_io::read_keras_object(v, path, &config);
  // Arguments that fitbench's metrics take only at Keras's defaults.
  ObjectReader r(*config, key_path(path, "config"),
                 {"name", "dtype", "threshold", "thresholds", "top_k", "class_id", "from_logits",
                  "ignore_class", "k", "from_sorted_ids", "num_thresholds", "curve",
                  "summation_method", "multi_label", "num_labels", "label_weights"});
  std::string name;
  if (const Json* n = r.get_non_null("name")) name = json_io::to_string(*n, r.path_of("name"));
  if (class_name == "Accuracy")
    fail(key_path(path, "class_name"),
         "keras.metrics.Accuracy (predictions exactly equal to the labels) is not supported by "
         "fitbench; use \"accuracy\", which Keras resolves to binary, categorical or sparse "
         "categorical accuracy from the shapes");
  r.only_float32_dtype("dtype");
  r.only("threshold", {0.5});
  r.only("thresholds", {});
  r.only("top_k", {});
  r.only("class_id", {});
  r.only("from_logits", {false});
  r.only("ignore_class", {});
  r.only("k", {5});
  r.only("from_sorted_ids", {false});
  r.only("num_thresholds", {200});
  r.only("curve", {"ROC"});
  r.only("summation_method", {"interpolation"});
  r.only("multi_label", {false});
  r.only("num_labels", {});
  r.only("label_weights", {});
  std::string identifier = to_snake_case(class_name);
  if (name == identifier) name.clear();
  if (name.find('/') != std::string::npos || has_control_character(name))
    fail_expected(r.path_of("name"), "a name without '/' or control characters", Json(name));
  return {std::move(identifier), std::move(name)};
}

// "binary_accuracy" -> "BinaryAccuracy": the class of a metric identifier from an object.
std::string to_class_name(const std::string& identifier) {
  std::string out;
  bool upper = true;
  for (char c : identifier) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

}  // namespace

ScheduleSpec parse_schedule(const Json& doc, const std::string& path) {
  if (!doc.is_object()) {
    fail_expected(path, "a learning-rate schedule {\"class_name\": ..., \"config\": {...}}", doc);
  }
  const Json* config = nullptr;
  ScheduleSpec spec;
  spec.class_name = json_io::read_keras_object(doc, path, &config);
  if (find_schedule(spec.class_name) == nullptr) {
    fail_unsupported(key_path(path, "class_name"), doc.at("class_name"),
                     "; expected one of: " + join_names(schedules(), [](const ScheduleInfo& i) {
                       return i.class_name;
                     }));
  }
  const std::string cpath = key_path(path, "config");
  const Bounds positive{.lo = 0.0, .lo_open = true};
  const Bounds non_negative{.lo = 0.0};
  if (spec.class_name == "PiecewiseConstantDecay") {
    ObjectReader r(*config, cpath, {"boundaries", "values", "name"});
    const Json& boundaries = r.require("boundaries", "the steps where the value changes");
    const Json& values = r.require("values", "one more value than boundaries");
    if (!boundaries.is_array())
      fail_expected(r.path_of("boundaries"), "a list of numbers", boundaries);
    if (!values.is_array()) fail_expected(r.path_of("values"), "a list of numbers", values);
    for (size_t i = 0; i < boundaries.size(); ++i) {
      const std::string p = index_path(r.path_of("boundaries"), i);
      spec.boundaries.push_back(json_io::to_number(boundaries[i], p, "a number"));
      if (i > 0 && spec.boundaries[i] <= spec.boundaries[i - 1]) {
        fail_expected(p, "larger than the previous boundary", boundaries[i]);
      }
    }
    for (size_t i = 0; i < values.size(); ++i) {
      spec.values.push_back(
          json_io::to_number(values[i], index_path(r.path_of("values"), i), "a number"));
    }
    if (spec.values.size() != spec.boundaries.size() + 1) {
      fail(r.path_of("values"),
           "must have one more entry than boundaries: " +
               counted(static_cast<long long>(spec.boundaries.size() + 1), "value") + " for " +
               counted(static_cast<long long>(spec.boundaries.size()), "boundary", "boundaries") +
               ", got " + std::to_string(spec.values.size()));
    }
    if (const Json* name = r.get_non_null("name")) json_io::to_string(*name, r.path_of("name"));
    return spec;
  }
  std::vector<std::string> keys;
  for (const FieldInfo& f : find_schedule(spec.class_name)->fields) keys.emplace_back(f.key);
  ObjectReader r(*config, cpath, keys);
  if (const Json* name = r.get_non_null("name")) json_io::to_string(*name, r.path_of("name"));
  spec.initial_learning_rate =
      json_io::to_number(r.require("initial_learning_rate", "the starting learning rate"),
                         r.path_of("initial_learning_rate"), "a positive number", positive);
  spec.decay_steps = json_io::to_number(r.require("decay_steps", "the decay period in steps"),
                                        r.path_of("decay_steps"), "a positive number", positive);
  if (spec.class_name == "ExponentialDecay") {
    spec.decay_rate = json_io::to_number(r.require("decay_rate", "the factor per decay period"),
                                         r.path_of("decay_rate"), "a positive number", positive);
    spec.staircase = r.boolean("staircase", false);
  } else {
    spec.alpha = r.number("alpha", 0.0, "a number in [0, 1]", {.lo = 0.0, .hi = 1.0});
    spec.warmup_target = r.optional_number("warmup_target", "null or a positive number", positive);
    spec.warmup_steps = r.number("warmup_steps", 0.0, "a number >= 0", non_negative);
  }
  return spec;
}

Json schedule_to_ordered_json(const ScheduleSpec& schedule) {
  Json config = Json::object();
  if (schedule.class_name == "PiecewiseConstantDecay") {
    config["boundaries"] = Json::array();
    for (double b : schedule.boundaries) config["boundaries"].push_back(step_count(b));
    config["values"] = schedule.values;
  } else {
    config["initial_learning_rate"] = schedule.initial_learning_rate;
    config["decay_steps"] = step_count(schedule.decay_steps);
    if (schedule.class_name == "ExponentialDecay") {
      config["decay_rate"] = schedule.decay_rate;
      config["staircase"] = schedule.staircase;
    } else {
      config["alpha"] = schedule.alpha;
      config["warmup_target"] =
          schedule.warmup_target ? Json(*schedule.warmup_target) : Json(nullptr);
      config["warmup_steps"] = step_count(schedule.warmup_steps);
    }
  }
  Json doc = Json::object();
  doc["module"] = "keras.optimizers.schedules";
  doc["class_name"] = schedule.class_name;
  doc["config"] = std::move(config);
  return doc;
}

CompileOptions parse_compile(const Json& doc, const std::string& path) {
  ObjectReader r(doc, path,
                 {"optimizer", "loss", "metrics", "loss_weights", "weighted_metrics", "run_eagerly",
                  "steps_per_execution", "jit_compile"});
  CompileOptions options;
  if (const Json* optimizer = r.get_non_null("optimizer")) {
    options.optimizer = parse_optimizer(*optimizer, r.path_of("optimizer"));
  } else {
    options.optimizer.class_name = "RMSprop";  // compile()'s default optimizer="rmsprop"
  }
  options.loss = parse_loss(r.require("loss", "the loss to minimize, e.g. \"binary_crossentropy\""),
                            r.path_of("loss"));
  if (const Json* metrics = r.get_non_null("metrics")) {
    if (!metrics->is_array()) fail_expected(r.path_of("metrics"), "a list of metrics", *metrics);
    for (size_t i = 0; i < metrics->size(); ++i) {
      auto [identifier, name] = parse_metric((*metrics)[i], index_path(r.path_of("metrics"), i));
      options.metrics.push_back(std::move(identifier));
      options.metric_names.push_back(std::move(name));
    }
  }
  r.only("loss_weights", {});
  r.only("weighted_metrics", {Json::array()});
  r.boolean("run_eagerly", false);
  r.only("steps_per_execution", {1});
  if (const Json* jit = r.get_non_null("jit_compile"); jit && !jit->is_boolean()) {
    if (*jit != Json("auto"))
      fail_expected(r.path_of("jit_compile"), "true, false or \"auto\"", *jit);
  }
  return options;
}

CompileOptions parse_compile(const nlohmann::json& doc, const std::string& path) {
  return parse_compile(Json(doc), path);
}

Json compile_to_ordered_json(const CompileOptions& options) {
  Json doc = Json::object();
  doc["optimizer"] = optimizer_to_json(options.optimizer);
  doc["loss"] = loss_to_json(options.loss);
  doc["metrics"] = Json::array();
  for (size_t i = 0; i < options.metrics.size(); ++i) {
    if (options.metric_name(i) == options.metrics[i]) {
      doc["metrics"].push_back(options.metrics[i]);
      continue;
    }
    Json metric = Json::object();
    metric["module"] = "keras.metrics";
    const MetricInfo* info = find_metric(options.metrics[i]);
    metric["class_name"] = info != nullptr && !info->class_name.empty()
                               ? std::string(info->class_name)
                               : to_class_name(options.metrics[i]);
    metric["config"] = {{"name", options.metric_name(i)}};
    doc["metrics"].push_back(std::move(metric));
  }
  return doc;
}

nlohmann::json compile_to_json(const CompileOptions& options) {
  return nlohmann::json(compile_to_ordered_json(options));
}

}  // namespace fitbench
