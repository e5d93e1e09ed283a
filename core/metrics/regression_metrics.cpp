#include "core/metrics/regression_metrics.h"

#include <cassert>
#include <cmath>

namespace fitbench::metrics {
namespace {

// Adds the per-sample means over units of term(y_true - y_pred) and the sample count.
template <class Term>
void accumulate_mean(const ConstMatrixRef& y_pred, const ConstMatrixRef& y_true, double* state,
                     const Term& term) {
  assert(y_true.rows() == y_pred.rows());
  assert(y_true.cols() == y_pred.cols() || y_true.cols() == 1);
  const Index units = y_pred.cols();
  const bool broadcast = y_true.cols() == 1;
  for (Index r = 0; r < y_pred.rows(); ++r) {
    double row = 0.0;
    for (Index c = 0; c < units; ++c) {
      row += term(static_cast<double>(y_true(r, broadcast ? 0 : c)) -
                  static_cast<double>(y_pred(r, c)));
    }
    state[0] += row / static_cast<double>(units);
  }
  state[1] += static_cast<double>(y_pred.rows());
}

}  // namespace

void MeanSquaredError::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                  double* state) const {
  accumulate_mean(y_pred, y_true, state, [](double e) { return e * e; });
}

void MeanAbsoluteError::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                   double* state) const {
  accumulate_mean(y_pred, y_true, state, [](double e) { return std::abs(e); });
}

}  // namespace fitbench::metrics
