// Model files (docs/model-format.md). Weights are written one row of the last dimension per line,
// each float in the shortest text that reads back to the same float32.
#include "core/io/model_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>

#include "core/base/error.h"
#include "core/io/json_file.h"
#include "core/io/json_reader.h"
#include "core/io/keras_config.h"
#include "core/io/keras_file.h"
#include "core/io/keras_json.h"
#include "core/nn/network.h"

namespace fitbench {

using json_io::fail;
using json_io::fail_expected;
using json_io::index_path;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

constexpr const char* kFormat = "fitbench-model";
constexpr int64_t kVersion = 1;

std::string shape_text(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

NamedWeight parse_weight(const Json& v, const std::string& path, json_io::WeightValues wanted) {
  ObjectReader r(v, path, {"path", "shape", "values"});
  NamedWeight weight;
  const Json& name = r.require("path", "the variable's path, e.g. \"sequential/dense/kernel\"");
  weight.path = json_io::to_string(name, r.path_of("path"), "a variable path");
  if (weight.path.empty()) fail_expected(r.path_of("path"), "a non-empty variable path", name);
  weight.shape =
      json_io::to_dims(r.require("shape", "the variable's shape, e.g. [4, 1]"), r.path_of("shape"));
  if (wanted == json_io::WeightValues::kSkip) return weight;
  const Json& values = r.require("values", "the variable's values, row-major");
  const std::string vpath = r.path_of("values");
  if (!values.is_array()) fail_expected(vpath, "a list of numbers", values);
  // In double, so that a shape such as [2^40, 2^40] cannot wrap around to a small count.
  double product = 1.0;
  for (int64_t d : weight.shape) product *= static_cast<double>(d);
  if (product != static_cast<double>(values.size())) {
    char needs[32];
    std::snprintf(needs, sizeof needs, product < 1e15 ? "%.0f" : "%.3g", product);
    fail(vpath, "has " + counted(static_cast<long long>(values.size()), "value") +
                    " but the shape " + shape_text(weight.shape) + " needs " + needs);
  }
  weight.values.reserve(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const double d = json_io::to_number(values[i], index_path(vpath, i), "a finite number");
    const float f = static_cast<float>(d);
    if (!std::isfinite(f)) fail_expected(index_path(vpath, i), "within float32's range", values[i]);
    weight.values.push_back(f);
  }
  return weight;
}

std::vector<std::string> parse_names(const Json& v, const std::string& path) {
  if (!v.is_array()) fail_expected(path, "a list of column names", v);
  std::vector<std::string> names;
  for (size_t i = 0; i < v.size(); ++i) {
    std::string name = json_io::to_string(v[i], index_path(path, i));
    if (std::find(names.begin(), names.end(), name) != names.end())
      fail(index_path(path, i), "names column \"" + name + "\" twice");
    names.push_back(std::move(name));
  }
  return names;
}

std::vector<double> parse_numbers(const Json& v, const std::string& path, json_io::Bounds bounds,
                                  const std::string& expected) {
  if (!v.is_array()) fail_expected(path, "a list of numbers", v);
  std::vector<double> out;
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(json_io::to_number(v[i], index_path(path, i), expected, bounds));
  return out;
}

ModelData parse_data(const Json& v) {
  if (!v.is_object()) fail_expected("data", "an object", v);
  ObjectReader r(v, "data", {"features", "targets", "mean", "stddev"});
  ModelData data;
  if (const Json* f = r.get_non_null("features")) data.features = parse_names(*f, "data.features");
  if (const Json* t = r.get_non_null("targets")) data.targets = parse_names(*t, "data.targets");
  const Json* mean = r.get_non_null("mean");
  const Json* stddev = r.get_non_null("stddev");
  if (!mean != !stddev) fail("data", "needs both mean and stddev, or neither");
  if (mean) {
    data.mean = parse_numbers(*mean, "data.mean", {}, "a number");
    data.stddev =
        parse_numbers(*stddev, "data.stddev", {.lo = 0.0, .lo_open = true}, "a positive number");
    if (data.stddev.size() != data.mean.size())
      fail("data.stddev", "has " + counted(static_cast<long long>(data.stddev.size()), "value") +
                              " but data.mean has " + std::to_string(data.mean.size()));
  }
  if (!data.features.empty() && !data.mean.empty() && data.mean.size() != data.features.size())
    fail("data.mean", "has " + counted(static_cast<long long>(data.mean.size()), "value") +
                          " but data.features names " + std::to_string(data.features.size()));
  return data;
}

// The weights must be the config's variables, each with its shape: a file edited by hand or put
// together from two models is refused here, before `run --load-weights` (which takes only the
// weights) or evaluate (which takes both) can use half of it. A config without an input shape
// (a model that never declared one) takes its width from the file's first kernel, as summary
// does; a config that does not build is left to what builds it.
void check_weights_match_config(const ModelFile& model) {
  std::vector<NamedWeight> expected;
  try {
    Network net(model.config);
    std::optional<int64_t> input = net.declared_input_units();
    if (!input) {
      Network probe(model.config);
      probe.build(1);
      if (probe.variables().empty()) return;
      const std::string& first = probe.variables().front().path;
      const auto it = std::find_if(model.weights.begin(), model.weights.end(),
                                   [&](const NamedWeight& w) { return w.path == first; });
      // No width to take: loading the weights into a model says what is wrong.
      if (it == model.weights.end() || it->shape.size() != 2) return;
      input = it->shape[0];
    }
    net.build(*input);
    for (const NetworkVariable& v : net.variables()) expected.push_back({v.path, v.shape, {}});
  } catch (const InputError&) {
    return;
  }
  for (size_t i = 0; i < model.weights.size(); ++i) {
    const NamedWeight& w = model.weights[i];
    const auto it = std::find_if(expected.begin(), expected.end(),
                                 [&](const NamedWeight& v) { return v.path == w.path; });
    if (it == expected.end())
      fail(key_path(index_path("weights", i), "path"),
           "\"" + w.path +
               "\" is not a variable of the model in \"config\"; the weights "
               "were saved from another model");
    if (it->shape != w.shape)
      fail(key_path(index_path("weights", i), "shape"),
           "is " + shape_text(w.shape) + " but \"" + w.path + "\" of the model in \"config\" has " +
               shape_text(it->shape) + "; the weights were saved from another model");
  }
  for (const NamedWeight& v : expected)
    if (std::none_of(model.weights.begin(), model.weights.end(),
                     [&](const NamedWeight& w) { return w.path == v.path; }))
      fail("weights", "has no \"" + v.path + "\" " + shape_text(v.shape) +
                          ", a variable of the model in \"config\"");
}

ModelFile parse_model_document(const Json& doc, json_io::WeightValues wanted) {
  // An experiment file given where a model file belongs: say so rather than list its keys.
  if (doc.is_object() && !doc.contains("format") && doc.contains("model") && doc.contains("data"))
    fail("",
         "is an experiment file, not a model file (which has \"format\": \"fitbench-model\"); "
         "train it with `fitbench-cli run`, or save a model with --save-model");
  ObjectReader r(doc, "", {"format", "version", "config", "compile", "weights", "data"});
  const Json& format = r.require("format", "\"fitbench-model\"");
  if (format != Json(kFormat)) fail_expected("format", "\"fitbench-model\"", format);
  const Json& version = r.require("version", "the format version, 1");
  const int64_t v = json_io::to_int(version, "version", "1");
  if (v > kVersion) {
    fail("version", "is " + std::to_string(v) +
                        ": the file was written by a newer fitbench; this one reads version 1");
  }
  if (v != kVersion) fail_expected("version", "1", version);
  ModelFile model;
  model.config = parse_model_config(r.require("config", "the Keras model config"), "config");
  if (const Json* compile = r.get_non_null("compile")) {
    model.compile = parse_compile(*compile, "compile");
  }
  if (const Json* data = r.get_non_null("data")) model.data = parse_data(*data);
  const Json& weights = r.require("weights", "the list of variables");
  if (!weights.is_array()) fail_expected("weights", "a list of variables", weights);
  for (size_t i = 0; i < weights.size(); ++i) {
    NamedWeight weight = parse_weight(weights[i], index_path("weights", i), wanted);
    for (size_t j = 0; j < model.weights.size(); ++j) {
      if (model.weights[j].path == weight.path) {
        fail(key_path(index_path("weights", i), "path"),
             "\"" + weight.path + "\" is already the path of weights[" + std::to_string(j) + "]");
      }
    }
    model.weights.push_back(std::move(weight));
  }
  check_weights_match_config(model);
  return model;
}

// The shortest decimal that reads back (through a double, as JSON readers do) to exactly `f`;
// 9 significant digits always do (IEEE 754 binary32).
std::string float_text(float f) {
  if (f == 0.0f) return std::signbit(f) ? "-0.0" : "0";
  char buffer[48];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), f);
  if (ec == std::errc()) {
    *end = '\0';
    if (static_cast<float>(std::strtod(buffer, nullptr)) == f) return std::string(buffer, end);
  }
  std::snprintf(buffer, sizeof(buffer), "%.9g", static_cast<double>(f));
  return buffer;
}

std::string weights_text(const std::vector<NamedWeight>& weights) {
  if (weights.empty()) return "[]";
  std::string out = "[\n";
  for (size_t w = 0; w < weights.size(); ++w) {
    const NamedWeight& weight = weights[w];
    out += "    {\n      \"path\": " + Json(weight.path).dump() + ",\n";
    out += "      \"shape\": " + shape_text(weight.shape) + ",\n";
    out += "      \"values\": [";
    const size_t row = weight.shape.empty() ? 1 : static_cast<size_t>(weight.shape.back());
    for (size_t i = 0; i < weight.values.size(); ++i) {
      if (i % row == 0)
        out += i == 0 ? "\n        " : ",\n        ";
      else
        out += ", ";
      out += float_text(weight.values[i]);
    }
    out += weight.values.empty() ? "]\n" : "\n      ]\n";
    out += w + 1 < weights.size() ? "    },\n" : "    }\n";
  }
  return out + "  ]";
}

}  // namespace

ModelFile read_model_file(const std::filesystem::path& file) {
  if (is_keras_archive(file)) return read_keras_archive(file);
  if (is_keras_weights(file))
    throw InputError(file.string(),
                     "holds weights only, without the model they belong to: load it into an "
                     "experiment's model (run --load-weights, or initial_weights), or use a "
                     ".keras file, which holds the model too");
  const Json doc = json_io::read_json_file(file);
  try {
    return parse_model_document(doc, json_io::WeightValues::kRead);
  } catch (const InputError& e) {
    throw e.within(file.string());
  }
}

ModelFile model_structure(const nlohmann::ordered_json& doc, const std::filesystem::path& file) {
  try {
    return parse_model_document(doc, json_io::WeightValues::kSkip);
  } catch (const InputError& e) {
    throw e.within(file.string());
  }
}

ModelFile read_weights_file(const std::filesystem::path& file, const ModelFile& like) {
  if (is_keras_weights(file)) return read_keras_weights(file, like);
  ModelFile saved = read_model_file(file);
  if (!is_keras_archive(file)) return saved;
  // Keras loads a layer's variables from the group of the same class and rank (layers/dense_1),
  // whatever the model and layers are named: the archive's weights take the paths of `like`'s.
  std::vector<KerasLayerVars> theirs, ours;
  try {
    theirs = keras_layer_vars(saved.config);
    ours = keras_layer_vars(like.config);
  } catch (const InputError&) {
    return saved;  // a model without an input shape: set_weights says what is missing
  }
  std::map<std::string, std::string> renamed;  // archive path -> this model's
  for (const KerasLayerVars& mine : ours)
    for (const KerasLayerVars& other : theirs)
      if (other.group == mine.group && other.variables.size() == mine.variables.size())
        for (size_t v = 0; v < mine.variables.size(); ++v)
          renamed[other.variables[v].path] = mine.variables[v].path;
  for (NamedWeight& w : saved.weights)
    if (auto it = renamed.find(w.path); it != renamed.end()) w.path = it->second;
  return saved;
}

bool weights_finite(const ModelFile& model) {
  const auto finite = [](const std::vector<float>& values) {
    return std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); });
  };
  for (const NamedWeight& w : model.weights)
    if (!finite(w.values)) return false;
  if (model.optimizer)
    for (const NamedWeight& w : model.optimizer->slot_variables)
      if (!finite(w.values)) return false;
  return true;
}

void check_weights_finite(const ModelFile& model, const std::filesystem::path& file) {
  if (weights_finite(model)) return;
  std::string first;
  for (const NamedWeight& w : model.weights)
    if (first.empty() &&
        !std::all_of(w.values.begin(), w.values.end(), [](float v) { return std::isfinite(v); }))
      first = w.path;
  throw InputError(
      file.string(),
      "not written: training diverged, the weights" +
          (first.empty() ? std::string(" (the optimizer's state)") : " (\"" + first + "\" first)") +
          " are not finite numbers (NaN or infinity); lower the learning rate "
          "(TerminateOnNaN stops a run at the first NaN loss)");
}

void write_model_file(const ModelFile& model, const std::filesystem::path& file,
                      StagedFiles* into) {
  check_weights_finite(model, file);
  if (is_keras_archive(file)) return write_keras_archive(model, file, into);
  if (is_keras_weights(file)) return write_keras_weights(model, file, into);
  for (size_t w = 0; w < model.weights.size(); ++w) {
    const NamedWeight& weight = model.weights[w];
    const std::string place = index_path("weights", w);
    if (static_cast<int64_t>(weight.values.size()) != shape_size(weight.shape)) {
      throw InputError(key_path(place, "values"),
                       "has " + counted(static_cast<long long>(weight.values.size()), "value") +
                           " but the shape " + shape_text(weight.shape) + " needs " +
                           std::to_string(shape_size(weight.shape)))
          .within(file.string());
    }
    for (size_t i = 0; i < weight.values.size(); ++i) {
      if (!std::isfinite(weight.values[i])) {
        throw InputError(index_path(key_path(place, "values"), i),
                         "is not finite (NaN or infinity) and cannot be saved")
            .within(file.string());
      }
    }
  }
  Json head = Json::object();
  head["format"] = kFormat;
  head["version"] = kVersion;
  head["config"] = model_config_to_ordered_json(model.config);
  if (model.compile) head["compile"] = compile_to_ordered_json(*model.compile);
  if (model.data) {
    Json data = Json::object();
    if (!model.data->features.empty()) data["features"] = model.data->features;
    if (!model.data->targets.empty()) data["targets"] = model.data->targets;
    if (!model.data->mean.empty()) {
      data["mean"] = model.data->mean;
      data["stddev"] = model.data->stddev;
    }
    if (!data.empty()) head["data"] = std::move(data);
  }
  // The head's text ends with "\n}\n"; the weights go before that brace.
  std::string text = json_io::dump_document(head);
  text.resize(text.size() - 3);
  text += ",\n  \"weights\": " + weights_text(model.weights) + "\n}\n";
  json_io::write_file_atomically(file, text, into);
}

}  // namespace fitbench
