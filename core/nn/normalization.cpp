#include "core/nn/normalization.h"

#include <cmath>

#include "core/base/error.h"

namespace fitbench {
namespace {

// A row of `groups` * `channels` values as a (groups, channels) row-major block.
using Groups = Eigen::Map<Matrix, 0, Eigen::OuterStride<>>;
using ConstGroups = Eigen::Map<const Matrix, 0, Eigen::OuterStride<>>;

ConstGroups groups_of(const float* row, Index groups, Index channels) {
  return ConstGroups(row, groups, channels, Eigen::OuterStride<>(channels));
}
Groups groups_of(float* row, Index groups, Index channels) {
  return Groups(row, groups, channels, Eigen::OuterStride<>(channels));
}

}  // namespace

Shape LayerNormalization::output_shape(const Shape& in, const std::string& place) const {
  const auto rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t>& axis = spec().axis;
  // Keras counts the batch axis: the last axis of a (None, 28, 28, 8) batch is 3, or -1.
  if (axis.size() != 1 || (axis[0] != -1 && axis[0] != rank))
    throw InputError(place + ".config.axis",
                     "fitbench normalizes over the last axis only: -1 (or " + std::to_string(rank) +
                         " for an input of shape " + batch_shape_text(in) + ")");
  return in;
}

std::vector<VariableDef> LayerNormalization::variable_defs(int64_t) const {
  std::vector<VariableDef> defs;
  if (spec().scale_gamma)
    defs.push_back({"gamma", {channels_}, spec().gamma_initializer, spec().gamma_regularizer});
  if (spec().center)
    defs.push_back({"beta", {channels_}, spec().beta_initializer, spec().beta_regularizer});
  return defs;
}

void LayerNormalization::forward(std::span<const Matrix* const> params, ConstMatrixRef x,
                                 MatrixRef y, MatrixRef cache, const ForwardContext&) const {
  const Index channels = channels_, groups = x.cols() / channels;
  const Matrix* gamma = spec().scale_gamma ? params[0] : nullptr;
  const Matrix* beta = spec().center ? params[spec().scale_gamma ? 1 : 0] : nullptr;
  const float epsilon = static_cast<float>(spec().epsilon);
  for (Index r = 0; r < x.rows(); ++r) {
    const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
    Groups out = groups_of(y.row(r).data(), groups, channels);
    for (Index p = 0; p < groups; ++p) {
      // The moments in double, then float32 as Keras's: the mean and the variance of a group.
      const auto values = in.row(p).cast<double>().array();
      const double mean = values.mean();
      const auto variance = static_cast<float>((values - mean).square().mean());
      const float inv = 1.0f / std::sqrt(variance + epsilon);
      const auto m = static_cast<float>(mean);
      cache(r, 2 * p) = m;
      cache(r, 2 * p + 1) = inv;
      if (gamma && beta)
        out.row(p).array() = in.row(p).array() * (gamma->array() * inv) +
                             (beta->array() - m * (gamma->array() * inv));
      else if (gamma)
        out.row(p).array() =
            in.row(p).array() * (gamma->array() * inv) - m * (gamma->array() * inv);
      else if (beta)
        out.row(p).array() = in.row(p).array() * inv + (beta->array() - m * inv);
      else
        out.row(p).array() = in.row(p).array() * inv - m * inv;
    }
  }
}

void LayerNormalization::backward(std::span<const Matrix* const> params, ConstMatrixRef x,
                                  ConstMatrixRef, MatrixRef cache, MatrixRef dy, bool want_dx,
                                  MatrixRef dx, std::span<Matrix* const> grads,
                                  const ForwardContext&) const {
  const Index channels = channels_, groups = x.cols() / channels;
  const Matrix* gamma = spec().scale_gamma ? params[0] : nullptr;
  Matrix* dgamma = spec().scale_gamma ? grads[0] : nullptr;
  Matrix* dbeta = spec().center ? grads[spec().scale_gamma ? 1 : 0] : nullptr;
  if (dgamma) dgamma->setZero();
  if (dbeta) dbeta->setZero();
  const auto count = static_cast<float>(channels);
  for (Index r = 0; r < x.rows(); ++r) {
    const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
    Groups grad = groups_of(dy.row(r).data(), groups, channels);
    for (Index p = 0; p < groups; ++p) {
      const float mean = cache(r, 2 * p), inv = cache(r, 2 * p + 1);
      const auto xhat = (in.row(p).array() - mean) * inv;
      if (dgamma) dgamma->array() += grad.row(p).array() * xhat;
      if (dbeta) dbeta->array() += grad.row(p).array();
      if (!want_dx) continue;
      // g = dy * gamma, in place: dy is the layer's to overwrite.
      if (gamma) grad.row(p).array() *= gamma->array();
      const float g_mean = grad.row(p).sum() / count;
      const float gx_mean = (grad.row(p).array() * xhat).sum() / count;
      Groups out = groups_of(dx.row(r).data(), groups, channels);
      out.row(p).array() = inv * (grad.row(p).array() - g_mean - xhat * gx_mean);
    }
  }
}

Shape BatchNormalization::output_shape(const Shape& in, const std::string& place) const {
  const auto rank = static_cast<int64_t>(in.size());
  const std::vector<int64_t>& axis = spec().axis;
  if (axis.size() != 1 || (axis[0] != -1 && axis[0] != rank))
    throw InputError(place + ".config.axis",
                     "fitbench normalizes over the last axis (channels_last) only: -1 (or " +
                         std::to_string(rank) + " for an input of shape " + batch_shape_text(in) +
                         ")");
  return in;
}

std::vector<VariableDef> BatchNormalization::variable_defs(int64_t) const {
  std::vector<VariableDef> defs;
  if (spec().scale_gamma)
    defs.push_back({"gamma", {channels_}, spec().gamma_initializer, spec().gamma_regularizer});
  if (spec().center)
    defs.push_back({"beta", {channels_}, spec().beta_initializer, spec().beta_regularizer});
  defs.push_back({"moving_mean", {channels_}, spec().moving_mean_initializer, {}, false});
  defs.push_back({"moving_variance", {channels_}, spec().moving_variance_initializer, {}, false});
  return defs;
}

void BatchNormalization::batch_sums(bool backward, bool want_dx,
                                    std::vector<int64_t>& sizes) const {
  if (!spec().trainable) return;  // a frozen layer normalizes by its moving statistics
  if (!backward) {
    sizes.push_back(1 + channels_);  // the count and the sums of x
    sizes.push_back(channels_);      // the sums of squared deviations
  } else if (want_dx) {
    sizes.push_back(2 * channels_);  // the sums of dy and of dy * xhat
  }
}

void BatchNormalization::forward(std::span<const Matrix* const> params, ConstMatrixRef x,
                                 MatrixRef y, MatrixRef, const ForwardContext& ctx) const {
  const Index channels = channels_, groups = x.cols() / channels;
  double* count = ctx.scratch.data() + 1;
  double* mean = count + 1;
  double* variance = mean + channels;
  const bool by_batch = ctx.training && spec().trainable;
  ctx.scratch[0] = by_batch ? 1.0 : 0.0;
  if (by_batch) {
    // In double, over the global batch: the count and the sums of x per channel, then the
    // sums of (x - mean)^2 (two passes, so the variance loses nothing to cancellation).
    *count = static_cast<double>(x.rows() * groups);
    std::fill(mean, mean + 2 * channels, 0.0);
    for (Index r = 0; r < x.rows(); ++r) {
      const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
      for (Index p = 0; p < groups; ++p)
        for (Index c = 0; c < channels; ++c) mean[c] += in(p, c);
    }
    if (ctx.batch) ctx.batch->sum(std::span<double>(count, static_cast<size_t>(1 + channels)));
    for (Index c = 0; c < channels; ++c) mean[c] /= *count;
    for (Index r = 0; r < x.rows(); ++r) {
      const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
      for (Index p = 0; p < groups; ++p)
        for (Index c = 0; c < channels; ++c) {
          const double d = in(p, c) - mean[c];
          variance[c] += d * d;
        }
    }
    if (ctx.batch) ctx.batch->sum(std::span<double>(variance, static_cast<size_t>(channels)));
    for (Index c = 0; c < channels; ++c) variance[c] /= *count;
  } else {
    const Matrix& moving_mean = *params[static_cast<size_t>(moving_index())];
    const Matrix& moving_variance = *params[static_cast<size_t>(moving_index() + 1)];
    for (Index c = 0; c < channels; ++c) {
      mean[c] = moving_mean(0, c);
      variance[c] = moving_variance(0, c);
    }
  }
  // Keras's ops.batch_normalization in float32: inv = rsqrt(variance + epsilon) * gamma,
  // y = x * inv + (beta - mean * inv).
  const float epsilon = static_cast<float>(spec().epsilon);
  const Matrix* gamma = gamma_index() >= 0 ? params[size_t(gamma_index())] : nullptr;
  const Matrix* beta = beta_index() >= 0 ? params[size_t(beta_index())] : nullptr;
  for (Index r = 0; r < x.rows(); ++r) {
    const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
    Groups out = groups_of(y.row(r).data(), groups, channels);
    for (Index c = 0; c < channels; ++c) {
      float inv = 1.0f / std::sqrt(static_cast<float>(variance[c]) + epsilon);
      if (gamma) inv *= (*gamma)(0, c);
      float res = -static_cast<float>(mean[c]) * inv;
      if (beta) res += (*beta)(0, c);
      out.col(c).array() = in.col(c).array() * inv + res;
    }
  }
}

void BatchNormalization::backward(std::span<const Matrix* const> params, ConstMatrixRef x,
                                  ConstMatrixRef, MatrixRef, MatrixRef dy, bool want_dx,
                                  MatrixRef dx, std::span<Matrix* const> grads,
                                  const ForwardContext& ctx) const {
  const Index channels = channels_, groups = x.cols() / channels;
  const bool by_batch = ctx.scratch[0] != 0.0;
  const double count = ctx.scratch[1];
  const double* mean = ctx.scratch.data() + 2;
  const double* variance = mean + channels;
  const float epsilon = static_cast<float>(spec().epsilon);
  const Matrix* gamma = gamma_index() >= 0 ? params[size_t(gamma_index())] : nullptr;
  Matrix* dgamma = gamma_index() >= 0 ? grads[size_t(gamma_index())] : nullptr;
  Matrix* dbeta = beta_index() >= 0 ? grads[size_t(beta_index())] : nullptr;
  // Per channel, this call's sum of dy and of dy * xhat, in double (in the scratch).
  double* sum_dy = ctx.scratch.data() + 2 + 2 * channels;
  std::fill(sum_dy, sum_dy + 2 * channels, 0.0);
  double* sum_dy_xhat = sum_dy + channels;
  for (Index r = 0; r < x.rows(); ++r) {
    const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
    const ConstGroups grad =
        groups_of(static_cast<const float*>(dy.row(r).data()), groups, channels);
    for (Index c = 0; c < channels; ++c) {
      const double inv = 1.0 / std::sqrt(variance[c] + double(epsilon));
      for (Index p = 0; p < groups; ++p) {
        const double g = grad(p, c);
        sum_dy[c] += g;
        sum_dy_xhat[c] += g * (in(p, c) - mean[c]) * inv;
      }
    }
  }
  for (Index c = 0; c < channels; ++c) {
    if (dgamma) (*dgamma)(0, c) = static_cast<float>(sum_dy_xhat[c]);
    if (dbeta) (*dbeta)(0, c) = static_cast<float>(sum_dy[c]);
  }
  if (!want_dx) return;
  if (by_batch && ctx.batch)
    ctx.batch->sum(std::span<double>(sum_dy, static_cast<size_t>(2 * channels)));
  for (Index r = 0; r < x.rows(); ++r) {
    const ConstGroups in = groups_of(x.row(r).data(), groups, channels);
    const ConstGroups grad =
        groups_of(static_cast<const float*>(dy.row(r).data()), groups, channels);
    Groups out = groups_of(dx.row(r).data(), groups, channels);
    for (Index c = 0; c < channels; ++c) {
      const double inv = 1.0 / std::sqrt(variance[c] + double(epsilon));
      const double scale = gamma ? double((*gamma)(0, c)) * inv : inv;
      if (!by_batch) {
        out.col(c) = grad.col(c) * static_cast<float>(scale);
        continue;
      }
      const double g_mean = sum_dy[c] / count, gx_mean = sum_dy_xhat[c] / count;
      for (Index p = 0; p < groups; ++p) {
        const double xhat = (in(p, c) - mean[c]) * inv;
        out(p, c) = static_cast<float>(scale * (grad(p, c) - g_mean - xhat * gx_mean));
      }
    }
  }
}

void BatchNormalization::update_state(std::span<Matrix* const> params,
                                      std::span<const double> scratch) const {
  if (scratch[0] == 0.0) return;
  const Index channels = channels_;
  Matrix& moving_mean = *params[static_cast<size_t>(moving_index())];
  Matrix& moving_variance = *params[static_cast<size_t>(moving_index() + 1)];
  // Keras's assign in float32: moving * momentum + batch * (1 - momentum).
  const auto momentum = static_cast<float>(spec().momentum);
  const auto rest = static_cast<float>(1.0 - spec().momentum);
  for (Index c = 0; c < channels; ++c) {
    moving_mean(0, c) =
        moving_mean(0, c) * momentum + static_cast<float>(scratch[2 + size_t(c)]) * rest;
    moving_variance(0, c) = moving_variance(0, c) * momentum +
                            static_cast<float>(scratch[2 + size_t(channels + c)]) * rest;
  }
}

}  // namespace fitbench
