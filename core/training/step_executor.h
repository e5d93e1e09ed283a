// How fit(), evaluate() and predict() run one batch. The local executor computes on the calling
// thread with the model's own variables; distributed executors (core/distribution) split each
// batch across device workers and reduce. An executor is driven by one thread.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/nn/variable.h"
#include "core/optimizers/optimizer.h"
#include "core/training/device_memory.h"
#include "core/training/replica.h"

namespace fitbench {

struct StepTrace;  // core/distribution/trace/trace.h

// What an executor works on; owned by the model, valid while the executor lives.
struct ExecutorContext {
  ComputeGraph graph;
  std::vector<Variable>* variables = nullptr;
  Optimizer* optimizer = nullptr;  // null for evaluate/predict-only use
  uint64_t dropout_seed = 0;
};

class StepExecutor {
 public:
  virtual ~StepExecutor() = default;

  // Sizes every buffer for batches of up to max_rows rows (allocation happens here only).
  virtual void prepare(Index max_rows) = 0;
  // Forward, loss, backward, gradient reduction and optimizer update for one batch; adds the
  // batch's sums to totals (reg_weighted = rows * regularization loss before the update).
  virtual void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step,
                          StepTotals& totals) = 0;
  // train_step on the batch made of rows `index` of x and y (a shuffled batch). The default
  // gathers them into xb and yb (fit()'s buffers, with room for index.size() rows) and calls
  // train_step; DataParallel's devices gather their own rows instead, in parallel, as their
  // shard copy.
  virtual void train_step_rows(ConstMatrixRef x, ConstMatrixRef y, std::span<const int64_t> index,
                               Matrix& xb, Matrix& yb, uint64_t step, StepTotals& totals);
  virtual void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) = 0;
  virtual void predict_step(ConstMatrixRef x, MatrixRef out) = 0;
  // The model's variables or learning rate were changed from outside (callbacks): take them.
  virtual void pull_from_model() {}
  // Make the model's variables current (before callbacks read them).
  virtual void push_to_model() {}
  // What every device did in the last train_step, or null when the executor records nothing
  // (one device without a distribution). fit() sets its epoch and batch and passes it to
  // Callback::on_step_trace.
  virtual StepTrace* step_trace() { return nullptr; }
  // step_trace() with fit()'s epoch and batch set: what fit() hands to Callback::on_step_trace
  // (here, so that the training loop needs no definition of StepTrace).
  virtual const StepTrace* labelled_step_trace(int /*epoch*/, int /*batch*/) { return nullptr; }
  // The bytes each device's buffers hold now (after prepare(), they hold what every step needs),
  // counted from the buffers themselves, one entry per device.
  virtual std::vector<DeviceMemory> device_memory() const = 0;
};

// Runs every step on the calling thread, on the model's variables.
class LocalExecutor : public StepExecutor {
 public:
  explicit LocalExecutor(const ExecutorContext& ctx);

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  std::vector<DeviceMemory> device_memory() const override;

 private:
  ExecutorContext ctx_;
  Replica replica_;
  std::vector<Matrix*> trainable_vars_;
  std::vector<Matrix*> trainable_grads_;
};

// The params pointers of a model's variables.
std::vector<Matrix*> variable_values(std::vector<Variable>& variables);

// Bytes of the matrices and float vectors given (their sizes, as allocated).
int64_t matrix_bytes(std::span<const Matrix> matrices);
int64_t matrix_bytes(std::span<const Matrix* const> matrices);
int64_t float_bytes(const std::vector<float>& v);
// Bytes of a workspace's outputs, caches and output gradients.
int64_t workspace_bytes(const Workspace& ws);

// Applies the optimizer to the trainable subset: adds the regularization gradient, then updates.
// Shared by every executor so the update rule lives in one place.
// trainable_vars/grads are scratch vectors with capacity for every variable (no allocation).
void apply_update(const Network& network, Optimizer& optimizer, std::span<Matrix* const> params,
                  std::span<const Matrix* const> const_params, std::span<Matrix* const> grads,
                  std::vector<Matrix*>& trainable_vars, std::vector<Matrix*>& trainable_grads);

}  // namespace fitbench
