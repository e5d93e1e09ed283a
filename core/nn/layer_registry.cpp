#include "core/nn/layer_registry.h"

#include <array>
#include <limits>
#include <string>

namespace fitbench {
namespace {

// keras/src/layers/core/{input_layer,dense,activation}.py, regularization/dropout.py.
constexpr std::array<FieldInfo, 1> kInputFields{{
    {.key = "shape", .type = FieldType::kShape, .description = "The shape of one sample."},
}};
constexpr std::array<FieldInfo, 8> kDenseFields{{
    {.key = "units",
     .type = FieldType::kInt,
     .number = 0,
     .description = "How many outputs (neurons) the layer has.",
     .lo = 1,
     .hi = 1 << 20,
     .start = "8"},
    {.key = "activation",
     .type = FieldType::kChoice,
     .text = "linear",
     .description = "The function applied to each output.",
     .choices = "activation",
     .start = "relu"},
    {.key = "use_bias",
     .type = FieldType::kBool,
     .number = 1,
     .description = "Add a learned bias to each unit."},
    {.key = "trainable",
     .type = FieldType::kBool,
     .number = 1,
     .description = "fit() updates the layer's weights."},
    {.key = "kernel_initializer",
     .type = FieldType::kInitializer,
     .text = "glorot_uniform",
     .description = "How the kernel's values start.",
     .choices = "initializer"},
    {.key = "bias_initializer",
     .type = FieldType::kInitializer,
     .text = "zeros",
     .description = "How the bias's values start.",
     .choices = "initializer"},
    {.key = "kernel_regularizer",
     .type = FieldType::kRegularizer,
     .description = "L1/L2 penalty on the kernel added to the loss."},
    {.key = "bias_regularizer",
     .type = FieldType::kRegularizer,
     .description = "L1/L2 penalty on the bias added to the loss."},
}};
constexpr std::array<FieldInfo, 1> kActivationFields{{
    {.key = "activation",
     .type = FieldType::kChoice,
     .text = "linear",
     .description = "The function applied to each input.",
     .choices = "activation",
     .start = "relu"},
}};
constexpr std::array<FieldInfo, 2> kDropoutFields{{
    {.key = "rate",
     .type = FieldType::kFloat,
     .number = 0.0,
     .description = "The fraction of inputs set to zero at each training step.",
     .lo = 0.0,
     .hi = 1.0,
     .start = "0.2"},
    {.key = "seed",
     .type = FieldType::kSeed,
     .description = "Null: the mask is drawn from the global seed; else a fixed seed.",
     .optional = true},
}};

// keras/src/layers/reshaping/{flatten,reshape}.py.
constexpr std::array<FieldInfo, 1> kReshapeFields{{
    {.key = "target_shape",
     .type = FieldType::kShape,
     .description = "The shape of one sample after the layer; one dimension may be -1 (inferred).",
     .start = "[-1]"},
}};

// keras/src/layers/preprocessing/rescaling.py.
constexpr std::array<FieldInfo, 2> kRescalingFields{{
    {.key = "scale",
     .type = FieldType::kFloat,
     .number = 1.0,
     .description = "Each value is multiplied by this (1/255 maps pixels to [0, 1]).",
     .lo = -std::numeric_limits<float>::max(),
     .hi = std::numeric_limits<float>::max(),
     .start = "0.00392156862745098"},
    {.key = "offset",
     .type = FieldType::kFloat,
     .number = 0.0,
     .description = "Then this is added to each value (-1 with scale 1/127.5 maps to [-1, 1]).",
     .lo = -std::numeric_limits<float>::max(),
     .hi = std::numeric_limits<float>::max()},
}};

// keras/src/layers/normalization/layer_normalization.py.
constexpr std::array<FieldInfo, 8> kLayerNormalizationFields{{
    {.key = "epsilon",
     .type = FieldType::kFloat,
     .number = 1e-3,
     .description = "Added to each variance before its square root, so a constant input stays "
                    "finite.",
     .lo = 1e-12,
     .hi = 1.0},
    {.key = "scale",
     .type = FieldType::kBool,
     .number = 1,
     .description = "Multiply the normalized values by a learned gamma."},
    {.key = "center",
     .type = FieldType::kBool,
     .number = 1,
     .description = "Add a learned beta to the normalized values."},
    kDenseFields[3],
    {.key = "gamma_initializer",
     .type = FieldType::kInitializer,
     .text = "ones",
     .description = "How gamma's values start.",
     .choices = "initializer"},
    {.key = "beta_initializer",
     .type = FieldType::kInitializer,
     .text = "zeros",
     .description = "How beta's values start.",
     .choices = "initializer"},
    {.key = "gamma_regularizer",
     .type = FieldType::kRegularizer,
     .description = "L1/L2 penalty on gamma added to the loss."},
    {.key = "beta_regularizer",
     .type = FieldType::kRegularizer,
     .description = "L1/L2 penalty on beta added to the loss."},
}};

// keras/src/layers/normalization/batch_normalization.py.
constexpr std::array<FieldInfo, 11> kBatchNormalizationFields{{
    {.key = "momentum",
     .type = FieldType::kFloat,
     .number = 0.99,
     .description = "How much of the moving mean and variance each training step keeps.",
     .lo = 0.0,
     .hi = 1.0},
    kLayerNormalizationFields[0],
    kLayerNormalizationFields[1],
    kLayerNormalizationFields[2],
    kLayerNormalizationFields[3],
    kLayerNormalizationFields[4],
    kLayerNormalizationFields[5],
    {.key = "moving_mean_initializer",
     .type = FieldType::kInitializer,
     .text = "zeros",
     .description = "How the moving mean starts.",
     .choices = "initializer"},
    {.key = "moving_variance_initializer",
     .type = FieldType::kInitializer,
     .text = "ones",
     .description = "How the moving variance starts.",
     .choices = "initializer"},
    kLayerNormalizationFields[6],
    kLayerNormalizationFields[7],
}};

// keras/src/layers/convolutional/{base_conv,conv2d}.py.
constexpr std::array<FieldInfo, 11> kConv2DFields{{
    {.key = "filters",
     .type = FieldType::kInt,
     .number = 0,
     .description = "How many filters (output channels) the layer has.",
     .lo = 1,
     .hi = 1 << 16,
     .start = "16"},
    {.key = "kernel_size",
     .type = FieldType::kShape,
     .description = "The window's height and width.",
     .start = "[3, 3]"},
    {.key = "strides",
     .type = FieldType::kShape,
     .description = "How far the window moves each time, down and across.",
     .start = "[1, 1]"},
    {.key = "padding",
     .type = FieldType::kChoice,
     .text = "valid",
     .description = "valid: windows inside the image only; same: zeros around it, so a stride "
                    "of 1 keeps its size.",
     .choices = "padding"},
    kDenseFields[1],
    kDenseFields[2],
    kDenseFields[3],
    kDenseFields[4],
    kDenseFields[5],
    kDenseFields[6],
    kDenseFields[7],
}};

// keras/src/layers/pooling/{base_pooling,max_pooling2d,average_pooling2d}.py.
constexpr std::array<FieldInfo, 3> kPoolingFields{{
    {.key = "pool_size",
     .type = FieldType::kShape,
     .description = "The window's height and width.",
     .start = "[2, 2]"},
    {.key = "strides",
     .type = FieldType::kShape,
     .description = "How far the window moves each time, down and across (a file's null: the "
                    "pool size).",
     .start = "[2, 2]"},
    {.key = "padding",
     .type = FieldType::kChoice,
     .text = "valid",
     .description = "valid: windows inside the image only; same: windows over its border too, "
                    "counting only the pixels inside.",
     .choices = "padding"},
}};

constexpr std::array<LayerInfo, 13> kLayers{{
    {kInputLayer, "input_layer", "The model's input: its shape comes from the data.", kInputFields,
     true},
    {"Dense", "dense", "Fully connected: activation(inputs @ kernel + bias).", kDenseFields, false,
     true},
    {"Conv2D", "conv2d",
     "Slides learned filters over an image: (height, width, channels) into (height', width', "
     "filters).",
     kConv2DFields},
    {"MaxPooling2D", "max_pooling2d",
     "Keeps each channel's largest value in each window, e.g. halving an image's height and "
     "width.",
     kPoolingFields},
    {"AveragePooling2D", "average_pooling2d",
     "Keeps each channel's mean over each window, e.g. halving an image's height and width.",
     kPoolingFields},
    {"Activation", "activation", "Applies an activation function to its input.", kActivationFields},
    {"Dropout", "dropout", "Sets a random fraction of its inputs to zero while training.",
     kDropoutFields},
    {"Flatten", "flatten", "Makes each sample one axis of values, e.g. (28, 28) into (784).", {}},
    {"Reshape", "reshape", "Gives each sample another shape with the same number of values.",
     kReshapeFields},
    {"Rescaling", "rescaling", "Multiplies each value by a scale and adds an offset.",
     kRescalingFields},
    {"GlobalAveragePooling2D",
     "global_average_pooling2d",
     "Averages each channel over the image: (height, width, channels) into (channels).",
     {}},
    {"LayerNormalization", "layer_normalization",
     "Shifts and scales each sample's last axis (an image's channels at each pixel) to mean 0 "
     "and variance 1, then by a learned gamma and beta.",
     kLayerNormalizationFields},
    {"BatchNormalization", "batch_normalization",
     "Shifts and scales each channel by the batch's mean and variance while training (their "
     "moving averages at inference), then by a learned gamma and beta.",
     kBatchNormalizationFields},
}};

}  // namespace

std::span<const LayerInfo> layer_classes() { return kLayers; }

const LayerInfo* find_layer_class(std::string_view class_name) {
  for (const LayerInfo& l : kLayers)
    if (l.class_name == class_name) return &l;
  return nullptr;
}

bool layer_has_field(std::string_view class_name, std::string_view key) {
  const LayerInfo* info = find_layer_class(class_name);
  return info != nullptr && find_field(info->fields, key) != nullptr;
}

LayerSpec new_layer(const LayerInfo& info) {
  LayerSpec layer;
  layer.class_name = std::string(info.class_name);
  for (const FieldInfo& f : info.fields) {
    if (f.start.empty()) continue;
    const std::string start(f.start);
    if (f.key == "units") layer.units = std::stoll(start);
    if (f.key == "filters") layer.filters = std::stoll(start);
    if (f.key == "activation") layer.activation = start;
    if (f.key == "rate") layer.rate = std::stod(start);
    if (f.key == "scale") layer.scale = std::stod(start);
    std::vector<int64_t>* list = f.key == "target_shape"  ? &layer.target_shape
                                 : f.key == "kernel_size" ? &layer.kernel_size
                                 : f.key == "strides"     ? &layer.strides
                                 : f.key == "pool_size"   ? &layer.pool_size
                                                          : nullptr;
    if (list) {
      // A JSON list of integers, "[-1]" or "[7, 112]".
      list->clear();
      size_t at = start.find_first_of("-0123456789");
      while (at != std::string::npos) {
        size_t end = 0;
        list->push_back(std::stoll(start.substr(at), &end));
        at = start.find_first_of("-0123456789", at + end);
      }
    }
  }
  return layer;
}

}  // namespace fitbench
