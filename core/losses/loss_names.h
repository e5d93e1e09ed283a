// Keras's loss identifiers (the function names, the class names and the short aliases of
// keras/src/losses/__init__.py) mapped to fitbench's canonical loss names. Stateless functions,
// thread-safe.
#pragma once

#include <optional>
#include <string>

namespace fitbench {

// The canonical name ("mean_squared_error") of a loss identifier ("mse", "MSE",
// "MeanSquaredError", "mean_squared_error"), or nullopt when fitbench has no such loss. Names are
// case-sensitive, as in Keras.
std::optional<std::string> canonical_loss_name(const std::string& identifier);

}  // namespace fitbench
