// The optimizers and learning-rate schedules compile() may name, as registries: Keras's class
// name, its default learning rate and weight decay, the fields of its rule with their Keras
// defaults and the OptimizerSpec member each one sets, how many slot variables it keeps per
// model variable, and a one-line description. make_optimizer, the file reader, summary() and the
// window's Training panel read them. Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/field_info.h"
#include "core/optimizers/optimizer_spec.h"

namespace fitbench {

// A field of an optimizer's rule and the OptimizerSpec member that holds it (a number or a flag).
struct OptimizerField {
  FieldInfo info;
  double OptimizerSpec::*number = nullptr;  // kFloat
  bool OptimizerSpec::*flag = nullptr;      // kBool
};

struct OptimizerInfo {
  std::string_view class_name;  // "Adam"
  std::string_view description;
  double learning_rate = 0.001;            // Keras's default
  double weight_decay = 0.0;               // Keras's default; 0 = none
  std::span<const OptimizerField> fields;  // the rule's own fields, in Keras's order
  // Slot variables per model variable for `spec` (momenta, moments, accumulators).
  int (*slots_per_variable)(const OptimizerSpec& spec) = nullptr;
};

// Every optimizer, in menu order.
std::span<const OptimizerInfo> optimizers();
// The optimizer whose class name is `name`, or that name in lower case ("adam"), or null. (The
// file reader also takes other cases: it looks up the name in lower case.)
const OptimizerInfo* find_optimizer(std::string_view name);
// The fields every optimizer takes (learning_rate, weight_decay and the clipping thresholds).
std::span<const FieldInfo> common_optimizer_fields();

// How a schedule's value moves (for texts that describe one).
enum class ScheduleShape { kExponential, kCosine, kPiecewise };

struct ScheduleInfo {
  std::string_view class_name;  // "ExponentialDecay"
  std::string_view description;
  std::span<const FieldInfo> fields;  // config fields, in Keras's order
  ScheduleShape shape;
};

// Every learning-rate schedule (keras.optimizers.schedules.*).
std::span<const ScheduleInfo> schedules();
const ScheduleInfo* find_schedule(std::string_view class_name);

}  // namespace fitbench
