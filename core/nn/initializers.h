// Keras 3's weight initializers (keras/src/initializers/*.py): fills a variable given its Keras
// shape (fans as keras computes them). Free functions; deterministic for a given Rng.
#pragma once

#include "core/nn/layer_spec.h"
#include "core/random.h"
#include "core/tensor.h"

namespace fitbench {

// Checks the name and parameters; throws InputError(place, ...) when invalid.
void validate_initializer(const InitializerSpec& spec, const std::string& place);

// Fills `value` (already sized) for a variable of Keras shape `shape`.
void initialize(const InitializerSpec& spec, const Shape& shape, Rng& rng, Matrix& value);

}  // namespace fitbench
