// keras.layers.Dense: y = activation(x @ kernel + bias). Kernel (input_units, units), bias
// (units). Stateless apart from its spec; thread-safe.
#pragma once

#include "core/nn/activations.h"
#include "core/nn/layer.h"

namespace fitbench {

class Dense : public Layer {
 public:
  explicit Dense(LayerSpec spec);

  Activation activation() const { return activation_; }
  // One axis of features in, (units) out. Keras would apply a Dense to the last axis of a
  // longer shape; fitbench refuses and asks for a Flatten first.
  Shape output_shape(const Shape& in, const std::string& place) const override;
  std::vector<VariableDef> variable_defs(int64_t input_units) const override;
  int64_t cache_units(int64_t) const override;
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;

 private:
  Activation activation_;
};

}  // namespace fitbench
