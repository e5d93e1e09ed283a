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
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;

 private:
  int64_t channels_ = 1;
};

// keras.layers.BatchNormalization over the last axis (channels_last): each channel is shifted and
// scaled by statistics over every other axis of the batch, then multiplied by gamma and offset
// by beta. Training (a trainable layer): the batch's mean and population variance, over the
// global batch when ForwardContext::batch sums them across the devices that share it, and
// update_state moves the moving statistics toward them (moving = moving * momentum +
// batch * (1 - momentum)). Inference, or a frozen layer in training (Keras 3): the moving
// statistics. Variables in Keras's order: gamma (C) when `scale`, beta (C) when `center`, then
// moving_mean and moving_variance (C each, not trainable). Records its input's channels at
// build(); otherwise thread-safe.
class BatchNormalization : public Layer {
 public:
  using Layer::Layer;
  Shape output_shape(const Shape& in, const std::string& place) const override;
  void build(const Shape& in) override { channels_ = in.back(); }
  std::vector<VariableDef> variable_defs(int64_t input_units) const override;
  // Whether the call normalized by the batch's statistics, the batch's count, the mean and
  // variance used, then backward's sums of dy and dy * xhat.
  int64_t scratch_size() const override { return 2 + 4 * channels_; }
  void batch_sums(bool backward, bool want_dx, std::vector<int64_t>& sizes) const override;
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  // By the batch's statistics, with xhat = (x - mean) * r and g = dy * gamma, means over the
  // global batch: dx = r * (g - mean(g) - xhat * mean(g * xhat)); by the moving ones,
  // dx = dy * gamma * r. dgamma = sum dy * xhat, dbeta = sum dy over this call's rows.
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;
  void update_state(std::span<Matrix* const> params,
                    std::span<const double> scratch) const override;

 private:
  // The index in params of gamma, beta, moving_mean (moving_variance follows it); -1: absent.
  int gamma_index() const { return spec().scale_gamma ? 0 : -1; }
  int beta_index() const { return spec().center ? (spec().scale_gamma ? 1 : 0) : -1; }
  int moving_index() const { return int(spec().scale_gamma) + int(spec().center); }
  int64_t channels_ = 1;
};

}  // namespace fitbench
