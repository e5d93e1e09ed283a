// Keras 3's serialized activations, initializers and regularizers (strings such as
// "glorot_uniform" or {"class_name": "L2", "config": {"l2": 0.01}}) to and from the layer spec
// structs. Errors are InputError naming the JSON path. Free functions; no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/nn/layer_spec.h"

namespace fitbench {

// A Keras activation name; null is "linear", "swish" is stored as "silu".
std::string parse_activation(const nlohmann::ordered_json& v, const std::string& path);

// "glorot_uniform", "GlorotUniform", or {"class_name": "RandomNormal", "config": {...}}.
InitializerSpec parse_initializer(const nlohmann::ordered_json& v, const std::string& path);
// Keras's serialized form: {"module": "keras.initializers", "class_name": ..., "config": ...}.
nlohmann::ordered_json initializer_to_json(const InitializerSpec& spec);

// null, "l1"/"l2" (Keras's default factor 0.01) or {"class_name": "L1L2", "config": {...}}.
RegularizerSpec parse_regularizer(const nlohmann::ordered_json& v, const std::string& path);
// null when inactive, else the L1, L2 or L1L2 serialized form.
nlohmann::ordered_json regularizer_to_json(const RegularizerSpec& spec);

}  // namespace fitbench
