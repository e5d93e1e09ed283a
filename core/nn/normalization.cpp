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
                                  MatrixRef dx, std::span<Matrix* const> grads) const {
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

}  // namespace fitbench
