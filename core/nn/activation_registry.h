// The activations a layer may name, as a registry: Keras's name, the function, a one-line
// description, and the alias Keras also accepts ("swish" is silu). parse_activation, the file
// reader and the window's activation menus read it. Constant data; thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/nn/activations.h"

namespace fitbench {

struct ActivationInfo {
  std::string_view name;  // Keras's: "relu"
  Activation value;
  std::string_view description;  // one line
  bool alias = false;            // another name of an earlier entry's function ("swish")
};

// Every activation name, the canonical ones first in menu order, then the aliases.
std::span<const ActivationInfo> activations();
// The entry named `name` (canonical or alias), or null.
const ActivationInfo* find_activation(std::string_view name);

}  // namespace fitbench
