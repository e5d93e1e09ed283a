// Keras 3 Sequential configs (model.to_json() / get_config()) to and from ModelSpec. Layouts follow
// keras/src/models/sequential.py (get_config), keras/src/layers/layer.py (base keys),
// keras/src/layers/core/{input_layer,dense}.py, keras/src/layers/regularization/dropout.py and
// keras/src/saving/serialization_lib.py (the {"module", "class_name", "config"} wrapper).
#include <algorithm>
#include <limits>
#include <optional>

#include "core/base/error.h"
#include "core/io/json_reader.h"
#include "core/io/keras_json.h"
#include "core/io/keras_objects.h"
#include "core/nn/layer_registry.h"

namespace fitbench {

using json_io::fail;
using json_io::fail_expected;
using json_io::fail_unsupported;
using json_io::index_path;
using json_io::join;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

// Keras's ways of giving a layer's input shape; the batch_ forms include the batch dimension.
// Any layer may give one (only the first layer does so usefully); an InputLayer also takes
// `shape`, as keras.Input(shape=...) does.
const std::vector<std::string> kLayerShapeKeys = {"input_shape", "batch_shape",
                                                  "batch_input_shape"};
const std::vector<std::string> kInputShapeKeys = {"batch_shape", "shape", "input_shape",
                                                  "batch_input_shape"};

std::string format_shape(const std::vector<int64_t>& dims) {
  std::string out = "(None";
  for (int64_t d : dims) out += ", " + std::to_string(d);
  return out + ")";
}

// [null, 4] (or [32, 4]): the dimensions after the batch one.
std::vector<int64_t> parse_batch_shape(const Json& v, const std::string& path) {
  const std::string expected = "a batch shape such as [null, 4]";
  if (!v.is_array() || v.size() < 2) fail_expected(path, expected, v);
  if (!v[0].is_null()) json_io::to_int(v[0], index_path(path, 0), "null or a batch size", 1);
  std::vector<int64_t> dims;
  for (size_t i = 1; i < v.size(); ++i) {
    dims.push_back(json_io::to_int(v[i], index_path(path, i), "a positive integer", 1));
  }
  return dims;
}

struct InputShape {
  std::vector<int64_t> dims;
  std::string place;
};

// At most one of the shape keys; the shape without its batch dimension.
std::optional<InputShape> read_input_shape(const ObjectReader& r,
                                           const std::vector<std::string>& keys) {
  std::optional<InputShape> found;
  std::string found_key;
  for (const std::string& key : keys) {
    const Json* v = r.get_non_null(key);
    if (v == nullptr) continue;
    if (found) fail(r.path_of(key), "cannot be given together with " + found_key);
    const bool with_batch = key.rfind("batch_", 0) == 0;
    found = InputShape{
        with_batch ? parse_batch_shape(*v, r.path_of(key)) : json_io::to_dims(*v, r.path_of(key)),
        r.path_of(key)};
    found_key = key;
  }
  return found;
}

std::string read_layer_name(const ObjectReader& r) {
  const Json* v = r.get_non_null("name");
  if (v == nullptr) return "";
  const std::string name = json_io::to_string(*v, r.path_of("name"));
  // A control character (a tab, a newline, an escape sequence) would break summary()'s table
  // and the window's labels.
  if (name.empty() || name.find('/') != std::string::npos || has_control_character(name)) {
    fail_expected(r.path_of("name"), "a non-empty name without '/' or control characters", *v);
  }
  return name;
}

void read_build_config(const Json& layer, const std::string& path) {
  auto it = layer.find("build_config");
  if (it == layer.end() || it->is_null()) return;
  ObjectReader build(*it, key_path(path, "build_config"), {"input_shape"});
  if (const Json* shape = build.get_non_null("input_shape"); shape && !shape->is_array()) {
    fail_expected(build.path_of("input_shape"), "a shape list", *shape);
  }
}

struct ParsedLayer {
  LayerSpec layer;
  std::optional<InputShape> input_shape;  // a non-input layer's input_shape / batch_shape
};

// A Conv2D's kernel_size or strides: one positive integer for both axes, or a list of two, as
// Keras's standardize_tuple takes them.
std::vector<int64_t> read_pair(const Json& v, const std::string& path) {
  const char* expected = "a positive integer or a list of two, such as [3, 3]";
  if (v.is_number()) {
    const int64_t n = json_io::to_int(v, path, expected, 1);
    return {n, n};
  }
  if (!v.is_array() || v.size() != 2) json_io::fail_expected(path, expected, v);
  return {json_io::to_int(v[0], index_path(path, 0), "a positive integer", 1),
          json_io::to_int(v[1], index_path(path, 1), "a positive integer", 1)};
}

ParsedLayer parse_layer(const Json& v, const std::string& path) {
  const Json* config = nullptr;
  const std::string class_name = json_io::read_keras_object(v, path, &config, {"build_config"});
  if (find_layer_class(class_name) == nullptr) {
    fail_unsupported(key_path(path, "class_name"), v.at("class_name"),
                     "; expected one of: " + join_names(layer_classes(), [](const LayerInfo& l) {
                       return l.class_name;
                     }));
  }
  read_build_config(v, path);
  const std::string cpath = key_path(path, "config");
  ParsedLayer parsed;
  LayerSpec& layer = parsed.layer;
  layer.class_name = class_name;

  if (class_name == "InputLayer") {
    ObjectReader r(*config, cpath,
                   {"batch_shape", "shape", "input_shape", "batch_input_shape", "batch_size",
                    "dtype", "sparse", "ragged", "name", "optional"});
    layer.name = read_layer_name(r);
    auto shape = read_input_shape(r, kInputShapeKeys);
    if (!shape) fail(cpath, "needs \"batch_shape\" (e.g. [null, 4]) or \"shape\" (e.g. [4])");
    layer.shape = shape->dims;
    if (const Json* batch = r.get_non_null("batch_size")) {
      json_io::to_int(*batch, r.path_of("batch_size"), "null or a positive integer", 1);
    }
    r.only_float32_dtype("dtype");
    r.only("sparse", {false});
    r.only("ragged", {false});
    r.only("optional", {false});
    return parsed;
  }

  std::vector<std::string> keys = {"name", "trainable", "dtype"};
  if (class_name == "Dense") {
    keys.insert(keys.end(), {"units", "activation", "use_bias", "kernel_initializer",
                             "bias_initializer", "kernel_regularizer", "bias_regularizer",
                             "activity_regularizer", "kernel_constraint", "bias_constraint",
                             "lora_rank", "lora_alpha", "quantization_config"});
  } else if (class_name == "Conv2D") {
    keys.insert(keys.end(),
                {"filters", "kernel_size", "strides", "padding", "data_format", "dilation_rate",
                 "groups", "activation", "use_bias", "kernel_initializer", "bias_initializer",
                 "kernel_regularizer", "bias_regularizer", "activity_regularizer",
                 "kernel_constraint", "bias_constraint", "lora_rank", "lora_alpha"});
  } else if (class_name == "MaxPooling2D" || class_name == "AveragePooling2D") {
    keys.insert(keys.end(),
                {"pool_size", "strides", "padding", "data_format", "activity_regularizer"});
  } else if (class_name == "Activation") {
    keys.insert(keys.end(), {"activation", "activity_regularizer"});
  } else if (class_name == "Flatten") {
    keys.insert(keys.end(), {"data_format", "activity_regularizer"});
  } else if (class_name == "Reshape") {
    keys.insert(keys.end(), {"target_shape", "activity_regularizer"});
  } else if (class_name == "Rescaling") {
    keys.insert(keys.end(), {"scale", "offset", "activity_regularizer"});
  } else if (class_name == "GlobalAveragePooling2D") {
    keys.insert(keys.end(), {"data_format", "keepdims", "activity_regularizer"});
  } else if (class_name == "LayerNormalization") {
    keys.insert(keys.end(),
                {"axis", "epsilon", "center", "scale", "rms_scaling", "beta_initializer",
                 "gamma_initializer", "beta_regularizer", "gamma_regularizer", "beta_constraint",
                 "gamma_constraint", "activity_regularizer"});
  } else if (class_name == "BatchNormalization") {
    keys.insert(keys.end(), {"axis", "momentum", "epsilon", "center", "scale", "beta_initializer",
                             "gamma_initializer", "moving_mean_initializer",
                             "moving_variance_initializer", "beta_regularizer", "gamma_regularizer",
                             "beta_constraint", "gamma_constraint", "synchronized", "renorm",
                             "renorm_clipping", "renorm_momentum", "activity_regularizer"});
  } else {
    keys.insert(keys.end(), {"rate", "seed", "noise_shape", "activity_regularizer"});
  }
  keys.insert(keys.end(), kLayerShapeKeys.begin(), kLayerShapeKeys.end());
  ObjectReader r(*config, cpath, keys);
  layer.name = read_layer_name(r);
  layer.trainable = r.boolean("trainable", true);
  r.only_float32_dtype("dtype");
  r.only("activity_regularizer", {});
  parsed.input_shape = read_input_shape(r, kLayerShapeKeys);

  if (class_name == "Conv2D") {
    layer.filters = json_io::to_int(r.require("filters", "the number of output channels"),
                                    r.path_of("filters"), "a positive integer", 1);
    layer.kernel_size = read_pair(r.require("kernel_size", "the window's height and width"),
                                  r.path_of("kernel_size"));
    if (const Json* strides = r.get_non_null("strides"))
      layer.strides = read_pair(*strides, r.path_of("strides"));
    layer.padding = r.string("padding", "valid");
    if (layer.padding != "valid" && layer.padding != "same")
      json_io::fail_expected(r.path_of("padding"), "\"valid\" or \"same\"", *r.get("padding"));
    r.only("data_format", {"channels_last"});
    if (const Json* d = r.get_non_null("dilation_rate")) {
      // Two small integers by now, so the value is short enough to echo.
      const std::vector<int64_t> dilation = read_pair(*d, r.path_of("dilation_rate"));
      if (dilation != std::vector<int64_t>{1, 1})
        json_io::fail(r.path_of("dilation_rate"),
                      Json(dilation).dump() + " is not supported by fitbench (only [1, 1] is)");
    }
    r.only("groups", {1});
  }
  if (class_name == "MaxPooling2D" || class_name == "AveragePooling2D") {
    if (const Json* pool = r.get_non_null("pool_size"))
      layer.pool_size = read_pair(*pool, r.path_of("pool_size"));
    // Keras: strides None is the pool size.
    const Json* strides = r.get_non_null("strides");
    layer.strides = strides ? read_pair(*strides, r.path_of("strides")) : layer.pool_size;
    layer.padding = r.string("padding", "valid");
    if (layer.padding != "valid" && layer.padding != "same")
      json_io::fail_expected(r.path_of("padding"), "\"valid\" or \"same\"", *r.get("padding"));
    r.only("data_format", {"channels_last"});
  } else if (class_name == "Dense" || class_name == "Conv2D") {
    if (class_name == "Dense")
      layer.units = json_io::to_int(r.require("units", "the number of output units"),
                                    r.path_of("units"), "a positive integer", 1);
    if (const Json* a = r.get("activation")) {
      layer.activation = parse_activation(*a, r.path_of("activation"));
    }
    layer.use_bias = r.boolean("use_bias", true);
    if (const Json* init = r.get("kernel_initializer")) {
      layer.kernel_initializer = parse_initializer(*init, r.path_of("kernel_initializer"));
    }
    if (const Json* init = r.get("bias_initializer")) {
      layer.bias_initializer = parse_initializer(*init, r.path_of("bias_initializer"));
    }
    if (const Json* reg = r.get("kernel_regularizer")) {
      layer.kernel_regularizer = parse_regularizer(*reg, r.path_of("kernel_regularizer"));
    }
    if (const Json* reg = r.get("bias_regularizer")) {
      layer.bias_regularizer = parse_regularizer(*reg, r.path_of("bias_regularizer"));
    }
    r.only("kernel_constraint", {});
    r.only("bias_constraint", {});
    r.only("lora_rank", {0});
    r.only("lora_alpha", {});
    if (class_name == "Dense") r.only("quantization_config", {});
  } else if (class_name == "Activation") {
    layer.activation =
        parse_activation(r.require("activation", "the activation's name"), r.path_of("activation"));
  } else if (class_name == "Flatten") {
    // channels_first would move the channel axis last before flattening; fitbench's images are
    // channels_last, as Keras's default.
    r.only("data_format", {"channels_last"});
  } else if (class_name == "Reshape") {
    const Json& target = r.require("target_shape", "the shape of one sample after the layer");
    const std::string tpath = r.path_of("target_shape");
    if (!target.is_array() || target.empty() || target.size() > 8)
      fail_expected(tpath, "a list of one to eight dimensions such as [7, 112] or [-1, 28]",
                    target);
    for (size_t i = 0; i < target.size(); ++i)
      layer.target_shape.push_back(json_io::to_int(target[i], index_path(tpath, i),
                                                   "a positive integer or -1 (inferred)", -1));
  } else if (class_name == "GlobalAveragePooling2D") {
    // fitbench's images are channels_last, Keras's default; keepdims would give (1, 1, channels).
    r.only("data_format", {"channels_last"});
    r.only("keepdims", {false});
  } else if (class_name == "LayerNormalization" || class_name == "BatchNormalization") {
    // -1 or [-1] as made, [rank] once built (Keras's build sorts the axes it normalizes over);
    // whether it is the input's last axis is checked when the model is built.
    if (const Json* axis = r.get_non_null("axis")) {
      const std::string apath = r.path_of("axis");
      const char* expected = "an axis such as -1, or a list of one such as [-1]";
      const Json* one = axis;
      if (axis->is_array()) {
        if (axis->size() != 1)
          json_io::fail(apath, "fitbench normalizes over one axis, the last (-1)");
        one = &(*axis)[0];
        layer.axis = {json_io::to_int(*one, index_path(apath, 0), expected, -1)};
      } else {
        layer.axis = {json_io::to_int(*one, apath, expected, -1)};
      }
    }
    layer.epsilon = r.number("epsilon", layer.epsilon, "a number in (0, 1]",
                             {.lo = 0.0, .hi = 1.0, .lo_open = true});
    layer.center = r.boolean("center", true);
    layer.scale_gamma = r.boolean("scale", true);
    if (class_name == "LayerNormalization") {
      r.only("rms_scaling", {false});
    } else {
      layer.momentum =
          r.number("momentum", layer.momentum, "a number in [0, 1]", {.lo = 0.0, .hi = 1.0});
      if (const Json* init = r.get("moving_mean_initializer"))
        layer.moving_mean_initializer =
            parse_initializer(*init, r.path_of("moving_mean_initializer"));
      if (const Json* init = r.get("moving_variance_initializer"))
        layer.moving_variance_initializer =
            parse_initializer(*init, r.path_of("moving_variance_initializer"));
      // Keras on JAX refuses synchronized=True; fitbench's statistics are the global batch's
      // under every strategy, which is what it asks of TensorFlow.
      r.only("synchronized", {false});
      r.only("renorm", {false});
      r.only("renorm_clipping", {});
      r.number("renorm_momentum", 0.99, "a number (unused without renorm)");
    }
    if (const Json* init = r.get("gamma_initializer"))
      layer.gamma_initializer = parse_initializer(*init, r.path_of("gamma_initializer"));
    if (const Json* init = r.get("beta_initializer"))
      layer.beta_initializer = parse_initializer(*init, r.path_of("beta_initializer"));
    if (const Json* reg = r.get("gamma_regularizer"))
      layer.gamma_regularizer = parse_regularizer(*reg, r.path_of("gamma_regularizer"));
    if (const Json* reg = r.get("beta_regularizer"))
      layer.beta_regularizer = parse_regularizer(*reg, r.path_of("beta_regularizer"));
    r.only("gamma_constraint", {});
    r.only("beta_constraint", {});
  } else if (class_name == "Rescaling") {
    // One number each; Keras also takes a list per channel, which fitbench does not.
    const double most = std::numeric_limits<float>::max();
    const json_io::Bounds finite{.lo = -most, .hi = most};
    const char* expected = "a number a float32 holds";
    layer.scale = json_io::to_number(r.require("scale", "the factor each value is multiplied by"),
                                     r.path_of("scale"), expected, finite);
    if (const Json* offset = r.get("offset"))
      layer.offset = json_io::to_number(*offset, r.path_of("offset"), expected, finite);
  } else {
    layer.rate =
        json_io::to_number(r.require("rate", "the fraction of inputs to drop"), r.path_of("rate"),
                           "a number in [0, 1)", {.lo = 0.0, .hi = 1.0, .hi_open = true});
    layer.seed = r.optional_uint64("seed", "null or a non-negative integer");
    r.only("noise_shape", {});
  }
  return parsed;
}

std::optional<std::vector<int64_t>> read_model_build_config(const Json& doc,
                                                            const std::string& path) {
  auto it = doc.find("build_config");
  if (it == doc.end() || it->is_null()) return std::nullopt;
  ObjectReader build(*it, key_path(path, "build_config"), {"input_shape"});
  const Json* shape = build.get_non_null("input_shape");
  if (shape == nullptr) return std::nullopt;
  return parse_batch_shape(*shape, build.path_of("input_shape"));
}

}  // namespace

ModelSpec parse_model_config(const Json& doc, const std::string& path) {
  if (!doc.is_object()) {
    fail_expected(path, "a Keras model config ({\"class_name\": \"Sequential\", ...})", doc);
  }
  const Json* config = &doc;
  std::string cpath = path;
  std::vector<InputShape> build_shapes;
  if (doc.contains("class_name") || doc.contains("config")) {
    const std::string class_name =
        json_io::read_keras_object(doc, path, &config, {"build_config", "compile_config"});
    if (class_name != "Sequential") {
      fail_unsupported(key_path(path, "class_name"), doc.at("class_name"),
                       " (only Sequential models are)");
    }
    cpath = key_path(path, "config");
    if (auto dims = read_model_build_config(doc, path)) {
      build_shapes.push_back({*dims, key_path(key_path(path, "build_config"), "input_shape")});
    }
    auto compile = doc.find("compile_config");
    if (compile != doc.end() && !compile->is_null()) {
      parse_compile(*compile, key_path(path, "compile_config"));
    }
  }
  ObjectReader r(*config, cpath, {"name", "trainable", "dtype", "layers", "build_input_shape"});
  ModelSpec spec;
  spec.name = read_layer_name(r);
  if (spec.name.empty()) spec.name = "sequential";
  r.only("trainable", {true});
  r.only_float32_dtype("dtype");
  if (const Json* shape = r.get_non_null("build_input_shape")) {
    build_shapes.push_back({parse_batch_shape(*shape, r.path_of("build_input_shape")),
                            r.path_of("build_input_shape")});
  }
  const Json& layers = r.require("layers", "the list of layers");
  const std::string lpath = r.path_of("layers");
  if (!layers.is_array()) fail_expected(lpath, "a list of layers", layers);

  std::optional<InputShape> input;
  std::vector<std::pair<std::string, size_t>> names;  // explicit names and their file index
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string path_i = index_path(lpath, i);
    ParsedLayer parsed = parse_layer(layers[i], path_i);
    // Names must be unique, as Sequential.add checks.
    if (!parsed.layer.name.empty()) {
      for (const auto& [other, j] : names) {
        if (other == parsed.layer.name) {
          fail(key_path(key_path(path_i, "config"), "name"),
               "\"" + other + "\" is already the name of layers[" + std::to_string(j) +
                   "]; layer names must be unique");
        }
      }
      names.emplace_back(parsed.layer.name, i);
    }
    if (parsed.layer.class_name == "InputLayer") {
      if (!spec.layers.empty()) {
        fail(key_path(path_i, "class_name"), "an InputLayer can only be the first layer");
      }
      input = InputShape{parsed.layer.shape, key_path(path_i, "config")};
    } else if (parsed.input_shape) {
      if (!spec.layers.empty()) {
        fail(parsed.input_shape->place, "only the first layer can give the input shape");
      }
      // As Sequential.add does for a first layer with an input shape: an InputLayer before it.
      LayerSpec input_layer;
      input_layer.class_name = "InputLayer";
      input_layer.shape = parsed.input_shape->dims;
      spec.layers.push_back(input_layer);
      spec.input_layer_added = true;
      input = parsed.input_shape;
    }
    spec.layers.push_back(std::move(parsed.layer));
  }
  for (const InputShape& build : build_shapes) {
    if (!input) {
      LayerSpec input_layer;
      input_layer.class_name = "InputLayer";
      input_layer.shape = build.dims;
      spec.layers.insert(spec.layers.begin(), input_layer);
      spec.input_layer_added = true;
      input = build;
    } else if (input->dims != build.dims) {
      fail(build.place, "the shape " + format_shape(build.dims) +
                            " does not match the input shape " + format_shape(input->dims) +
                            " given by " + input->place);
    }
  }
  const auto non_input =
      std::count_if(spec.layers.begin(), spec.layers.end(),
                    [](const LayerSpec& l) { return l.class_name != "InputLayer"; });
  if (non_input == 0) fail(lpath, "must contain at least one layer besides the InputLayer");

  return spec;
}

ModelSpec parse_model_config(const nlohmann::json& doc, const std::string& path) {
  return parse_model_config(Json(doc), path);
}

namespace {

// A Dense's or Conv2D's activation, bias and its variables' initializers and regularizers.
void add_weighted_fields(Json& config, const LayerSpec& layer) {
  config["activation"] = layer.activation;
  config["use_bias"] = layer.use_bias;
  config["kernel_initializer"] = initializer_to_json(layer.kernel_initializer);
  config["bias_initializer"] = initializer_to_json(layer.bias_initializer);
  config["kernel_regularizer"] = regularizer_to_json(layer.kernel_regularizer);
  config["bias_regularizer"] = regularizer_to_json(layer.bias_regularizer);
}

}  // namespace

Json model_config_to_ordered_json(const ModelSpec& spec) {
  Json layers = Json::array();
  for (const LayerSpec& layer : spec.layers) {
    Json config = Json::object();
    if (layer.class_name == "InputLayer") {
      Json batch_shape = Json::array({nullptr});
      for (int64_t d : layer.shape) batch_shape.push_back(d);
      config["batch_shape"] = batch_shape;
      if (!layer.name.empty()) config["name"] = layer.name;
    } else {
      if (!layer.name.empty()) config["name"] = layer.name;
      config["trainable"] = layer.trainable;
      if (layer.class_name == "Dense") {
        config["units"] = layer.units;
        add_weighted_fields(config, layer);
      } else if (layer.class_name == "Conv2D") {
        config["filters"] = layer.filters;
        config["kernel_size"] = layer.kernel_size;
        config["strides"] = layer.strides;
        config["padding"] = layer.padding;
        config["data_format"] = "channels_last";
        add_weighted_fields(config, layer);
      } else if (layer.class_name == "MaxPooling2D" || layer.class_name == "AveragePooling2D") {
        config["pool_size"] = layer.pool_size;
        config["padding"] = layer.padding;
        config["strides"] = layer.strides;
        config["data_format"] = "channels_last";
      } else if (layer.class_name == "Activation") {
        config["activation"] = layer.activation;
      } else if (layer.class_name == "Dropout") {
        config["rate"] = layer.rate;
        config["seed"] = layer.seed ? Json(*layer.seed) : Json(nullptr);
      } else if (layer.class_name == "Flatten") {
        config["data_format"] = "channels_last";
      } else if (layer.class_name == "Reshape") {
        Json target = Json::array();
        for (int64_t d : layer.target_shape) target.push_back(d);
        config["target_shape"] = std::move(target);
      } else if (layer.class_name == "GlobalAveragePooling2D") {
        config["data_format"] = "channels_last";
        config["keepdims"] = false;
      } else if (layer.class_name == "Rescaling") {
        config["scale"] = layer.scale;
        config["offset"] = layer.offset;
      } else if (layer.class_name == "LayerNormalization" ||
                 layer.class_name == "BatchNormalization") {
        const bool batch = layer.class_name == "BatchNormalization";
        config["axis"] = layer.axis.size() == 1 ? Json(layer.axis[0]) : Json(layer.axis);
        if (batch) config["momentum"] = layer.momentum;
        config["epsilon"] = layer.epsilon;
        config["center"] = layer.center;
        config["scale"] = layer.scale_gamma;
        config["beta_initializer"] = initializer_to_json(layer.beta_initializer);
        config["gamma_initializer"] = initializer_to_json(layer.gamma_initializer);
        if (batch) {
          config["moving_mean_initializer"] = initializer_to_json(layer.moving_mean_initializer);
          config["moving_variance_initializer"] =
              initializer_to_json(layer.moving_variance_initializer);
        }
        config["beta_regularizer"] = regularizer_to_json(layer.beta_regularizer);
        config["gamma_regularizer"] = regularizer_to_json(layer.gamma_regularizer);
      }
    }
    Json entry = Json::object();
    entry["module"] = "keras.layers";
    entry["class_name"] = layer.class_name;
    entry["config"] = std::move(config);
    layers.push_back(std::move(entry));
  }
  Json config = Json::object();
  config["name"] = spec.name;
  config["layers"] = std::move(layers);
  Json doc = Json::object();
  doc["module"] = "keras";
  doc["class_name"] = "Sequential";
  doc["config"] = std::move(config);
  return doc;
}

nlohmann::json model_config_to_json(const ModelSpec& spec) {
  return nlohmann::json(model_config_to_ordered_json(spec));
}

}  // namespace fitbench
