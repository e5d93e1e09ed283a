// A compiled metric (keras.metrics.*) as a fixed-size vector of running sums, so per-device
// partial states reduce by addition and an epoch's value is result(sum of states). Metric objects
// are immutable and thread-safe; the state lives in the caller's buffer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/losses/loss_spec.h"

namespace fitbench {

class Metric {
 public:
  virtual ~Metric() = default;

  // The key in logs and History, as Keras prints it (e.g. "accuracy", "precision").
  virtual std::string name() const = 0;
  // Number of doubles in the state (e.g. 2 for a mean: total and count).
  virtual int state_size() const = 0;
  // Adds the contribution of a block of samples to `state` (state_size() doubles).
  // y_pred: (n, units) outputs; y_true: (n, units) or (n, 1) for sparse labels.
  virtual void accumulate(ConstMatrixRef y_pred, ConstMatrixRef y_true, double* state) const = 0;
  // The metric's value from a state (0 when nothing was accumulated).
  virtual double result(const double* state) const = 0;
};

// Resolves a metric name as Keras's compile() does: "accuracy"/"acc" becomes binary, sparse
// categorical or categorical accuracy from the loss and the output width; "mse", "mae" and the
// explicit names map to their metric. Throws InputError(place, ...) for an unknown name.
// `key` names the metric in logs and History (Metric::name()); empty: `name` itself. compile()
// gives a repeated name a suffix there, as Keras's CompileMetrics.result() does ("accuracy_1").
std::unique_ptr<Metric> make_metric(const std::string& name, const LossSpec& loss,
                                    int64_t output_units, const std::string& place,
                                    const std::string& key = {});

// Keras's metric._direction for a name make_metric accepts: true for the accuracies, precision
// and recall ("up"), false for the errors ("down"); nullopt for a name it does not know.
std::optional<bool> metric_improves_upward(const std::string& name);

// The log keys of compiled metrics named `names`, in order: a repeated name gets "_1", "_2", ...
// after its first use, as Keras's CompileMetrics.result() names them.
std::vector<std::string> metric_log_keys(const std::vector<std::string>& names);

}  // namespace fitbench
