// Plain descriptions of a model's layers, as Keras's layer configs name them. Built from an
// experiment/model file (core/io) or from the GUI's widgets; turned into a model by Sequential.
// Value types, no behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// keras.initializers.*; the fields that an initializer does not use are ignored.
struct InitializerSpec {
  std::string name = "glorot_uniform";  // glorot_uniform, glorot_normal, he_uniform, he_normal,
                                        // lecun_uniform, lecun_normal, random_normal,
                                        // random_uniform, zeros, ones
  double mean = 0.0;                    // random_normal
  double stddev = 0.05;                 // random_normal
  double minval = -0.05;                // random_uniform
  double maxval = 0.05;                 // random_uniform
  std::optional<uint64_t> seed;         // none: drawn from the global seed sequence
};

// keras.regularizers.L1L2 (also L1 and L2); both zero means no regularizer.
struct RegularizerSpec {
  double l1 = 0.0;
  double l2 = 0.0;
  bool active() const { return l1 != 0.0 || l2 != 0.0; }
};

struct LayerSpec {
  std::string class_name;  // "InputLayer", "Dense", "Activation", "Dropout", "Flatten", "Reshape",
                           // "Rescaling", "GlobalAveragePooling2D", "Conv2D",
                           // "MaxPooling2D", "AveragePooling2D", "LayerNormalization"
  std::string name;        // empty: Keras's automatic name (dense, dense_1, ...)
  bool trainable = true;

  // InputLayer: the shape without the batch dimension, e.g. {4} or {28, 28}.
  std::vector<int64_t> shape;
  // Reshape: the output shape without the batch dimension; one entry may be -1 (inferred).
  std::vector<int64_t> target_shape;

  // Dense
  int64_t units = 0;
  // Conv2D: filters (output channels), the window (height, width), its step (height, width) and
  // "valid" (no padding) or "same" (zeros around, so the output is ceil(input / stride)).
  int64_t filters = 0;
  std::vector<int64_t> kernel_size{3, 3};
  std::vector<int64_t> strides{1, 1};
  std::string padding = "valid";
  // MaxPooling2D and AveragePooling2D: the window (height, width); `strides` and `padding` as
  // above, a file's absent or null strides being the pool size, as Keras's.
  std::vector<int64_t> pool_size{2, 2};
  // Dense and Conv2D
  bool use_bias = true;
  InitializerSpec kernel_initializer{};
  InitializerSpec bias_initializer{"zeros", 0.0, 0.05, -0.05, 0.05, std::nullopt};
  RegularizerSpec kernel_regularizer{};
  RegularizerSpec bias_regularizer{};

  // Dense, Conv2D and Activation: linear, relu, sigmoid, tanh, softmax, elu, selu, gelu,
  // leaky_relu, softplus, silu (swish is the same function and is stored as silu).
  std::string activation = "linear";

  // Dropout
  double rate = 0.0;
  std::optional<uint64_t> seed;

  // Rescaling: y = x * scale + offset.
  double scale = 1.0;
  double offset = 0.0;

  // LayerNormalization and BatchNormalization: the axis they normalize over, as Keras's config
  // gives it (-1, or the last axis's index counting the batch's; fitbench takes the last axis
  // only), the epsilon added to the variance, and whether it learns a scale (gamma; Keras's
  // "scale", named apart from Rescaling's factor) and an offset (beta; Keras's "center").
  std::vector<int64_t> axis{-1};
  double epsilon = 1e-3;
  bool scale_gamma = true;
  bool center = true;
  InitializerSpec gamma_initializer{"ones", 0.0, 0.05, -0.05, 0.05, std::nullopt};
  InitializerSpec beta_initializer{"zeros", 0.0, 0.05, -0.05, 0.05, std::nullopt};
  RegularizerSpec gamma_regularizer{};
  RegularizerSpec beta_regularizer{};
  // BatchNormalization (also the fields above): how much of the moving statistics each training
  // step keeps, and how they start.
  double momentum = 0.99;
  InitializerSpec moving_mean_initializer{"zeros", 0.0, 0.05, -0.05, 0.05, std::nullopt};
  InitializerSpec moving_variance_initializer{"ones", 0.0, 0.05, -0.05, 0.05, std::nullopt};
};

// keras.Input(shape=(features,)) and keras.layers.Dense(units, activation), the other fields at
// their defaults: for models written in code (tests, benchmarks).
inline LayerSpec input_layer(int64_t features) {
  LayerSpec l;
  l.class_name = "InputLayer";
  l.shape = {features};
  return l;
}
inline LayerSpec dense_layer(int64_t units, const std::string& activation = "linear") {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.activation = activation;
  return l;
}

// A keras.Sequential model's config.
struct ModelSpec {
  std::string name = "sequential";
  std::vector<LayerSpec> layers;  // may start with an InputLayer
  // Set by the file reader when layers[0] is an InputLayer the file's list does not hold (made
  // from the first layer's input_shape or a build_config, as Keras's Sequential makes one): the
  // file's layers[i - 1] is then layers[i].
  bool input_layer_added = false;

  // "model.config.layers[k]", the file's place of layers[i] (an added InputLayer is placed at
  // the first layer, which gave its shape).
  std::string layer_place(size_t i) const {
    const size_t k = input_layer_added && i > 0 ? i - 1 : i;
    return "model.config.layers[" + std::to_string(k) + "]";
  }
};

// The indices in model.layers of the layers whose softmax runs over a single unit (a Dense of 1
// unit, or an Activation after one; `input_units` for one before any Dense, 0 if unknown): they
// always output 1, so nothing before them can learn. Valid Keras, so fitbench-cli warns; the
// window's model panel refuses to run one that no Dense follows (the model outputs a constant)
// and warns of the others.
inline std::vector<size_t> single_unit_softmax_layers(const ModelSpec& model, int64_t input_units) {
  std::vector<size_t> found;
  int64_t units = input_units;
  for (size_t i = 0; i < model.layers.size(); ++i) {
    const LayerSpec& l = model.layers[i];
    if (l.class_name == "Dense") units = l.units;
    if ((l.class_name == "Dense" || l.class_name == "Activation") && l.activation == "softmax" &&
        units == 1)
      found.push_back(i);
  }
  return found;
}

}  // namespace fitbench
