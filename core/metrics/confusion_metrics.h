// Keras 3's Precision and Recall with their default single threshold 0.5
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

}  // namespace fitbench::metrics
