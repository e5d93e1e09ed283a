#include "core/training/replica.h"

namespace fitbench {

void StepTotals::add(const StepTotals& other) {
  loss_sum += other.loss_sum;
  reg_weighted += other.reg_weighted;
  samples += other.samples;
  for (size_t i = 0; i < metric_states.size(); ++i) metric_states[i] += other.metric_states[i];
}

size_t ComputeGraph::metric_state_size() const {
  size_t n = 0;
  for (const Metric* m : metrics) n += static_cast<size_t>(m->state_size());
  return n;
}

Replica::Replica(const ComputeGraph& graph, std::vector<Matrix*> params)
    : graph_(graph), params_(std::move(params)) {
  const auto& vars = graph_.network->variables();
  const_params_.assign(params_.begin(), params_.end());
  grad_storage_.resize(vars.size());
  grad_ptrs_.resize(vars.size());
  for (size_t i = 0; i < vars.size(); ++i) {
    grad_storage_[i].resizeLike(*params_[i]);
    grad_storage_[i].setZero();
    grad_ptrs_[i] = vars[i].trainable ? &grad_storage_[i] : nullptr;
  }
}

void Replica::reserve(Index rows) { graph_.network->reserve(ws_, rows); }

void Replica::accumulate_metrics(ConstMatrixRef y_pred, ConstMatrixRef y,
                                 StepTotals& totals) const {
  double* state = totals.metric_states.data();
  for (const Metric* m : graph_.metrics) {
    m->accumulate(y_pred, y, state);
    state += m->state_size();
  }
}

void Replica::train_block(ConstMatrixRef x, ConstMatrixRef y, Index row_offset, uint64_t step,
                          uint64_t seed, float grad_scale, StepTotals& totals) {
  const Network& net = *graph_.network;
  const Index n = x.rows();
  ForwardContext ctx{.training = true, .step = step, .row_offset = row_offset, .seed = seed};
  net.forward(const_params_, x, ws_, ctx);
  auto y_pred = net.output(ws_, n);
  totals.loss_sum += graph_.loss->sum_and_gradient(y_pred, y, grad_scale, net.output_grad(ws_, n));
  totals.samples += static_cast<double>(n);
  accumulate_metrics(y_pred, y, totals);
  net.backward(const_params_, x, ws_, n, grad_ptrs_, ctx);
  net.update_state(params_, ws_);
}

void Replica::test_block(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  const Network& net = *graph_.network;
  const Index n = x.rows();
  net.forward(const_params_, x, ws_, ForwardContext{});
  auto y_pred = net.output(ws_, n);
  totals.loss_sum += graph_.loss->sum(y_pred, y);
  totals.samples += static_cast<double>(n);
  accumulate_metrics(y_pred, y, totals);
}

void Replica::predict_block(ConstMatrixRef x, MatrixRef out) {
  const Network& net = *graph_.network;
  net.forward(const_params_, x, ws_, ForwardContext{});
  out = net.output(ws_, x.rows());
}

}  // namespace fitbench
