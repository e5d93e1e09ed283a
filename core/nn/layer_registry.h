// The layer classes a Sequential model may hold, as a registry: Keras's class name, its automatic
// name prefix, the config fields fitbench reads with their defaults, and a one-line description.
// The file reader, the network's automatic names and the window's Add menu and layer editor read
// it. Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/field_info.h"
#include "core/nn/layer_spec.h"

namespace fitbench {

struct LayerInfo {
  std::string_view class_name;  // "Dense"
  std::string_view auto_name;   // Keras's automatic name: "dense", then "dense_1", ...
  std::string_view description;
  std::span<const FieldInfo> fields;  // in the order an editor shows them
  bool input = false;                 // InputLayer: made from the data, not added by hand
  bool outputs_units = false;         // sets the output width to its `units` (Dense)
};

inline constexpr std::string_view kInputLayer = "InputLayer";

// Every layer class, InputLayer first.
std::span<const LayerInfo> layer_classes();
// The class named `class_name`, or null.
const LayerInfo* find_layer_class(std::string_view class_name);
// Whether `class_name`'s config has the field `key` (false for an unknown class).
bool layer_has_field(std::string_view class_name, std::string_view key);
// A new layer of `info`'s class as the window's Add menu makes it: each field at its `start`
// value, else its default.
LayerSpec new_layer(const LayerInfo& info);

}  // namespace fitbench
