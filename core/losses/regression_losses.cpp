#include "core/losses/regression_losses.h"

#include <cassert>
#include <cmath>

namespace fitbench::losses {
namespace {

struct Term {
  double value;  // the elementwise loss of e = y_pred - y_true
  double slope;  // its derivative with respect to y_pred
};

// Sum over rows of the mean over units of term(e) (keras/src/losses/losses.py: ops.mean(...,
// axis=-1)); writes scale * d(sum)/d(y_pred) when kGrad.
template <bool kGrad, class TermFn>
double mean_over_units(ConstMatrixRef p, ConstMatrixRef t, double scale, MatrixRef* grad,
                       const TermFn& term) {
  assert(t.rows() == p.rows() && t.cols() == p.cols());
  const Index units = p.cols();
  const double g_scale = scale / static_cast<double>(units);
  double total = 0.0;
  for (Index r = 0; r < p.rows(); ++r) {
    const float* pr = p.data() + r * p.outerStride();
    const float* tr = t.data() + r * t.outerStride();
    double row = 0.0;
    for (Index c = 0; c < units; ++c) {
      const Term e = term(static_cast<double>(pr[c]) - static_cast<double>(tr[c]));
      row += e.value;
      if constexpr (kGrad) (*grad)(r, c) = static_cast<float>(g_scale * e.slope);
    }
    total += row / static_cast<double>(units);
  }
  return total;
}

// square(y_true - y_pred) (keras/src/losses/losses.py mean_squared_error).
Term squared(double e) { return {e * e, 2.0 * e}; }

// abs(y_true - y_pred) (keras/src/losses/losses.py mean_absolute_error). JAX's derivative of
// abs(x) is +1 for x >= 0, so d/d(y_pred) is -1 where y_pred <= y_true and +1 above.
Term absolute(double e) { return {std::abs(e), e > 0.0 ? 1.0 : -1.0}; }

// keras/src/losses/losses.py huber: 0.5 e^2 where |e| <= delta, else delta |e| - 0.5 delta^2.
Term huber_term(double e, double delta) {
  const double a = std::abs(e);
  if (a <= delta) return {0.5 * e * e, e};
  return {delta * a - 0.5 * delta * delta, e >= 0.0 ? delta : -delta};
}

}  // namespace

double MeanSquaredError::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  return mean_over_units<false>(y_pred, y_true, 1.0, nullptr, squared);
}

double MeanSquaredError::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                                          MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  return mean_over_units<true>(y_pred, y_true, scale, &grad, squared);
}

double MeanAbsoluteError::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  return mean_over_units<false>(y_pred, y_true, 1.0, nullptr, absolute);
}

double MeanAbsoluteError::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                           float scale, MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  return mean_over_units<true>(y_pred, y_true, scale, &grad, absolute);
}

double Huber::sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const {
  const double delta = delta_;
  return mean_over_units<false>(y_pred, y_true, 1.0, nullptr,
                                [delta](double e) { return huber_term(e, delta); });
}

double Huber::sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                               MatrixRef grad) const {
  assert(grad.rows() == y_pred.rows() && grad.cols() == y_pred.cols());
  const double delta = delta_;
  return mean_over_units<true>(y_pred, y_true, scale, &grad,
                               [delta](double e) { return huber_term(e, delta); });
}

}  // namespace fitbench::losses
