// An experiment as a runnable Keras 3 script, made from its RunPlan (the experiment as it runs:
// overrides applied, the device count, mesh and default layout map decided): the seed, the
// distribution (set before the model is built, guarded for backends without keras.distribution),
// the same data as fitbench's, the model, compile(), fit() with its callbacks and the final
// line fitbench-cli run prints. fitbench-cli export and the window's File > Export use it.
// Free functions on values; thread-safe.
#pragma once

#include <string>

#include "core/run/run_plan.h"

namespace fitbench {

// The script's text (UTF-8, a final newline). The plan's model and data are only read.
std::string keras_script(const RunPlan& plan);

}  // namespace fitbench
