// keras.distribution.ModelParallel on simulated devices: a mesh of B (batch axis) x M (model
// axis) devices, one worker thread each. Every batch is split along dim 0 over the batch axis;
// the M devices of a batch group (a row of the mesh) hold the slices of each Dense kernel and
// bias the layout map gives them (kernel by output columns or by input rows, bias by units) and
// full copies of the rest. Each device computes with its slice; through the row's Collectives,
// column pieces of activations are all-gathered and partial sums (row-sharded kernels) all-reduced
// so every device of a row sees full activations (and the same for input gradients going back);
// gradients are all-reduced along the batch axis (a column of the mesh); each device's optimizer
// updates its own slice and the first row writes its slices back into the model's variables.
// With M > 1, every device waits for all before its update, so an error on any device stops every
// update. Equal to one device to float32 rounding. Each train step records a StepTrace; the
// rehearsal knobs (device speeds, link latency and bandwidth) act as in DataParallel, and in
// evaluate() and predict() too (their passes exchange activations). Driven by one thread.
//
// Across processes (RehearsalOptions::processes, P of them), process p hosts the devices
// p*N/P .. (p+1)*N/P - 1 of the mesh (in mesh order). By default (the batch axis named first) that
// is whole rows, so the rows' activation exchanges stay thread collectives and the columns'
// gradient all-reduces cross processes; any other placement mesh_lines accepts works too: a row or
// column that spans processes exchanges through a HierarchicalCollectives over a communicator of
// the processes that host it (one per axis, serving every such line of the process, called from
// the process's first device's thread only). The step totals and predictions of every row are
// exchanged, and when rows span processes the model's slices are gathered where the whole model
// is read, so each process computes what the one-process run computes, bit for bit. Device
// indices below are this process's (0 .. devices()-1; the global index is first_device() + index).
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "core/distribution/collectives/hierarchical_collectives.h"
#include "core/distribution/executors/rehearsal_options.h"
#include "core/distribution/executors/shard_exchange.h"
#include "core/distribution/layout/batch_shards.h"
#include "core/distribution/layout/model_parallel_plan.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/distribution/threads/device_errors.h"
#include "core/distribution/threads/device_pool.h"
#include "core/distribution/trace/collective_group.h"
#include "core/distribution/trace/device_timeline.h"
#include "core/optimizers/optimizer_spec.h"
#include "core/training/sequential.h"
#include "core/training/step_executor.h"

namespace fitbench {

// The per-device optimizers, kept by the model's executor factory across fit() calls. Each holds
// its device's slices of the slots; the model's own optimizer holds the whole state (gathered at
// every epoch's end, sliced out again when a model that has trained starts on this mesh).
struct ModelParallelOptimizers {
  const Optimizer* owner = nullptr;  // the model's optimizer these continue
  int64_t owner_iterations = -1;     // its iteration count when they were made or last gathered
  std::vector<std::unique_ptr<Optimizer>> devices;
};

class ModelParallelExecutor : public StepExecutor {
 public:
  // `optimizer` is the model's compile() spec; `state` persists device optimizer state.
  // options.speed, if given, has one entry per device (by flat mesh index).
  ModelParallelExecutor(const ExecutorContext& ctx, ModelParallelPlan plan, OptimizerSpec optimizer,
                        std::shared_ptr<ModelParallelOptimizers> state,
                        const RehearsalOptions& options = {});
  ~ModelParallelExecutor() override;

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  void pull_from_model() override;
  // Every update is written back into the model's variables as it happens; this gathers the
  // devices' optimizer slots into the model's optimizer.
  void push_to_model() override;
  // What every device did in the last train_step, by flat mesh index (epoch and batch are left
  // at -1 for fit() to set). Valid until the next train_step.
  StepTrace* step_trace() override { return &timelines_.trace(); }
  const StepTrace* labelled_step_trace(int epoch, int batch) override {
    return timelines_.trace().labelled(epoch, batch);
  }

  // Per device (flat mesh index): its slices, their gradients, its optimizer's slots, its
  // per-layer buffers (activations), and its shard copy, all-gather pieces and the staging
  // buffers of its row's and column's collectives (buffers).
  std::vector<DeviceMemory> device_memory() const override;

  int devices() const { return pool_.size(); }
  int first_device() const { return first_; }
  // The values device `index` (flat mesh index) holds: its slice of each variable.
  std::vector<const Matrix*> device_values(int index) const;
  // What the rehearsal knobs added to each of device `index`'s spans in the last train_step.
  const std::vector<SpanInjection>& injections(int index) const;

 private:
  struct Device;
  using Clock = std::chrono::steady_clock;
  void run(BatchJob::Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
           StepTotals* totals);
  static void run_device(void* self, int device);
  void device_step(int d);
  // Each returns where its last compute span begins (still open: the caller ends it).
  Clock::time_point forward(Device& dev, ConstMatrixRef x, Index offset, Index rows,
                            Clock::time_point t);
  Clock::time_point backward(Device& dev, ConstMatrixRef x, Index rows, Clock::time_point t);
  // Ends the open compute span of kind `open` (begun at t), all-gathers over the device's mesh
  // row each device's block of rows x width (its piece of layer l) and places device j's block
  // at columns [j * width, (j + 1) * width) of out. Returns when the all-gather ended.
  Clock::time_point gather_blocks(Device& dev, size_t l, SpanKind open, Clock::time_point t,
                                  Index rows, Index width, MatrixRef out);
  // Whether layer l is a Conv2D whose kernel is split along its output channels.
  bool sharded_conv(size_t l) const;
  // Its passes: the device's channels, all-gathered over the row (forward); their gradients and
  // the row's all-reduce of the input gradient (backward).
  Clock::time_point conv_forward(Device& dev, size_t l, ConstMatrixRef input, Index rows,
                                 const ForwardContext& ctx, Clock::time_point t);
  Clock::time_point conv_backward(Device& dev, size_t l, ConstMatrixRef input, Index rows,
                                  Clock::time_point t);
  void reduce_and_update(Device& dev, Clock::time_point t);
  void ensure_optimizers();
  // When rows span processes and a train step ran since: the model's variables take every
  // process's slices (collective: every process calls it at the same point).
  void sync_model();
  // Every process's model-axis slices, from its devices of batch group 0 (items(dev) lists
  // them, item i a slice of variable variable[i], as slice_rect cuts it; a replicated one from
  // model device 0 only), all-gathered into whole[i] on every process.
  void gather_row_slices(
      const std::function<void(const Device&, std::vector<const Matrix*>&)>& items,
      std::span<const size_t> variable, std::span<Matrix* const> whole);
  // The index in the model's variables of each trainable one (the optimizers' variable list).
  std::vector<size_t> trainable_variable_indices() const;

  ExecutorContext ctx_;
  ModelParallelPlan plan_;
  OptimizerSpec optimizer_spec_;
  std::shared_ptr<ModelParallelOptimizers> state_;
  RehearsalOptions options_;
  DevicePool pool_;
  std::vector<std::unique_ptr<Device>> devices_;  // by flat mesh index
  int first_ = 0;                                 // the global index of this process's first device
  // Across processes: the collectives of the rows and of the columns that span processes (null
  // for an axis whose lines stay inside processes).
  std::shared_ptr<HierarchicalCollectives> row_exchange_, column_exchange_;
  // The rows of the mesh (the M devices of a batch group) and the columns (the B devices that
  // hold the same slices) this process hosts devices of, in order (Device::row and ::col).
  std::vector<std::unique_ptr<CollectiveGroup>> rows_, columns_;
  std::vector<int> row_owner_;  // per batch group, the process of its model device 0
  // Rows span processes: each process writes only its slices into the model's variables, and
  // gathers the others' (sync_model) where the whole model is read. Stale after a train step.
  bool rows_span_ = false, model_stale_ = false;
  StepTotals scratch_totals_;                // a row's totals on their way from another process
  ArrivalBoard everyone_;                    // the barrier before the update (meshes with M > 1)
  int64_t row_elements_ = 0;                 // the largest call a row's collectives are sized for
  std::vector<const Matrix*> model_values_;  // the model's variables (for the regularization)
  bool clip_norm_ = false;                   // clipnorm or global_clipnorm is set
  StepTimelines timelines_;                  // by flat mesh index
  DeviceErrors errors_;                      // by flat mesh index
  BatchJob job_;                             // the current job; shards by batch group
  ShardExchange exchange_;                   // step totals and predictions between processes
  std::vector<StepTotals*> row_totals_;      // model device 0's totals of the rows it hosts
  // sync_model's and push_to_model's buffers (gather_row_slices).
  std::vector<size_t> variable_index_;
  std::vector<Matrix*> model_matrices_;
  std::vector<const Matrix*> item_list_;
  std::vector<float> slices_out_, slices_in_;
  std::vector<int> slice_counts_, slice_displs_, slice_at_;
  std::vector<bool>
      state_variables_;  // per variable: a layer's state it updates (moving statistics)
};

// Makes `model` train with ModelParallel as spec says, on `devices` simulated CPU devices (the
// mesh's size), with the rehearsal knobs of `options`. Checks the layout now if the model is
// built, else when fit() builds it; throws InputError naming the place.
void use_model_parallel(Sequential& model, const DistributionSpec& spec, int devices,
                        const RehearsalOptions& options = {});

}  // namespace fitbench
