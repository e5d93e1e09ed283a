// Keras 3's weight initializers (keras/src/initializers/*.py): fills a variable given its Keras
// shape (fans as keras computes them) from JAX's generator keyed by a seed, as Keras on JAX does
// (core/python/keras_random.h), so the same seed gives Keras's own initial weights. Free functions.
#pragma once

#include "core/base/tensor.h"
#include "core/nn/layer_spec.h"
#include "core/python/random.h"

namespace fitbench {

// Checks the name and parameters; throws InputError(place, ...) when invalid.
void validate_initializer(const InitializerSpec& spec, const std::string& place);

// Whether the initializer draws random numbers (all but zeros and ones): Keras gives each such
// initializer without an explicit seed one from make_default_seed() when it is constructed.
bool is_random_initializer(const InitializerSpec& spec);

// Fills `value` (already sized, row-major in the Keras shape's order) for a variable of Keras
// shape `shape`; `seed` is the key [seed, 0] Keras hands to JAX (unused by zeros and ones).
void initialize(const InitializerSpec& spec, const Shape& shape, uint32_t seed, Matrix& value);

}  // namespace fitbench
