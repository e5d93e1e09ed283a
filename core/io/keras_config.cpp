// Keras 3.16's config.json layout: keras/src/models/sequential.py get_config,
// keras/src/layers/layer.py (name, trainable, dtype), keras/src/layers/core/dense.py,
// keras/src/layers/preprocessing/normalization.py, keras/src/optimizers/base_optimizer.py
// get_config and keras/src/trainers/compile_utils (compile_config); the facts are in
// ../shared/keras-file-format.md and docs/interoperability.md.
#include "core/io/keras_config.h"

#include <cctype>
#include <cmath>
#include <map>
#include <regex>

#include "core/base/error.h"
#include "core/io/json_reader.h"
#include "core/io/keras_json.h"
#include "core/io/keras_objects.h"
#include "core/nn/network.h"

namespace fitbench {

using json_io::Json;
using json_io::key_path;

namespace {

Json keras_object(const std::string& module, const std::string& class_name, Json config) {
  Json o = Json::object();
  o["module"] = module;
  o["class_name"] = class_name;
  o["config"] = std::move(config);
  o["registered_name"] = nullptr;
  return o;
}

// A {"module", "class_name", "config"} object as Keras serializes it, registered_name included.
Json with_registered_name(Json o) {
  if (o.is_object() && o.contains("class_name") && !o.contains("registered_name"))
    o["registered_name"] = nullptr;
  return o;
}

Json dtype_policy() { return keras_object("keras", "DTypePolicy", {{"name", "float32"}}); }

Json batch_shape(const Shape& sample) {
  Json out = Json::array({nullptr});
  for (int64_t d : sample) out.push_back(d);
  return out;
}

Json initializer_json(const InitializerSpec& spec) {
  Json o = with_registered_name(initializer_to_json(spec));
  if (!o.is_object()) return o;
  const std::string c = o["class_name"].get<std::string>();
  // The VarianceScaling family (Glorot, He, Lecun) also names the axes it counts fans over.
  if (c.rfind("Glorot", 0) == 0 || c.rfind("He", 0) == 0 || c.rfind("Lecun", 0) == 0) {
    o["config"]["input_axes"] = nullptr;
    o["config"]["output_axes"] = nullptr;
  }
  return o;
}

// A Dense's or Conv2D's activation, bias and its variables' initializers and regularizers, in
// Keras's order.
void add_weight_config(Json& config, const LayerSpec& l) {
  config["activation"] = l.activation;
  config["use_bias"] = l.use_bias;
  config["kernel_initializer"] = initializer_json(l.kernel_initializer);
  config["bias_initializer"] = initializer_json(l.bias_initializer);
  config["kernel_regularizer"] = with_registered_name(regularizer_to_json(l.kernel_regularizer));
  config["bias_regularizer"] = with_registered_name(regularizer_to_json(l.bias_regularizer));
}

Json layer_json(const LayerSpec& l, const Shape& input_shape) {
  Json config = Json::object();
  config["name"] = l.name;
  config["trainable"] = l.trainable;
  config["dtype"] = dtype_policy();
  if (l.class_name == "Dense") {
    config["units"] = l.units;
    add_weight_config(config, l);
    config["kernel_constraint"] = nullptr;
    config["bias_constraint"] = nullptr;
    config["quantization_config"] = nullptr;
  } else if (l.class_name == "Conv2D") {
    // keras/src/layers/convolutional/base_conv.py get_config, in its order.
    config["filters"] = l.filters;
    config["kernel_size"] = l.kernel_size;
    config["strides"] = l.strides;
    config["padding"] = l.padding;
    config["data_format"] = "channels_last";
    config["dilation_rate"] = Json::array({1, 1});
    config["groups"] = 1;
    add_weight_config(config, l);
    config["activity_regularizer"] = nullptr;
    config["kernel_constraint"] = nullptr;
    config["bias_constraint"] = nullptr;
  } else if (l.class_name == "MaxPooling2D" || l.class_name == "AveragePooling2D") {
    // keras/src/layers/pooling/base_pooling.py get_config, in its order.
    config["pool_size"] = l.pool_size;
    config["padding"] = l.padding;
    config["strides"] = l.strides;
    config["data_format"] = "channels_last";
  } else if (l.class_name == "Activation") {
    config["activation"] = l.activation;
  } else if (l.class_name == "Dropout") {
    config["rate"] = l.rate;
    config["seed"] = l.seed ? Json(*l.seed) : Json(nullptr);
    config["noise_shape"] = nullptr;
  } else if (l.class_name == "Flatten") {
    config["data_format"] = "channels_last";
  } else if (l.class_name == "Reshape") {
    Json target = Json::array();
    for (int64_t d : l.target_shape) target.push_back(d);
    config["target_shape"] = std::move(target);
  } else if (l.class_name == "GlobalAveragePooling2D") {
    config["data_format"] = "channels_last";
    config["keepdims"] = false;
  } else if (l.class_name == "Rescaling") {
    config["scale"] = l.scale;
    config["offset"] = l.offset;
  } else if (l.class_name == "LayerNormalization" || l.class_name == "BatchNormalization") {
    // keras/src/layers/normalization/{layer,batch}_normalization.py get_config, in their order.
    // A built LayerNormalization's axis is the sorted list of the axes it normalizes over,
    // counting the batch's; BatchNormalization's build leaves its axis as given.
    const bool batch = l.class_name == "BatchNormalization";
    config["axis"] = !batch               ? Json::array({static_cast<int64_t>(input_shape.size())})
                     : l.axis.size() == 1 ? Json(l.axis[0])
                                          : Json(l.axis);
    if (batch) config["momentum"] = l.momentum;
    config["epsilon"] = l.epsilon;
    config["center"] = l.center;
    config["scale"] = l.scale_gamma;
    if (!batch) config["rms_scaling"] = false;
    config["beta_initializer"] = initializer_json(l.beta_initializer);
    config["gamma_initializer"] = initializer_json(l.gamma_initializer);
    if (batch) {
      config["moving_mean_initializer"] = initializer_json(l.moving_mean_initializer);
      config["moving_variance_initializer"] = initializer_json(l.moving_variance_initializer);
    }
    config["beta_regularizer"] = with_registered_name(regularizer_to_json(l.beta_regularizer));
    config["gamma_regularizer"] = with_registered_name(regularizer_to_json(l.gamma_regularizer));
    config["beta_constraint"] = nullptr;
    config["gamma_constraint"] = nullptr;
    if (batch) {
      config["synchronized"] = false;
      config["renorm"] = false;
      config["renorm_clipping"] = nullptr;
      config["renorm_momentum"] = 0.99;
    }
  }
  Json o = keras_object("keras.layers", l.class_name, std::move(config));
  // Keras records the shape a layer was built with; Reshape is built when it is made (its
  // __init__ sets built), so it has no build_config.
  if (l.class_name != "Reshape") o["build_config"] = {{"input_shape", batch_shape(input_shape)}};
  return o;
}

Json normalization_json(const std::string& name, int64_t features) {
  Json config = Json::object();
  config["name"] = name;
  config["trainable"] = true;
  config["dtype"] = dtype_policy();
  config["axis"] = Json::array({-1});
  config["invert"] = false;
  config["mean"] = nullptr;  // adapted: mean and variance are the layer's weights
  config["variance"] = nullptr;
  Json o = keras_object("keras.layers", "Normalization", std::move(config));
  o["build_config"] = {{"input_shape", batch_shape({features})}};
  return o;
}

Json optimizer_json(const CompileOptions& options) {
  const OptimizerSpec& spec = options.optimizer;
  const Json fields = compile_to_ordered_json(options)["optimizer"]["config"];
  Json config = Json::object();
  config["name"] = keras_snake_case(spec.class_name);
  if (spec.schedule) {
    config["learning_rate"] = with_registered_name(fields["learning_rate"]);
  } else {
    // Keras keeps the rate in a float32 variable and serializes its value.
    const double lr = spec.learning_rate.value_or(fields.value("learning_rate", 0.001));
    config["learning_rate"] = static_cast<double>(static_cast<float>(lr));
  }
  const auto optional = [](const std::optional<double>& v) { return v ? Json(*v) : Json(nullptr); };
  config["weight_decay"] = optional(spec.weight_decay);
  config["clipnorm"] = optional(spec.clipnorm);
  config["global_clipnorm"] = optional(spec.global_clipnorm);
  config["clipvalue"] = optional(spec.clipvalue);
  config["use_ema"] = false;
  config["ema_momentum"] = 0.99;
  config["ema_overwrite_frequency"] = nullptr;
  config["loss_scale_factor"] = nullptr;
  config["gradient_accumulation_steps"] = nullptr;
  for (const auto& [key, value] : fields.items()) {
    if (!config.contains(key)) config[key] = value;
  }
  return keras_object("keras.optimizers", spec.class_name, std::move(config));
}

Json compile_json(const CompileOptions& options) {
  Json plain = compile_to_ordered_json(options);
  Json c = Json::object();
  c["optimizer"] = optimizer_json(options);
  c["loss"] = with_registered_name(plain["loss"]);
  Json metrics = Json::array();
  for (const Json& m : plain["metrics"]) metrics.push_back(with_registered_name(m));
  c["loss_weights"] = nullptr;
  c["metrics"] = std::move(metrics);
  c["weighted_metrics"] = nullptr;
  c["run_eagerly"] = false;
  c["steps_per_execution"] = 1;
  c["jit_compile"] = true;  // as the JAX backend resolves "auto"
  return c;
}

// The sample shape of the model's InputLayer.
const Shape& input_shape_of(const ModelSpec& spec) {
  if (spec.layers.empty() || spec.layers.front().class_name != "InputLayer" ||
      spec.layers.front().shape.empty())
    throw InputError("config",
                     "the model has no input shape (an InputLayer with batch_shape "
                     "[null, features]), so Keras could not build it");
  return spec.layers.front().shape;
}

int64_t input_units_of(const ModelSpec& spec) { return shape_size(input_shape_of(spec)); }

bool standardizes(const ModelFile& model) { return model.data && !model.data->mean.empty(); }

// The name for the Normalization layer: "normalization" unless a layer has it.
std::string normalization_name(const Network& net) {
  std::string name = kNormalizationGroup;
  for (int k = 1;; ++k) {
    bool taken = false;
    for (const auto& l : net.layers()) taken = taken || l->name() == name;
    if (!taken) return name;
    name = std::string(kNormalizationGroup) + "_" + std::to_string(k);
  }
}

}  // namespace

std::string keras_snake_case(const std::string& class_name) {
  // keras/src/utils/naming.py to_snake_case.
  std::string s = std::regex_replace(class_name, std::regex("(.)([A-Z][a-z]+)"), "$1_$2");
  s = std::regex_replace(s, std::regex("([a-z])([A-Z])"), "$1_$2");
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

int64_t keras_input_units(const ModelSpec& config) { return input_units_of(config); }

std::vector<KerasLayerVars> keras_layer_vars(const ModelSpec& config) {
  Network net(config);
  net.build(input_shape_of(config));
  std::vector<KerasLayerVars> out;
  std::map<std::string, int> repeats;
  for (size_t l = 0; l < net.layers().size(); ++l) {
    const Layer& layer = *net.layers()[l];
    std::string group = keras_snake_case(layer.class_name());
    const int n = repeats[group]++;
    if (n > 0) group += "_" + std::to_string(n);
    KerasLayerVars vars{group, layer.name(), {}};
    for (size_t v = net.first_variable(l); v < net.first_variable(l) + net.variable_count(l); ++v)
      vars.variables.push_back({net.variables()[v].path, net.variables()[v].shape, {}});
    out.push_back(std::move(vars));
  }
  return out;
}

Json keras_model_json(const ModelFile& model) {
  const Shape& sample = input_shape_of(model.config);
  const int64_t features = shape_size(sample);
  Network net(model.config);
  net.build(sample);
  if (standardizes(model) && sample.size() != 1)
    throw InputError("config", "standardized inputs of shape " + batch_shape_text(sample) +
                                   " have no Keras Normalization layer in fitbench's .keras "
                                   "files yet (only one axis of features); scale the data "
                                   "instead");
  Json layers = Json::array();
  Json input = Json::object();
  input["batch_shape"] = batch_shape(sample);
  input["dtype"] = "float32";
  input["sparse"] = false;
  input["ragged"] = false;
  input["name"] = model.config.layers.front().name.empty() ? std::string("input_layer")
                                                           : model.config.layers.front().name;
  input["optional"] = false;
  layers.push_back(keras_object("keras.layers", "InputLayer", std::move(input)));
  if (standardizes(model)) layers.push_back(normalization_json(normalization_name(net), features));
  for (size_t l = 0; l < net.layers().size(); ++l)
    layers.push_back(
        layer_json(net.layers()[l]->spec(), l == 0 ? net.input_shape() : net.layer_shape(l - 1)));
  Json config = Json::object();
  config["name"] = net.name();
  config["trainable"] = true;
  config["dtype"] = dtype_policy();
  config["layers"] = std::move(layers);
  config["build_input_shape"] = batch_shape(sample);
  Json doc = keras_object("keras", "Sequential", std::move(config));
  doc["build_config"] = {{"input_shape", batch_shape(sample)}};
  doc["compile_config"] = model.compile ? compile_json(*model.compile) : Json(nullptr);
  return doc;
}

namespace {

std::vector<double> statistics(const Json& v, const std::string& path) {
  std::vector<double> out;
  if (v.is_number()) return {v.get<double>()};
  if (!v.is_array()) json_io::fail_expected(path, "a list of numbers, one per feature", v);
  for (size_t i = 0; i < v.size(); ++i)
    out.push_back(json_io::to_number(v[i], json_io::index_path(path, i), "a finite number", {}));
  return out;
}

// Reads the Normalization layer at layers[i] and removes it from the list.
void take_normalization(Json& layers, size_t i, const std::string& lpath, KerasModelConfig& out) {
  const std::string path = json_io::index_path(lpath, i);
  const Json* config = nullptr;
  json_io::read_keras_object(layers[i], path, &config, {"build_config"});
  json_io::ObjectReader r(*config, key_path(path, "config"),
                          {"name", "trainable", "dtype", "axis", "invert", "mean", "variance"});
  r.only_float32_dtype("dtype");
  r.only("invert", {false});
  if (const Json* axis = r.get("axis")) {
    if (*axis != Json(-1) && *axis != Json::array({-1}) && *axis != Json::array({1}))
      json_io::fail_unsupported(r.path_of("axis"), *axis,
                                " (only the feature axis, -1, is: fitbench's inputs are rows of "
                                "features)");
  }
  const Json* mean = r.get_non_null("mean");
  const Json* variance = r.get_non_null("variance");
  if ((mean == nullptr) != (variance == nullptr))
    json_io::fail(key_path(path, "config"), "gives one of mean and variance; Keras needs both");
  if (mean != nullptr) {
    out.mean = statistics(*mean, r.path_of("mean"));
    out.variance = statistics(*variance, r.path_of("variance"));
    if (out.mean.size() != out.variance.size())
      json_io::fail(r.path_of("variance"), "has " + std::to_string(out.variance.size()) +
                                               " values but mean has " +
                                               std::to_string(out.mean.size()));
    for (size_t k = 0; k < out.variance.size(); ++k)
      if (out.variance[k] < 0)
        json_io::fail(json_io::index_path(r.path_of("variance"), k), "is negative");
  }
  out.normalization = true;
  layers.erase(layers.begin() + static_cast<std::ptrdiff_t>(i));
}

}  // namespace

KerasModelConfig parse_keras_model_json(const Json& doc, const std::string& place) {
  KerasModelConfig out;
  try {
    Json model = doc;
    Json* layers = nullptr;
    if (model.is_object() && model.contains("config") && model["config"].is_object() &&
        model["config"].contains("layers") && model["config"]["layers"].is_array())
      layers = &model["config"]["layers"];
    if (layers != nullptr) {
      const std::string lpath = "config.layers";
      for (size_t i = 0; i < layers->size(); ++i) {
        const Json& l = (*layers)[i];
        if (!l.is_object() || l.value("class_name", Json()) != Json("Normalization")) continue;
        const bool first_after_input =
            i == 0 || (i == 1 && (*layers)[0].is_object() &&
                       (*layers)[0].value("class_name", Json()) == Json("InputLayer"));
        if (!first_after_input || out.normalization)
          json_io::fail(json_io::index_path(lpath, i),
                        "a Normalization layer is supported only as the model's first layer, "
                        "where fitbench standardizes the inputs");
        take_normalization(*layers, i, lpath, out);
        --i;
      }
    }
    out.model = parse_model_config(model, "");
    auto compile = model.find("compile_config");
    if (compile != model.end() && !compile->is_null())
      out.compile = parse_compile(*compile, "compile_config");
  } catch (const InputError& e) {
    throw e.within(place);
  }
  return out;
}

}  // namespace fitbench
