// Keras 3's mean squared and mean absolute error metrics (keras/src/metrics/regression_metrics.py):
// the mean over samples of the per-sample loss value (mean over units). A one-column y_true is
// broadcast across the units, as Keras does. Immutable, thread-safe; the state lives with the
// caller.
#pragma once

#include <string>

#include "core/metrics/mean_metric.h"

namespace fitbench::metrics {

class MeanSquaredError final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

class MeanAbsoluteError final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

}  // namespace fitbench::metrics
