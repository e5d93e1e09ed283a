// keras.layers.Activation: applies an activation function to its input. No variables;
// thread-safe.
#pragma once

#include "core/nn/activations.h"
#include "core/nn/layer.h"

namespace fitbench {

// keras.layers.Activation: y = activation(x).
class ActivationLayer : public Layer {
 public:
  explicit ActivationLayer(LayerSpec spec);

  // The input's shape; a softmax needs one axis (Keras's runs over the last axis alone).
  Shape output_shape(const Shape& in, const std::string& place) const override;

  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;

 private:
  Activation activation_;
};

}  // namespace fitbench
