#include "core/metrics/confusion_metrics.h"

#include <cassert>

namespace fitbench::metrics {
namespace {

struct Counts {
  double tp = 0.0;
  double fp = 0.0;
  double fn = 0.0;
};

// Confusion counts at threshold 0.5 over every element (keras/src/metrics/metrics_utils.py:
// positive prediction where y_pred > threshold, positive label where bool(y_true)).
Counts count(const ConstMatrixRef& y_pred, const ConstMatrixRef& y_true) {
  assert(y_true.rows() == y_pred.rows() && y_true.cols() == y_pred.cols());
  Counts counts;
  for (Index r = 0; r < y_pred.rows(); ++r) {
    for (Index c = 0; c < y_pred.cols(); ++c) {
      const bool predicted = y_pred(r, c) > 0.5f;
      const bool actual = y_true(r, c) != 0.0f;
      if (predicted && actual) counts.tp += 1.0;
      if (predicted && !actual) counts.fp += 1.0;
      if (!predicted && actual) counts.fn += 1.0;
    }
  }
  return counts;
}

// keras.ops.divide_no_nan.
double ratio(double numerator, double denominator) {
  return denominator != 0.0 ? numerator / denominator : 0.0;
}

}  // namespace

void Precision::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const {
  const Counts counts = count(y_pred, y_true);
  state[0] += counts.tp;
  state[1] += counts.fp;
}

double Precision::result(const double* state) const { return ratio(state[0], state[0] + state[1]); }

void Recall::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const {
  const Counts counts = count(y_pred, y_true);
  state[0] += counts.tp;
  state[1] += counts.fn;
}

double Recall::result(const double* state) const { return ratio(state[0], state[0] + state[1]); }

}  // namespace fitbench::metrics
