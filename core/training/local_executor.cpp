#include "core/training/step_executor.h"

namespace fitbench {

std::vector<Matrix*> variable_values(std::vector<Variable>& variables) {
  std::vector<Matrix*> out;
  out.reserve(variables.size());
  for (auto& v : variables) out.push_back(&v.value);
  return out;
}

void StepExecutor::train_step_rows(ConstMatrixRef x, ConstMatrixRef y,
                                   std::span<const int64_t> index, Matrix& xb, Matrix& yb,
                                   uint64_t step, StepTotals& totals) {
  const Index rows = static_cast<Index>(index.size());
  for (Index r = 0; r < rows; ++r) {
    xb.row(r) = x.row(index[static_cast<size_t>(r)]);
    yb.row(r) = y.row(index[static_cast<size_t>(r)]);
  }
  train_step(xb.topRows(rows), yb.topRows(rows), step, totals);
}

void apply_update(const Network& network, Optimizer& optimizer, std::span<Matrix* const> params,
                  std::span<const Matrix* const> const_params, std::span<Matrix* const> grads,
                  std::vector<Matrix*>& trainable_vars, std::vector<Matrix*>& trainable_grads) {
  network.add_regularization_gradient(const_params, grads);
  trainable_vars.clear();
  trainable_grads.clear();
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i]) continue;
    trainable_vars.push_back(params[i]);
    trainable_grads.push_back(grads[i]);
  }
  optimizer.apply(trainable_vars, trainable_grads);
}

LocalExecutor::LocalExecutor(const ExecutorContext& ctx)
    : ctx_(ctx), replica_(ctx.graph, variable_values(*ctx.variables)) {
  trainable_vars_.reserve(ctx.variables->size());
  trainable_grads_.reserve(ctx.variables->size());
}

void LocalExecutor::prepare(Index max_rows) { replica_.reserve(max_rows); }

void LocalExecutor::train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step,
                               StepTotals& totals) {
  const Network& net = *ctx_.graph.network;
  const Index n = x.rows();
  const double reg = net.regularization_loss(replica_.const_params());
  totals.reg_weighted += reg * static_cast<double>(n);
  replica_.train_block(x, y, 0, step, ctx_.dropout_seed, 1.0f / static_cast<float>(n), totals);
  apply_update(net, *ctx_.optimizer, replica_.params(), replica_.const_params(), replica_.grads(),
               trainable_vars_, trainable_grads_);
}

void LocalExecutor::test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  const Network& net = *ctx_.graph.network;
  const double reg = net.regularization_loss(replica_.const_params());
  totals.reg_weighted += reg * static_cast<double>(x.rows());
  replica_.test_block(x, y, totals);
}

int64_t matrix_bytes(std::span<const Matrix> matrices) {
  int64_t floats = 0;
  for (const Matrix& m : matrices) floats += m.size();
  return floats * static_cast<int64_t>(sizeof(float));
}

int64_t matrix_bytes(std::span<const Matrix* const> matrices) {
  int64_t floats = 0;
  for (const Matrix* m : matrices) floats += m ? m->size() : 0;
  return floats * static_cast<int64_t>(sizeof(float));
}

int64_t float_bytes(const std::vector<float>& v) {
  return static_cast<int64_t>(v.capacity() * sizeof(float));
}

int64_t workspace_bytes(const Workspace& ws) {
  return matrix_bytes(ws.outputs) + matrix_bytes(ws.caches) + matrix_bytes(ws.grads);
}

// One device: the model's own variables and optimizer, no collectives.
std::vector<DeviceMemory> LocalExecutor::device_memory() const {
  DeviceMemory m;
  m.weights = matrix_bytes(replica_.const_params());
  m.gradients = matrix_bytes(replica_.grad_storage());
  m.optimizer_slots = ctx_.optimizer ? ctx_.optimizer->slot_bytes() : 0;
  m.activations = workspace_bytes(replica_.workspace());
  return {m};
}

void LocalExecutor::predict_step(ConstMatrixRef x, MatrixRef out) {
  replica_.predict_block(x, out);
}

}  // namespace fitbench
