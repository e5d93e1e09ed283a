// The callbacks fit() may name, as a registry: Keras's class name, the config fields each takes
// with Keras's defaults (keras/src/callbacks/*.py), and a one-line description. The file reader
// and the window's Training panel read it. Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/field_info.h"

namespace fitbench {

struct CallbackInfo {
  std::string_view class_name;  // "EarlyStopping"
  std::string_view description;
  std::span<const FieldInfo> fields;  // config fields, in Keras's order
};

inline constexpr std::string_view kEarlyStopping = "EarlyStopping";
inline constexpr std::string_view kReduceLROnPlateau = "ReduceLROnPlateau";
inline constexpr std::string_view kTerminateOnNaN = "TerminateOnNaN";

// Every callback.
std::span<const CallbackInfo> callback_classes();
const CallbackInfo* find_callback_class(std::string_view class_name);

}  // namespace fitbench
