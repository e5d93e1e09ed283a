// Names and configs follow keras/src/activations/__init__.py, keras/src/initializers/__init__.py
// (class names, snake_case names and the aliases uniform/normal/one/zero),
// keras/src/initializers/random_initializers.py and keras/src/regularizers/regularizers.py.
#include "core/io/keras_objects.h"

#include <algorithm>
#include <optional>
#include <vector>

#include "core/io/json_reader.h"
#include "core/nn/activation_registry.h"
#include "core/nn/initializer_registry.h"

namespace fitbench {

using json_io::fail_expected;
using json_io::fail_unsupported;
using json_io::join;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

std::optional<std::string> initializer_snake_name(const std::string& id) {
  const InitializerInfo* info = find_initializer(id);
  if (info == nullptr) return std::nullopt;
  return std::string(info->name);
}

std::string initializer_choices() {
  return "; expected one of: " +
         join_names(initializers(), [](const InitializerInfo& i) { return i.class_name; });
}

// The config keys of an initializer: its registry fields.
std::vector<std::string> initializer_keys(const InitializerInfo& info) {
  std::vector<std::string> keys;
  for (const FieldInfo& f : info.fields) keys.emplace_back(f.key);
  return keys;
}

}  // namespace

std::string parse_activation(const Json& v, const std::string& path) {
  if (v.is_null()) return "linear";
  const std::string name = json_io::to_string(v, path, "an activation name such as \"relu\"");
  const ActivationInfo* info = find_activation(name);
  if (info == nullptr) {
    fail_unsupported(path, v, "; expected one of: " + std::string(activation_names()));
  }
  // keras.activations.swish and silu are the same function; Keras serializes it as "silu".
  return activation_name(info->value);
}

InitializerSpec parse_initializer(const Json& v, const std::string& path) {
  InitializerSpec spec;
  if (v.is_string()) {
    auto name = initializer_snake_name(v.get<std::string>());
    if (!name) fail_unsupported(path, v, initializer_choices());
    spec.name = *name;
    return spec;
  }
  if (!v.is_object()) {
    fail_expected(path, "an initializer name or {\"class_name\": ..., \"config\": {...}}", v);
  }
  const Json* config = nullptr;
  const std::string class_name = json_io::read_keras_object(v, path, &config);
  auto name = initializer_snake_name(class_name);
  if (!name)
    fail_unsupported(key_path(path, "class_name"), v.at("class_name"), initializer_choices());
  spec.name = *name;
  const std::string cpath = key_path(path, "config");
  const std::string seed_expected = "null or a non-negative integer";
  const InitializerInfo& info = *find_initializer(spec.name);
  if (info.fields.empty()) {
    ObjectReader r(*config, cpath, {});
  } else if (spec.name == "random_normal") {
    ObjectReader r(*config, cpath, initializer_keys(info));
    spec.mean = r.number("mean", spec.mean, "a number");
    spec.stddev = r.number("stddev", spec.stddev, "a number >= 0", {.lo = 0.0});
    spec.seed = r.optional_uint64("seed", seed_expected);
  } else if (spec.name == "random_uniform") {
    ObjectReader r(*config, cpath, initializer_keys(info));
    spec.minval = r.number("minval", spec.minval, "a number");
    spec.maxval = r.number("maxval", spec.maxval, "a number");
    if (spec.maxval < spec.minval) {
      json_io::fail_expected(r.path_of("maxval"), "a number >= minval", Json(spec.maxval));
    }
    spec.seed = r.optional_uint64("seed", seed_expected);
  } else {
    // The VarianceScaling family (Keras 3.16) also names the axes its fans count over; fitbench's
    // kernels are (inputs, units), Keras's default, so only null is taken.
    std::vector<std::string> keys = initializer_keys(info);
    keys.insert(keys.end(), {"input_axes", "output_axes"});
    ObjectReader r(*config, cpath, keys);
    spec.seed = r.optional_uint64("seed", seed_expected);
    r.only("input_axes", {});
    r.only("output_axes", {});
  }
  return spec;
}

Json initializer_to_json(const InitializerSpec& spec) {
  const InitializerInfo* entry = find_initializer(spec.name);
  if (entry == nullptr || entry->name != spec.name)
    return Json(spec.name);  // unknown: written as given, rejected on reading
  Json config = Json::object();
  const Json seed = spec.seed ? Json(*spec.seed) : Json(nullptr);
  if (spec.name == "random_normal") {
    config["mean"] = spec.mean;
    config["stddev"] = spec.stddev;
    config["seed"] = seed;
  } else if (spec.name == "random_uniform") {
    config["minval"] = spec.minval;
    config["maxval"] = spec.maxval;
    config["seed"] = seed;
  } else if (entry->random) {
    config["seed"] = seed;
  }
  Json doc = Json::object();
  doc["module"] = "keras.initializers";
  doc["class_name"] = std::string(entry->class_name);
  doc["config"] = std::move(config);
  return doc;
}

RegularizerSpec parse_regularizer(const Json& v, const std::string& path) {
  RegularizerSpec spec;
  if (v.is_null()) return spec;
  // keras.regularizers.L1 and L2 default to a factor of 0.01, L1L2 to zero for both.
  constexpr double kDefaultFactor = 0.01;
  const std::string choices = "; expected one of: L1, L2, L1L2";
  if (v.is_string()) {
    const std::string id = v.get<std::string>();
    if (id == "l1" || id == "L1") {
      spec.l1 = kDefaultFactor;
    } else if (id == "l2" || id == "L2") {
      spec.l2 = kDefaultFactor;
    } else if (id != "l1l2" && id != "l1_l2" && id != "L1L2") {
      fail_unsupported(path, v, choices);
    }
    return spec;
  }
  if (!v.is_object()) {
    fail_expected(path, "null, a regularizer name or {\"class_name\": ..., \"config\": {...}}", v);
  }
  const Json* config = nullptr;
  const std::string class_name = json_io::read_keras_object(v, path, &config);
  const std::string cpath = key_path(path, "config");
  const std::string expected = "a number >= 0";
  if (class_name == "L1") {
    ObjectReader r(*config, cpath, {"l1"});
    spec.l1 = r.number("l1", kDefaultFactor, expected, {.lo = 0.0});
  } else if (class_name == "L2") {
    ObjectReader r(*config, cpath, {"l2"});
    spec.l2 = r.number("l2", kDefaultFactor, expected, {.lo = 0.0});
  } else if (class_name == "L1L2") {
    ObjectReader r(*config, cpath, {"l1", "l2"});
    spec.l1 = r.number("l1", 0.0, expected, {.lo = 0.0});
    spec.l2 = r.number("l2", 0.0, expected, {.lo = 0.0});
  } else {
    fail_unsupported(key_path(path, "class_name"), v.at("class_name"), choices);
  }
  return spec;
}

Json regularizer_to_json(const RegularizerSpec& spec) {
  if (!spec.active()) return Json(nullptr);
  Json config = Json::object();
  std::string class_name;
  if (spec.l1 != 0.0 && spec.l2 != 0.0) {
    class_name = "L1L2";
    config["l1"] = spec.l1;
    config["l2"] = spec.l2;
  } else if (spec.l1 != 0.0) {
    class_name = "L1";
    config["l1"] = spec.l1;
  } else {
    class_name = "L2";
    config["l2"] = spec.l2;
  }
  Json doc = Json::object();
  doc["module"] = "keras.regularizers";
  doc["class_name"] = class_name;
  doc["config"] = std::move(config);
  return doc;
}

}  // namespace fitbench
