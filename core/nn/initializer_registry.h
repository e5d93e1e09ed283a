// The weight initializers a layer may name (keras.initializers.*), as a registry: Keras's
// snake_case name, class name and short alias, the config fields each takes with their defaults,
// and a one-line description. validate_initializer, the file reader and the layer editor read it.
// Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/field_info.h"

namespace fitbench {

struct InitializerInfo {
  std::string_view name;        // "glorot_uniform" (InitializerSpec::name)
  std::string_view class_name;  // "GlorotUniform"
  std::string_view alias;       // Keras's short alias ("normal" for random_normal), or ""
  std::string_view description;
  std::span<const FieldInfo> fields;  // config fields: mean, stddev, minval, maxval, seed
  bool random = true;                 // draws random numbers (all but zeros and ones)
};

// Every initializer, in menu order.
std::span<const InitializerInfo> initializers();
// The entry whose name, class name or alias is `id`, or null.
const InitializerInfo* find_initializer(std::string_view id);

}  // namespace fitbench
