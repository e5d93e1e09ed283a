#include "core/metrics/confusion_metrics.h"

#include <algorithm>
#include <cassert>
#include <cmath>

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

void Auc::accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const {
  assert(y_true.rows() == y_pred.rows() && y_true.cols() == y_pred.cols());
  double* positives = state;
  double* negatives = state + kThresholds;
  constexpr float kSteps = static_cast<float>(kThresholds - 1);
  for (Index r = 0; r < y_pred.rows(); ++r) {
    for (Index c = 0; c < y_pred.cols(); ++c) {
      const float p = y_pred(r, c);
      int bucket = 0;
      if (!std::isnan(p)) {
        const float clipped = std::clamp(p, 0.0f, 1.0f);
        bucket = std::max(0, static_cast<int>(std::ceil(clipped * kSteps)) - 1);
      }
      if (y_true(r, c) != 0.0f)
        positives[bucket] += 1.0;
      else
        negatives[bucket] += 1.0;
    }
  }
}

double Auc::result(const double* state) const {
  const double* positives = state;
  const double* negatives = state + kThresholds;
  // Every output is above the first threshold, so the totals are the sums of all buckets.
  double all_positive = 0.0;
  double all_negative = 0.0;
  for (int i = 0; i < kThresholds; ++i) {
    all_positive += positives[i];
    all_negative += negatives[i];
  }
  // From the last threshold down: tp(i) and fp(i) count the outputs in buckets i and above; the
  // curve's point at i is (fp(i) / all negatives, tp(i) / all positives), and the area adds
  // (x(i) - x(i + 1)) * (y(i) + y(i + 1)) / 2 for each pair of neighbouring thresholds.
  double tp = 0.0;
  double fp = 0.0;
  double next_x = 0.0;
  double next_y = 0.0;
  double area = 0.0;
  for (int i = kThresholds - 1; i >= 0; --i) {
    tp += positives[i];
    fp += negatives[i];
    const double x = ratio(fp, all_negative);
    const double y = ratio(tp, all_positive);
    if (i < kThresholds - 1) area += (x - next_x) * (y + next_y) / 2.0;
    next_x = x;
    next_y = y;
  }
  return area;
}

}  // namespace fitbench::metrics
