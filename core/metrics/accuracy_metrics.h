// Keras 3's accuracy metrics (keras/src/metrics/accuracy_metrics.py): binary (threshold 0.5 on
// y_pred as given, even for logits), categorical (argmax of y_true against argmax of y_pred) and
// sparse categorical (an (n, 1) column of class indices against argmax of y_pred), and their top-k
// forms (k = 5, Keras's default). Each is the mean over samples of a per-sample value. Immutable,
// thread-safe; the state lives with the caller.
#pragma once

#include <string>

#include "core/metrics/mean_metric.h"

namespace fitbench::metrics {

// Per sample: the fraction of units where (y_pred > 0.5) equals y_true. A one-column y_true is
// broadcast across the units, as Keras does.
class BinaryAccuracy final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

// Per sample: 1 when argmax(y_true) == argmax(y_pred) (first maximum; a NaN counts as the
// maximum, as in numpy), else 0.
class CategoricalAccuracy final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

// Per sample: 1 when the label y_true(r, 0) equals argmax(y_pred) as a float, else 0.
class SparseCategoricalAccuracy final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

// Keras's top-k rule (keras/src/backend/jax/math.py in_top_k): 1 when fewer than k outputs are
// greater than the label's output (so ties count for the label), 0 otherwise; a NaN at the label
// counts as -infinity, as does a label outside 0 .. units-1.
inline constexpr int kTopK = 5;

// The label: argmax(y_true) of one-hot targets.
class TopKCategoricalAccuracy final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

// The label: y_true(r, 0) cast to an integer (truncated, as int32).
class SparseTopKCategoricalAccuracy final : public MeanMetric {
 public:
  using MeanMetric::MeanMetric;
  void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const override;
};

}  // namespace fitbench::metrics
