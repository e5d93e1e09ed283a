// keras.layers.Dropout: in training, zeroes each input with probability `rate` and scales the
// rest by 1 / (1 - rate); identity otherwise. The mask is a counter-based hash of (seed, step,
// global row, column), so it does not depend on how a batch is split across devices.
#pragma once

#include "core/nn/layer.h"

namespace fitbench {

class Dropout : public Layer {
 public:
  explicit Dropout(LayerSpec spec) : Layer(std::move(spec)) {}

  int64_t cache_units(int64_t input_units) const override { return input_units; }
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;
};

}  // namespace fitbench
