// keras.layers.Rescaling(scale, offset): y = x * scale + offset on every value, in training and
// inference alike (the Keras tutorials' Rescaling(1. / 255) for pixels in [0, 255]). No
// variables; thread-safe.
#pragma once

#include "core/nn/layer.h"

namespace fitbench {

class Rescaling : public Layer {
 public:
  using Layer::Layer;
  // Rounded as Keras's float32 call: the product, then the sum, each to float32 on its own.
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  // dx = dy * scale.
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;
};

}  // namespace fitbench
