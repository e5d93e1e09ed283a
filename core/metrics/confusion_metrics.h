// Keras 3's Precision and Recall with their default single threshold 0.5, and AUC (below)
// (keras/src/metrics/confusion_metrics.py, metrics_utils.update_confusion_matrix_variables):
// every element counts, y_pred > 0.5 is a positive prediction and a nonzero y_true a positive
// label. Precision keeps {tp, fp}, Recall {tp, fn}. Immutable, thread-safe; the state lives with
// the caller.
#pragma once

#include <string>
#include <utility>

#include "core/metrics/metric.h"

namespace fitbench::metrics {

// tp / (tp + fp), 0 when nothing was predicted positive.
class Precision final : public Metric {
 public:
  explicit Precision(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  int state_size() const override { return 2; }
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
  double result(const double* state) const override;

 private:
  std::string name_;
};

// tp / (tp + fn), 0 when there was no positive label.
class Recall final : public Metric {
 public:
  explicit Recall(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  int state_size() const override { return 2; }
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
  double result(const double* state) const override;

 private:
  std::string name_;
};

// Keras 3's AUC at its defaults: the area under the ROC curve, with 200 thresholds evenly spaced
// over [0, 1] (the first just below 0, the last just above 1) and the trapezoid rule
// (summation_method "interpolation"). Every element counts, as with multi_label=False: outputs
// are clipped to [0, 1] and fall in the bucket ceil(p * 199) - 1 (at least 0), in float32, as
// metrics_utils._update_confusion_matrix_variables_optimized computes it; a NaN output falls in
// bucket 0, as XLA converts NaN to the integer 0. The state holds the per-bucket counts of
// positive and of negative labels (each add up across blocks and devices); the result forms the
// true and false positives at each threshold from them, as reversed cumulative sums.
class Auc final : public Metric {
 public:
  static constexpr int kThresholds = 200;

  explicit Auc(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  int state_size() const override { return 2 * kThresholds; }
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
  // 0 when there was no negative label (every false-positive rate is 0), as Keras's divide_no_nan.
  double result(const double* state) const override;

 private:
  std::string name_;
};

}  // namespace fitbench::metrics
