#include "core/losses/crossentropy.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <sstream>

#include "core/base/error.h"

namespace fitbench::losses {
namespace {

// Keras's backend.epsilon() and 1 - epsilon as float32 values: JAX clips a float32 tensor, so
// the upper bound is 0.99999988f, not 0.9999999.
constexpr float kLow = 1e-7f;
constexpr float kHigh = static_cast<float>(1.0 - 1e-7);

struct Clipped {
  double value;  // jnp.clip(x, kLow, kHigh)
  double slope;  // its derivative as JAX computes it
};

// jnp.clip is maximum() then minimum(), whose derivatives split a tie evenly (lax's
// _balanced_eq): slope 1 strictly inside the bounds, 1/2 exactly on a bound, 0 outside.
// NaN passes through, as in JAX.
Clipped clip_probability(double x) {
  if (x < kLow) return {kLow, 0.0};
  if (x > kHigh) return {kHigh, 0.0};
  if (x == kLow || x == kHigh) return {x, 0.5};
  return {x, 1.0};
}

// log(1 + exp(x)) without overflow (jax.nn.softplus).
double softplus(double x) { return std::max(x, 0.0) + std::log1p(std::exp(-std::abs(x))); }

double sigmoid(double x) {
  if (x >= 0.0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

const float* row_of(const ConstMatrixRef& m, Index r) { return m.data() + r * m.outerStride(); }
float* row_of(MatrixRef* m, Index r) { return m->data() + r * m->outerStride(); }

// Binary crossentropy of a block (keras/src/backend/jax/nn.py binary_crossentropy, then the mean
// over the last axis of keras/src/losses/losses.py). Writes scale * d(sum)/d(y_pred) when kGrad.
template <bool kGrad>
double binary_block(ConstMatrixRef p, ConstMatrixRef t, bool from_logits, double scale,
                    MatrixRef* grad) {
  assert(t.rows() == p.rows() && t.cols() == p.cols());
  const Index units = p.cols();
  const double g_scale = scale / static_cast<double>(units);
  double total = 0.0;
  for (Index r = 0; r < p.rows(); ++r) {
    const float* pr = row_of(p, r);
    const float* tr = row_of(t, r);
    float* gr = kGrad ? row_of(grad, r) : nullptr;
    double row = 0.0;
    for (Index c = 0; c < units; ++c) {
      const double x = pr[c];
      const double y = tr[c];
      if (from_logits) {
        row += y * softplus(-x) + (1.0 - y) * softplus(x);
        if constexpr (kGrad) gr[c] = static_cast<float>(g_scale * (sigmoid(x) - y));
      } else {
        const Clipped q = clip_probability(x);
        row -= y * std::log(q.value) + (1.0 - y) * std::log(1.0 - q.value);
        if constexpr (kGrad) {
          const double d = (1.0 - y) / (1.0 - q.value) - y / q.value;
          gr[c] = static_cast<float>(g_scale * q.slope * d);
        }
      }
    }
    total += row / static_cast<double>(units);
  }
  return total;
}

// Categorical crossentropy of one row; target(i) is the row's label weight for class i
// (keras/src/backend/jax/nn.py categorical_crossentropy). Writes scale * d(loss)/d(z) into g
// when kGrad.
template <bool kGrad, class Target>
double categorical_row(const float* z, Index units, const Target& target, bool from_logits,
                       double scale, float* g) {
  assert(units > 0);
  double loss = 0.0;
  if (from_logits) {
    double m = z[0];
    for (Index i = 1; i < units; ++i) m = std::max(m, static_cast<double>(z[i]));
    double sum_exp = 0.0;
    double target_sum = 0.0;
    for (Index i = 0; i < units; ++i) {
      sum_exp += std::exp(z[i] - m);
      target_sum += target(i);
    }
    const double log_sum = m + std::log(sum_exp);
    for (Index i = 0; i < units; ++i) loss -= target(i) * (z[i] - log_sum);
    if constexpr (kGrad) {
      // d/dz_k of -sum_i t_i log_softmax_i = softmax_k * sum_i t_i - t_k.
      for (Index k = 0; k < units; ++k) {
        const double softmax = std::exp(z[k] - m) / sum_exp;
        g[k] = static_cast<float>(scale * (softmax * target_sum - target(k)));
      }
    }
    return loss;
  }
  // Probabilities: q = p / sum(p), clipped. With g_i = d(loss)/d(q_i) = -t_i / clip(q_i) times
  // the clip's slope, d(loss)/d(p_k) = (g_k - sum_i g_i q_i) / sum(p).
  double s = 0.0;
  for (Index i = 0; i < units; ++i) s += z[i];
  double gq = 0.0;
  for (Index i = 0; i < units; ++i) {
    const double q = z[i] / s;
    const Clipped c = clip_probability(q);
    const double t = target(i);
    loss -= t * std::log(c.value);
    if constexpr (kGrad) gq += -t / c.value * c.slope * q;
  }
  if constexpr (kGrad) {
    for (Index k = 0; k < units; ++k) {
      const Clipped c = clip_probability(z[k] / s);
      const double gk = -target(k) / c.value * c.slope;
      g[k] = static_cast<float>(scale * (gk - gq) / s);
    }
  }
  return loss;
}

template <bool kGrad>
double categorical_block(ConstMatrixRef p, ConstMatrixRef t, bool from_logits, double scale,
                         MatrixRef* grad) {
  assert(t.rows() == p.rows() && t.cols() == p.cols());
  const Index units = p.cols();
  double total = 0.0;
  for (Index r = 0; r < p.rows(); ++r) {
    const float* tr = row_of(t, r);
    const auto target = [tr](Index i) { return static_cast<double>(tr[i]); };
    total += categorical_row<kGrad>(row_of(p, r), units, target, from_logits, scale,
                                    kGrad ? row_of(grad, r) : nullptr);
  }
  return total;
}

// The class index of a sparse label, as Keras's int32 cast truncates it; throws for a label
// outside [0, units) (Keras's one_hot would silently give a zero loss).
Index class_index(float label, Index row, Index units) {
  if (!(label >= 0.0f && label < static_cast<float>(units))) {
    std::ostringstream out;
    out << "row " << row << " of the batch has the sparse label " << label
        << ", which is not a class index in [0, " << units << ") for an output of " << units
        << " units";
    throw InputError("data", out.str());
  }
  return static_cast<Index>(label);
}

template <bool kGrad>
double sparse_block(ConstMatrixRef p, ConstMatrixRef t, bool from_logits, double scale,
                    MatrixRef* grad) {
  assert(t.rows() == p.rows() && t.cols() == 1);
  const Index units = p.cols();
  double total = 0.0;
  for (Index r = 0; r < p.rows(); ++r) {
    const Index label = class_index(t(r, 0), r, units);
    const auto target = [label](Index i) { return i == label ? 1.0 : 0.0; };
    total += categorical_row<kGrad>(row_of(p, r), units, target, from_logits, scale,
                                    kGrad ? row_of(grad, r) : nullptr);
  }
  return total;
}

}  // namespace

double BinaryCrossentropy::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  return binary_block<false>(y_pred, y_true, from_logits_, 1.0, nullptr);
}

double BinaryCrossentropy::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                            float scale, MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  return binary_block<true>(y_pred, y_true, from_logits_, scale, &grad);
}

double CategoricalCrossentropy::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  return categorical_block<false>(y_pred, y_true, from_logits_, 1.0, nullptr);
}

double CategoricalCrossentropy::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                                 float scale, MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  return categorical_block<true>(y_pred, y_true, from_logits_, scale, &grad);
}

double SparseCategoricalCrossentropy::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  return sparse_block<false>(y_pred, y_true, from_logits_, 1.0, nullptr);
}

double SparseCategoricalCrossentropy::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                                       float scale, MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  return sparse_block<true>(y_pred, y_true, from_logits_, scale, &grad);
}

}  // namespace fitbench::losses
