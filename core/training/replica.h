// One copy of a model's computation: parameter pointers (its own copy of the values, or the
// model's), gradient buffers and a Workspace. forward/backward of one block of rows, loss and
// metric accumulation. A Replica is used by one thread at a time; many replicas of the same
// Network run concurrently.
#pragma once

#include <span>
#include <vector>

#include "core/losses/loss.h"
#include "core/metrics/metric.h"
#include "core/nn/network.h"

namespace fitbench {

// Sums over the samples of one or more batches, reducible across devices by addition.
struct StepTotals {
  double loss_sum = 0.0;      // sum of per-sample losses
  double reg_weighted = 0.0;  // sum over batches of (samples * regularization loss)
  double samples = 0.0;
  std::vector<double> metric_states;  // each metric's state, concatenated

  void reset(size_t metric_state_size) {
    loss_sum = reg_weighted = samples = 0.0;
    metric_states.assign(metric_state_size, 0.0);
  }
  void add(const StepTotals& other);
};

// What every replica shares: the network, loss and metrics. Not owned.
struct ComputeGraph {
  const Network* network = nullptr;
  const Loss* loss = nullptr;
  std::vector<const Metric*> metrics;
  size_t metric_state_size() const;
};

class Replica {
 public:
  // params: one pointer per network variable (the values this replica computes with).
  Replica(const ComputeGraph& graph, std::vector<Matrix*> params);

  void reserve(Index rows);
  std::span<Matrix* const> params() const { return params_; }
  std::span<const Matrix* const> const_params() const { return const_params_; }
  std::span<Matrix* const> grads() { return grad_ptrs_; }
  // The gradient buffers (one per variable, a frozen one's too) and the workspace, as allocated.
  std::span<const Matrix> grad_storage() const { return grad_storage_; }
  const Workspace& workspace() const { return ws_; }

  // Forward in training mode, loss, metrics and backward on x/y (n rows): writes the gradient of
  // grad_scale * sum(loss) into grads() and adds loss/metrics into totals (loss without
  // regularization). row_offset places the block within the global batch.
  void train_block(ConstMatrixRef x, ConstMatrixRef y, Index row_offset, uint64_t step,
                   uint64_t seed, float grad_scale, StepTotals& totals);
  // Forward in inference mode, loss and metrics.
  void test_block(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals);
  // Forward in inference mode into out (n, output units).
  void predict_block(ConstMatrixRef x, MatrixRef out);

 private:
  void accumulate_metrics(ConstMatrixRef y_pred, ConstMatrixRef y, StepTotals& totals) const;

  ComputeGraph graph_;
  std::vector<Matrix*> params_;
  std::vector<const Matrix*> const_params_;
  std::vector<Matrix> grad_storage_;
  std::vector<Matrix*> grad_ptrs_;
  Workspace ws_;
};

}  // namespace fitbench
