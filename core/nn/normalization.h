// keras.layers.LayerNormalization over the last axis (Keras's default, axis=-1): each sample's
// values along that axis, e.g. the channels of one pixel of an image, are shifted to mean 0 and
// scaled to variance 1, then multiplied by gamma and offset by beta, in training and inference
// alike. Rows are row-major (see Layer), so a row of P * C values is P groups of C contiguous
// values. Variables in Keras's order: gamma (C) when `scale`, beta (C) when `center`. Records
// its input's channels at build(); otherwise thread-safe.
#pragma once

#include "core/nn/layer.h"

namespace fitbench {

class LayerNormalization : public Layer {
 public:
  using Layer::Layer;
  // Throws InputError at `place` unless the axis is the input's last (-1 or its index).
  Shape output_shape(const Shape& in, const std::string& place) const override;
  void build(const Shape& in) override { channels_ = in.back(); }
  std::vector<VariableDef> variable_defs(int64_t input_units) const override;
  // Each group's mean and 1 / sqrt(variance + epsilon).
  int64_t cache_units(int64_t input_units) const override { return 2 * (input_units / channels_); }

  // Keras's ops.layer_normalization: inv = rsqrt(variance + epsilon) * gamma and
  // y = x * inv + (beta - mean * inv), with the population variance.
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  // With xhat = (x - mean) * r (r = 1 / sqrt(variance + epsilon)) and g = dy * gamma over a
  // group: dx = r * (g - mean(g) - xhat * mean(g * xhat)); dgamma = sum dy * xhat,
  // dbeta = sum dy over every group of every row.
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads) const override;

 private:
  int64_t channels_ = 1;
};

}  // namespace fitbench
