// Keras 3's activation functions (keras/src/activations/activations.py) applied row-wise to a
// block of samples, with their derivatives for backprop. Stateless free functions; thread-safe.
#pragma once

#include <string>

#include "core/base/tensor.h"

namespace fitbench {

enum class Activation {
  kLinear,
  kRelu,
  kSigmoid,
  kTanh,
  kSoftmax,
  kElu,
  kSelu,
  kGelu,
  kLeakyRelu,
  kSoftplus,
  kSilu
};

// Parses a Keras activation name ("swish" is silu); throws InputError(place, ...) if unknown.
Activation parse_activation(const std::string& name, const std::string& place);
// The canonical Keras name ("silu" for swish).
std::string activation_name(Activation a);
// The names parse_activation accepts, comma separated (for error messages and the GUI).
const char* activation_names();

// out = f(z). `out` may alias `z` for every activation.
void activation_forward(Activation a, ConstMatrixRef z, MatrixRef out);

// Whether activation_backward needs the pre-activation z itself: false when the derivative follows
// from the output alone (linear, sigmoid, tanh, softmax), so a layer need not keep z.
bool activation_needs_z(Activation a);

// In place: grad (dL/d out) becomes dL/dz, given the pre-activation z and the output out = f(z).
void activation_backward(Activation a, ConstMatrixRef z, ConstMatrixRef out, MatrixRef grad);

}  // namespace fitbench
