// keras.distribution.ModelParallel on simulated devices: a mesh of B (batch axis) x M (model
// axis) devices, one worker thread each. Every batch is split along dim 0 over the batch axis;
// the M devices of a batch group hold the slices of each Dense kernel and bias the layout map
// gives them (kernel by output columns or by input rows, bias by units) and full copies of the
// rest. Each device computes with its slice; column pieces are all-gathered and partial sums
// (row-sharded kernels) all-reduced so every device of a group sees full activations; gradients
// are summed along the batch axis; each device's optimizer updates its own slice and writes it
// back into the model's variables. Equal to one device to float32 rounding. Driven by one thread.
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "core/distribution/device_pool.h"
#include "core/distribution/distribution_spec.h"
#include "core/optimizers/optimizer_spec.h"
#include "core/training/sequential.h"
#include "core/training/step_executor.h"

namespace fitbench {

// How a model is laid out on the mesh: the mesh's batch and model sizes, the flat mesh index of
// each (batch, model) coordinate, and per variable which matrix axis is sharded over the model
// axis (kernels are (input, units) matrices, a bias one row of units).
struct ModelParallelPlan {
  enum class Split { kReplicated, kRows, kColumns };
  int batch = 1;                 // B: devices along the batch axis
  int model = 1;                 // M: devices along the model axis
  std::vector<int> device;       // device[b * model + m]: the flat mesh index (cpu:<index>)
  std::vector<Split> variables;  // one per network variable
};

// Resolves spec (class ModelParallel) for `network` (built) on `devices` devices. Throws
// InputError for any error check_layout_map reports, or for a layout fitbench cannot run.
ModelParallelPlan make_model_parallel_plan(const Network& network, const DistributionSpec& spec,
                                           int devices);

// The per-device optimizers, kept by the model's executor factory across fit() calls (the
// model's own optimizer holds full-size state that cannot be split, so it does not advance).
struct ModelParallelOptimizers {
  const Optimizer* owner = nullptr;  // the model's optimizer these continue
  int64_t owner_iterations = -1;     // its iteration count when they were made
  std::vector<std::unique_ptr<Optimizer>> devices;
};

class ModelParallelExecutor : public StepExecutor {
 public:
  // `optimizer` is the model's compile() spec; `state` persists device optimizer state.
  ModelParallelExecutor(const ExecutorContext& ctx, ModelParallelPlan plan, OptimizerSpec optimizer,
                        std::shared_ptr<ModelParallelOptimizers> state);
  ~ModelParallelExecutor() override;

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  void pull_from_model() override;
  void push_to_model() override {}  // every update is written back into the model's variables

  int devices() const { return pool_.size(); }
  // The values device `index` (flat mesh index) holds: its slice of each variable.
  std::vector<const Matrix*> device_values(int index) const;

 private:
  struct Device;
  enum class Phase { kTrain, kTest, kPredict };
  void run(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
           StepTotals* totals);
  static void run_device(void* self, int device);
  void device_step(int d);
  void forward(Device& dev, ConstMatrixRef x, Index offset, Index rows, bool training);
  void backward(Device& dev, ConstMatrixRef x, Index rows);
  void reduce_and_update(Device& dev);
  void ensure_optimizers();
  template <class F>
  void guarded(Device& dev, F&& fn);

  ExecutorContext ctx_;
  ModelParallelPlan plan_;
  OptimizerSpec optimizer_spec_;
  std::shared_ptr<ModelParallelOptimizers> state_;
  DevicePool pool_;
  std::vector<std::unique_ptr<Device>> devices_;  // by flat mesh index
  bool clip_norm_ = false;                        // clipnorm or global_clipnorm is set
  // The current job.
  Phase phase_ = Phase::kTrain;
  const ConstMatrixRef* x_ = nullptr;
  const ConstMatrixRef* y_ = nullptr;
  MatrixRef* out_ = nullptr;
  uint64_t step_ = 0;
  float scale_ = 1.0f;
  std::vector<Index> offsets_, sizes_;
  std::atomic<bool> failed_{false};
};

// Makes `model` train with ModelParallel as spec says, on `devices` simulated CPU devices (the
// mesh's size). Checks the layout now if the model is built, else when fit() builds it; throws
// InputError naming the place.
void use_model_parallel(Sequential& model, const DistributionSpec& spec, int devices);

}  // namespace fitbench
