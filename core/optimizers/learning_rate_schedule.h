// Validation of Keras 3's learning-rate schedules (keras.optimizers.schedules.*); their values come
// from schedule_value() in optimizer.h. Free functions on value types; thread-safe.
#pragma once

#include <string>

#include "core/optimizers/optimizer_spec.h"

namespace fitbench {

// Checks the class name and the arguments that class uses; throws InputError naming the first bad
// one as Keras's JSON nests it: place + ".class_name" or place + ".config.<field>".
void validate_schedule(const ScheduleSpec& schedule, const std::string& place);

}  // namespace fitbench
