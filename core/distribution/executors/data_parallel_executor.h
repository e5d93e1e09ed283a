// keras.distribution.DataParallel on simulated devices: every device holds a replica of the
// variables and its own optimizer state; each batch is split along dim 0 into contiguous shards
// (uneven when it does not divide: the first batch % devices shards get one more row); every
// device copies its shard, runs forward and backward on it on its own thread; gradients are
// summed over devices (Collectives, ring or naive) as the sample-weighted mean (each shard's loss
// gradient is scaled by 1 / global batch, so the sum is the one-device gradient). The update is
// sharded when the optimizer's rule is element-wise (no clipnorm / global_clipnorm) and the model
// is large enough (RehearsalOptions::sharded_update_min_elements): the
// all-reduce is split around it (reduce-scatter of the gradients, each device updates its 1/N of
// the variables with its own optimizer, all-gather of the variables, as XLA's sharded weight
// update and ZeRO stage 1 do); otherwise the gradients are all-reduced and every replica applies
// the whole update. Either way every replica ends each step bitwise identical. Each train step
// records a StepTrace. Rehearsal knobs (device speeds, link latency and bandwidth) slow the devices
// down in real time, and what they added is noted beside each span. Driven by one thread (fit()).
// Across processes (RehearsalOptions::processes), each process runs the devices it hosts and the
// same fit() loop; gradients, step totals and predictions are exchanged so that every process
// computes what the one-process run computes, bit for bit (a sharded update's optimizer slots are
// all-gathered into the model's optimizer at push_to_model, so rank 0 saves the whole state).
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/distribution/executors/rehearsal_options.h"
#include "core/distribution/executors/shard_exchange.h"
#include "core/distribution/layout/batch_shards.h"
#include "core/distribution/threads/device_errors.h"
#include "core/distribution/threads/device_pool.h"
#include "core/distribution/trace/collective_group.h"
#include "core/distribution/trace/device_timeline.h"
#include "core/distribution/trace/trace.h"
#include "core/training/step_executor.h"

namespace fitbench {

// Whether DataParallel over `devices` devices shards the optimizer update: more than one device,
// an element-wise rule (elementwise_update) and at least options.sharded_update_min_elements
// trainable floats. Then each device keeps the optimizer slots of its 1/N of the variables only.
// The executor decides with this, and the capacity plan (core/run/capacity.h) predicts with it.
bool shards_update(int devices, bool elementwise, int64_t trainable_elements,
                   const RehearsalOptions& options);

class DataParallelExecutor : public StepExecutor {
 public:
  DataParallelExecutor(const ExecutorContext& ctx, int devices,
                       const RehearsalOptions& options = {});
  ~DataParallelExecutor() override;

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  // Each device gathers its rows of the shuffled batch itself (its shard copy span), so the
  // gather runs on every device at once and fit()'s thread copies nothing.
  void train_step_rows(ConstMatrixRef x, ConstMatrixRef y, std::span<const int64_t> index,
                       Matrix& xb, Matrix& yb, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  void pull_from_model() override;
  void push_to_model() override;
  // What every device did in the last train_step (epoch and batch are left at -1 for fit() to
  // set). Valid until the next train_step.
  StepTrace* step_trace() override { return &timelines_.trace(); }
  const StepTrace* labelled_step_trace(int epoch, int batch) override {
    return timelines_.trace().labelled(epoch, batch);
  }

  // The devices of the run (every process's), and those this process hosts: first_device() ..
  // first_device() + local_devices() - 1; the methods below take a local index.
  int devices() const { return devices_total_; }
  int local_devices() const { return pool_.size(); }
  int first_device() const { return first_; }
  // Whether the optimizer update is sharded (shards_update, over every process's devices). Then
  // every device updates with an optimizer of its own that keeps the slots of its part
  // (Optimizer::keep_range), and the model's optimizer is the whole state, gathered at each
  // epoch's end.
  bool sharded_update() const { return sharded_; }
  // Per device this process hosts: its variables, gradients, optimizer slots, workspace, shard
  // copy and the collectives' staging buffers (device 0's variables are the model's; its
  // optimizer is the model's unless the update is sharded).
  std::vector<DeviceMemory> device_memory() const override;
  // What the rehearsal knobs added to each of device d's spans in the last train_step.
  const std::vector<SpanInjection>& injections(int device) const;
  // The variable values device d computes with (device 0's are the model's own).
  std::vector<const Matrix*> replica_values(int device) const;
  // Rows of each device's shard for a batch of `rows` (fitbench::shard_rows).
  static void shard_rows(Index rows, int devices, std::vector<Index>& offsets,
                         std::vector<Index>& sizes) {
    fitbench::shard_rows(rows, devices, offsets, sizes);
  }

 private:
  struct Device;
  using Clock = std::chrono::steady_clock;
  // Runs one phase on every device and gathers errors and totals.
  void run(BatchJob::Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
           StepTotals* totals, std::span<const int64_t> index = {});
  static void run_device(void* self, int device);
  void device_step(int d);
  void train_device(int d);
  // Adds every device's step totals to `totals` in device order (from every process).
  void add_device_totals(StepTotals& totals);
  // Sharded update across processes: every process's chunks of the model optimizer's slots.
  void gather_optimizer_state();
  // Per-device BatchNormalization statistics: every replica takes device 0's moving statistics
  // (process 0's, broadcast), as DistributedDataParallel broadcasts rank 0's buffers.
  void share_moving_statistics();

  ExecutorContext ctx_;
  RehearsalOptions options_;
  int devices_total_ = 1;
  int first_ = 0;  // the global index of this process's first device
  DevicePool pool_;
  CollectiveGroup group_;  // every device
  std::vector<std::unique_ptr<Device>> devices_;
  StepTimelines timelines_;
  DeviceErrors errors_;
  bool sharded_ = false;
  bool warmed_up_ = false;                  // the collectives' buffers are sized
  BatchJob job_;                            // the current job
  ShardExchange exchange_;                  // step totals and predictions between processes
  std::vector<StepTotals*> device_totals_;  // each device's totals, in device order
  std::vector<float> rows_out_, rows_in_;   // optimizer slots exchanged between processes
  std::vector<int> counts_, displs_;
  // The moving statistics' variable indices, when each device normalizes by its own shard's
  // statistics (RehearsalOptions::per_device_batch_statistics); empty otherwise.
  std::vector<size_t> moving_statistics_;
  // The sizes of BatchNormalization's sums in a training forward and backward (Network::
  // batch_sums): what a failed device still takes part in.
  std::vector<int64_t> forward_sums_, backward_sums_;
};

}  // namespace fitbench
