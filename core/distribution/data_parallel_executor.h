// keras.distribution.DataParallel on simulated devices: every device holds a replica of the
// variables and its own optimizer state; each batch is split along dim 0 into contiguous shards
// (uneven when it does not divide: the first batch % devices shards get one more row); every
// device copies its shard, runs forward and backward on it on its own thread; gradients are
// all-reduced (Collectives, ring or naive) as the sample-weighted mean (each shard's loss gradient
// is scaled by 1 / global batch, so the sum is the one-device gradient); every replica applies the
// same update and stays bitwise identical. Each train step records a StepTrace. Rehearsal knobs
// (device speeds, link latency and bandwidth) slow the devices down in real time. Driven by one
// thread (fit()).
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <vector>

#include "core/distribution/collectives.h"
#include "core/distribution/device_pool.h"
#include "core/distribution/trace.h"
#include "core/training/step_executor.h"

namespace fitbench {

// How the simulated hardware behaves (DevicesSpec's rehearsal knobs, validated). Defaults cost
// nothing.
struct DataParallelOptions {
  CollectiveAlgorithm allreduce = CollectiveAlgorithm::kRing;  // the gradient all-reduce
  // Relative speed per device in (0, 1]: a device with speed s makes each of its compute phases
  // (forward, backward, update) last 1/s of their measured time. Empty: every device at 1.
  std::vector<double> speed;
  LinkModel link;  // each collective's modeled latency and bandwidth cost
};

class DataParallelExecutor : public StepExecutor {
 public:
  DataParallelExecutor(const ExecutorContext& ctx, int devices,
                       const DataParallelOptions& options = {});
  ~DataParallelExecutor() override;

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  void pull_from_model() override;
  void push_to_model() override;
  // What every device did in the last train_step (epoch and batch are left at -1 for fit() to
  // set). Valid until the next train_step.
  StepTrace* step_trace() override { return &trace_; }

  int devices() const { return pool_.size(); }
  // The variable values device d computes with (device 0's are the model's own).
  std::vector<const Matrix*> replica_values(int device) const;
  // Rows of each device's shard for a batch of `rows`.
  static void shard_rows(Index rows, int devices, std::vector<Index>& offsets,
                         std::vector<Index>& sizes);

 private:
  struct Device;
  enum class Phase { kTrain, kTest, kPredict };
  using Clock = std::chrono::steady_clock;
  // Runs one phase on every device and gathers errors and totals.
  void run(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
           StepTotals* totals);
  static void run_device(void* self, int device);
  void device_step(int d);
  void train_device(int d);
  // Records a span from `begin` to now on device d, first stretching forward, backward and update
  // to 1/speed of their length; returns the span's end.
  Clock::time_point end_span(Device& dev, SpanKind kind, Clock::time_point begin);
  double since_start_us(Clock::time_point t) const;

  ExecutorContext ctx_;
  DataParallelOptions options_;
  DevicePool pool_;
  std::unique_ptr<Collectives> collectives_;
  std::vector<std::unique_ptr<Device>> devices_;
  Clock::time_point start_;  // the run's start: trace timestamps count from here
  StepTrace trace_;
  Index shard_capacity_ = 0;
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

}  // namespace fitbench
