// keras.layers.GlobalAveragePooling2D (channels_last): a (height, width, channels) sample becomes
// its channels' means, (channels). Rows are row-major (see Layer), so channel c of pixel p is
// value p * channels + c; forward and backward read the shape from the blocks' widths. No
// variables; thread-safe.
#pragma once

#include "core/nn/layer.h"

namespace fitbench {

class GlobalAveragePooling2D : public Layer {
 public:
  using Layer::Layer;
  // Throws InputError at `place` unless `in` has three axes (height, width, channels).
  Shape output_shape(const Shape& in, const std::string& place) const override;
  // The sum over the pixels in float32, then divided by their number, as a float32 mean.
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  // Every pixel's value of channel c gets dy[c] / pixels.
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;
};

}  // namespace fitbench
