#include "core/metrics/accuracy_metrics.h"

#include <cassert>
#include <cmath>
#include <limits>

namespace fitbench::metrics {
namespace {

// Index of the first maximum of a row; the first NaN wins, as numpy's and JAX's argmax.
Index argmax(const ConstMatrixRef& m, Index r) {
  Index best = 0;
  float best_value = m(r, 0);
  if (std::isnan(best_value)) return 0;
  for (Index c = 1; c < m.cols(); ++c) {
    const float v = m(r, c);
    if (std::isnan(v)) return c;
    if (v > best_value) {
      best = c;
      best_value = v;
    }
  }
  return best;
}

// in_top_k for one row: the label's output against every output.
bool in_top_k(const ConstMatrixRef& y_pred, Index r, int64_t label) {
  const Index units = y_pred.cols();
  float at = -std::numeric_limits<float>::infinity();
  if (label >= 0 && label < units && !std::isnan(y_pred(r, label))) at = y_pred(r, label);
  Index greater = 0;
  for (Index c = 0; c < units; ++c)
    if (y_pred(r, c) > at) ++greater;
  return greater < kTopK;
}

}  // namespace

void BinaryAccuracy::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const {
  assert(y_true.rows() == y_pred.rows());
  assert(y_true.cols() == y_pred.cols() || y_true.cols() == 1);
  const Index units = y_pred.cols();
  const bool broadcast = y_true.cols() == 1;
  for (Index r = 0; r < y_pred.rows(); ++r) {
    double matches = 0.0;
    for (Index c = 0; c < units; ++c) {
      const float predicted = y_pred(r, c) > 0.5f ? 1.0f : 0.0f;
      if (predicted == y_true(r, broadcast ? 0 : c)) matches += 1.0;
    }
    state[0] += matches / static_cast<double>(units);
  }
  state[1] += static_cast<double>(y_pred.rows());
}

void CategoricalAccuracy::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                     double* state) const {
  assert(y_true.rows() == y_pred.rows());
  for (Index r = 0; r < y_pred.rows(); ++r) {
    if (argmax(y_true, r) == argmax(y_pred, r)) state[0] += 1.0;
  }
  state[1] += static_cast<double>(y_pred.rows());
}

void SparseCategoricalAccuracy::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                           double* state) const {
  assert(y_true.rows() == y_pred.rows() && y_true.cols() == 1);
  for (Index r = 0; r < y_pred.rows(); ++r) {
    if (y_true(r, 0) == static_cast<float>(argmax(y_pred, r))) state[0] += 1.0;
  }
  state[1] += static_cast<double>(y_pred.rows());
}

void TopKCategoricalAccuracy::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                         double* state) const {
  assert(y_true.rows() == y_pred.rows());
  for (Index r = 0; r < y_pred.rows(); ++r)
    if (in_top_k(y_pred, r, argmax(y_true, r))) state[0] += 1.0;
  state[1] += static_cast<double>(y_pred.rows());
}

void SparseTopKCategoricalAccuracy::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true,
                                               double* state) const {
  assert(y_true.rows() == y_pred.rows() && y_true.cols() == 1);
  for (Index r = 0; r < y_pred.rows(); ++r) {
    const float label = y_true(r, 0);
    // int32 truncation; a label no int32 holds is no class.
    const int64_t index = std::isfinite(label) && std::fabs(label) < 2147483648.0f
                              ? static_cast<int64_t>(label)
                              : int64_t{-1};
    if (in_top_k(y_pred, r, index)) state[0] += 1.0;
  }
  state[1] += static_cast<double>(y_pred.rows());
}

}  // namespace fitbench::metrics
