// Base of the metrics Keras computes as the mean of per-sample values
// (keras/src/metrics/reduction_metrics.py MeanMetricWrapper): the state is {total, count} and the
// result total / count, 0 when empty. Immutable after construction, thread-safe.
#pragma once

#include <string>
#include <utility>

#include "core/metrics/metric.h"

namespace fitbench::metrics {

class MeanMetric : public Metric {
 public:
  explicit MeanMetric(std::string name) : name_(std::move(name)) {}

  std::string name() const override { return name_; }
  int state_size() const override { return 2; }
  double result(const double* state) const override {
    return state[1] != 0.0 ? state[0] / state[1] : 0.0;
  }

 private:
  std::string name_;
};

}  // namespace fitbench::metrics
