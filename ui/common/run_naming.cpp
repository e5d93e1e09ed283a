#include "ui/common/run_naming.h"

#include <algorithm>
#include <map>
#include <set>

#include "core/io/experiment.h"

namespace fitbench {
namespace {

using Json = nlohmann::ordered_json;

// A number or a string as it reads in a label: JSON's shortest form, strings unquoted.
std::string jsonValueText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "None";
  return v.dump();
}

const Json* member(const Json& doc, const char* key) {
  if (!doc.is_object()) return nullptr;
  const auto it = doc.find(key);
  return it == doc.end() || it->is_null() ? nullptr : &*it;
}

const Json* path(const Json& doc, std::initializer_list<const char*> keys) {
  const Json* at = &doc;
  for (const char* key : keys)
    if (!(at = member(*at, key))) return nullptr;
  return at;
}

// A member of `base` (the defaults' document) at the same place, a JSON null included; or
// nullptr.
const Json* at(const Json* base, const char* key) {
  if (!base || !base->is_object()) return nullptr;
  const auto it = base->find(key);
  return it == base->end() ? nullptr : &*it;
}

class Collector {
 public:
  void add(std::string key, std::string text) {
    if (!text.empty()) m_settings.push_back({std::move(key), std::move(text)});
  }
  // Every leaf under `doc` that differs from `base` (the same place in the defaults' document;
  // null where it has none) but the keys in `skip`, as "name=value" (name: the leaf's key, with
  // the object it sits in for a nested one: "kernel_regularizer.l2").
  void leaves(const Json& doc, const Json* base, const std::string& prefix,
              const std::string& parent) {
    if (base && *base == doc) return;  // as Keras has it by default
    if (doc.is_object()) {
      for (const auto& [key, value] : doc.items()) {
        if (key == "module") continue;  // where Keras finds the class, not a setting
        // "config" and "class_name" wrap Keras objects: the object's own key names them.
        const std::string shown = key == "config" ? parent : key;
        leaves(value, at(base, key.c_str()), prefix + "." + key, shown);
      }
    } else if (doc.is_array() && !doc.empty() &&
               (doc.front().is_object() || doc.front().is_array())) {
      for (size_t i = 0; i < doc.size(); ++i)
        leaves(doc[i], base && base->is_array() && i < base->size() ? &(*base)[i] : nullptr,
               prefix + "[" + std::to_string(i) + "]", parent);
    } else {
      add(prefix, parent + "=" + (doc.is_array() ? doc.dump() : jsonValueText(doc)));
    }
  }
  std::vector<RunSetting> take() { return std::move(m_settings); }

 private:
  std::vector<RunSetting> m_settings;
};

void optimizerSettings(const Json& compile, const Json* base, Collector& out) {
  const Json* optimizer = member(compile, "optimizer");
  if (!optimizer) return;
  if (optimizer->is_string()) {
    out.add("optimizer", jsonValueText(*optimizer));
    return;
  }
  const Json* config = member(*optimizer, "config");
  const Json* cls = member(*optimizer, "class_name");
  const Json* rate = config ? member(*config, "learning_rate") : nullptr;
  out.add("optimizer",
          (cls ? jsonValueText(*cls) : std::string("optimizer")) +
              (rate && rate->is_number() ? " " + jsonValueText(*rate) : std::string()));
  if (!config) return;
  if (const Json* momentum = member(*config, "momentum");
      momentum && momentum->is_number() && momentum->get<double>() != 0.0)
    out.add("optimizer.momentum", "m" + jsonValueText(*momentum));
  if (const Json* nesterov = member(*config, "nesterov"); nesterov && *nesterov == true)
    out.add("optimizer.nesterov", "nesterov");
  const Json* baseConfig = base ? path(*base, {"optimizer", "config"}) : nullptr;
  for (const auto& [key, value] : config->items()) {
    if (key == "momentum" || key == "nesterov" || key == "name") continue;
    if (key == "learning_rate" && value.is_number()) continue;  // in the optimizer's token
    out.leaves(value, at(baseConfig, key.c_str()), "optimizer." + key, key);
  }
}

// "16-16-1 tanh": the layers' widths (a Dropout as "drop0.2", another layer by its class) and
// the hidden Dense layers' activations; then each layer's other options that are not Keras's
// defaults ("hidden.use_bias=false").
void modelSettings(const Json& model, const Json* base, Collector& out) {
  const Json* layers = path(model, {"config", "layers"});
  if (!layers || !layers->is_array()) return;
  const Json* baseLayers = base ? path(*base, {"config", "layers"}) : nullptr;
  std::string shape;
  std::vector<std::string> activations;
  const size_t count = layers->size();
  for (size_t i = 0; i < count; ++i) {
    const Json& layer = (*layers)[i];
    const Json* cls = member(layer, "class_name");
    const Json* config = member(layer, "config");
    const std::string name = cls ? jsonValueText(*cls) : std::string();
    std::string part = name;
    if (name == "InputLayer") {  // its width, as the Playground writes 2-8-1
      const Json* shapeJson = config ? member(*config, "batch_shape") : nullptr;
      if (!shapeJson || !shapeJson->is_array() || shapeJson->empty()) continue;
      part.clear();
      for (size_t d = 1; d < shapeJson->size(); ++d)
        part += (part.empty() ? "" : "x") + jsonValueText((*shapeJson)[d]);
    }
    const Json* units = config ? member(*config, "units") : nullptr;
    if (name == "Dense" && units) part = jsonValueText(*units);
    if (const Json* rate = config ? member(*config, "rate") : nullptr; name == "Dropout" && rate)
      part = "drop" + jsonValueText(*rate);
    shape += (shape.empty() ? "" : "-") + part;
    if (name == "Dense" && i + 1 < count && config)
      if (const Json* activation = member(*config, "activation"))
        if (std::find(activations.begin(), activations.end(), jsonValueText(*activation)) ==
            activations.end())
          activations.push_back(jsonValueText(*activation));
    if (config) {
      const Json* baseConfig = baseLayers && baseLayers->is_array() && i < baseLayers->size()
                                   ? member((*baseLayers)[i], "config")
                                   : nullptr;
      const std::string layerName =
          member(*config, "name") ? jsonValueText(*member(*config, "name")) : name;
      for (const auto& [key, value] : config->items()) {
        if (key == "name" || key == "units" || key == "rate" || key == "batch_shape") continue;
        if (key == "activation" && i + 1 < count) continue;
        out.leaves(value, at(baseConfig, key.c_str()), "model." + layerName + "." + key,
                   layerName + "." + key);
      }
    }
  }
  std::string text = shape;
  for (size_t i = 0; i < activations.size(); ++i) text += (i == 0 ? " " : "/") + activations[i];
  out.add("model", text);
}

void devicesSettings(const Json& doc, const Json& base, Collector& out) {
  const Json* count = path(doc, {"devices", "count"});
  const Json* dist = member(doc, "distribution");
  const Json* cls = dist ? member(*dist, "class_name") : nullptr;
  std::string text;
  if (count && count->is_number_integer())
    text = count->get<long long>() == 1 ? "1 device" : jsonValueText(*count) + " devices";
  if (cls) text += (text.empty() ? "" : " ") + jsonValueText(*cls);
  if (const Json* shape = dist ? path(*dist, {"mesh", "shape"}) : nullptr;
      shape && shape->is_array()) {
    std::string dims;
    for (const Json& d : *shape) dims += (dims.empty() ? "" : "x") + jsonValueText(d);
    text += " " + dims;
  }
  out.add("devices", text);
  if (const Json* map = dist ? member(*dist, "layout_map") : nullptr)
    out.add("distribution.layout_map", "layout " + map->dump());
  const Json* baseDist = member(base, "distribution");
  if (dist)
    for (const auto& [key, value] : dist->items())
      if (key != "class_name" && key != "mesh" && key != "layout_map")
        out.leaves(value, at(baseDist, key.c_str()), "distribution." + key, key);
  const Json* baseDevices = member(base, "devices");
  if (const Json* devices = member(doc, "devices"))
    for (const auto& [key, value] : devices->items())
      if (key != "count") out.leaves(value, at(baseDevices, key.c_str()), "devices." + key, key);
}

void dataSettings(const Json& data, const Json* base, Collector& out) {
  for (const auto& [key, value] : data.items()) {
    if (key == "generator" || key == "csv")
      out.add("data." + key, jsonValueText(value));
    else if (key == "samples")
      out.add("data.samples", jsonValueText(value) + " samples");
    else if (key == "noise")
      out.add("data.noise", "noise " + jsonValueText(value));
    else if (key == "seed")
      out.add("data.seed", "data seed " + jsonValueText(value));
    else
      out.leaves(value, at(base, key.c_str()), "data." + key, key);
  }
}

void fitSettings(const Json& fit, const Json* base, Collector& out) {
  if (const Json* batch = member(fit, "batch_size"))
    out.add("fit.batch", "batch " + jsonValueText(*batch));
  if (const Json* epochs = member(fit, "epochs"))
    out.add("fit.epochs", jsonValueText(*epochs) + " epochs");
  if (const Json* split = member(fit, "validation_split"))
    out.add("fit.validation_split", "val " + jsonValueText(*split));
  if (const Json* shuffle = member(fit, "shuffle"); shuffle && *shuffle == false)
    out.add("fit.shuffle", "no shuffle");
  for (const auto& [key, value] : fit.items())
    if (key != "batch_size" && key != "epochs" && key != "validation_split" && key != "shuffle" &&
        key != "verbose")
      out.leaves(value, at(base, key.c_str()), "fit." + key, key);
}

// The experiment with every option a run's settings leave out at Keras's (or fitbench's)
// default: its document is what `leaves` compares with, so that a setting reads only when it
// is not the default.
ExperimentSpec defaults(const ExperimentSpec& spec) {
  ExperimentSpec base;
  base.compile.optimizer.class_name = spec.compile.optimizer.class_name;
  base.compile.loss = spec.compile.loss;
  base.compile.metrics = spec.compile.metrics;
  base.model = spec.model;
  for (LayerSpec& layer : base.model.layers) {
    LayerSpec plain;
    plain.class_name = layer.class_name;
    plain.name = layer.name;
    plain.shape = layer.shape;
    plain.units = layer.units;
    plain.activation = layer.activation;
    plain.rate = layer.rate;
    layer = plain;
  }
  base.data.generator = spec.data.generator;
  base.data.csv = spec.data.csv;
  base.data.dataset = spec.data.dataset;
  base.devices.count = spec.devices.count;
  base.distribution.class_name = spec.distribution.class_name;
  return base;
}

}  // namespace

std::vector<RunSetting> run_settings(const ExperimentSpec& spec) {
  const Json experiment = experiment_to_json(spec);
  const Json base = experiment_to_json(defaults(spec));
  Collector out;
  if (const Json* compile = member(experiment, "compile")) {
    const Json* baseCompile = member(base, "compile");
    optimizerSettings(*compile, baseCompile, out);
    if (const Json* loss = member(*compile, "loss"))
      out.add("compile.loss", loss->is_string() ? jsonValueText(*loss) : loss->dump());
    for (const auto& [key, value] : compile->items())
      if (key != "optimizer" && key != "loss" && key != "metrics")
        out.leaves(value, at(baseCompile, key.c_str()), "compile." + key, key);
  }
  if (const Json* model = member(experiment, "model"))
    modelSettings(*model, member(base, "model"), out);
  if (const Json* fit = member(experiment, "fit")) fitSettings(*fit, member(base, "fit"), out);
  devicesSettings(experiment, base, out);
  if (const Json* data = member(experiment, "data")) dataSettings(*data, member(base, "data"), out);
  if (const Json* seed = member(experiment, "seed"))
    out.add("seed", "seed " + jsonValueText(*seed));
  if (const Json* weights = member(experiment, "initial_weights"))
    out.add("initial_weights", "from " + jsonValueText(*weights));
  return out.take();
}

std::vector<std::string> labels_by_difference(const std::vector<std::vector<RunSetting>>& runs,
                                              const std::vector<std::string>& fallback) {
  // Every key in the order the runs list them, and each run's text for it ("" where unset).
  std::vector<std::string> keys;
  std::vector<std::map<std::string, std::string>> texts(runs.size());
  for (size_t r = 0; r < runs.size(); ++r)
    for (const RunSetting& s : runs[r]) {
      if (std::find(keys.begin(), keys.end(), s.key) == keys.end()) keys.push_back(s.key);
      texts[r][s.key] = s.text;
    }
  const auto textOf = [&](size_t r, const std::string& key) {
    const auto it = texts[r].find(key);
    return it == texts[r].end() ? std::string() : it->second;
  };
  std::vector<std::string> differing;
  for (const std::string& key : keys)
    for (size_t r = 1; r < runs.size(); ++r)
      if (textOf(r, key) != textOf(0, key)) {
        differing.push_back(key);
        break;
      }
  // Keys follow the first run's order; a key only later runs have goes where they list it.
  std::vector<std::string> labels(runs.size());
  for (size_t r = 0; r < runs.size(); ++r) {
    for (const RunSetting& s : runs[r])
      if (std::find(differing.begin(), differing.end(), s.key) != differing.end())
        labels[r] += (labels[r].empty() ? "" : " ") + s.text;
    if (labels[r].empty()) labels[r] = r < fallback.size() ? fallback[r] : std::string();
  }
  std::map<std::string, int> uses;
  for (const std::string& label : labels) ++uses[label];
  for (size_t r = 0; r < runs.size(); ++r)
    if (uses[labels[r]] > 1 && r < fallback.size() && labels[r] != fallback[r])
      labels[r] += " (" + fallback[r] + ")";
  return labels;
}

std::string settings_text(const std::vector<RunSetting>& settings) {
  std::string text;
  for (const RunSetting& s : settings) text += (text.empty() ? "" : ", ") + s.text;
  return text;
}

}  // namespace fitbench
