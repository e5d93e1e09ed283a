// keras.distribution.DataParallel on simulated devices: every device holds a replica of the
// variables and its own optimizer state; each batch is split along dim 0 into contiguous shards
// (uneven when it does not divide: the first batch % devices shards get one more row); every
// device runs forward and backward on its shard on its own thread; gradients are all-reduced as
// the sample-weighted mean (each shard's loss gradient is scaled by 1 / global batch, so the sum
// is the one-device gradient); every replica applies the same update and stays bitwise
// identical. Driven by one thread (fit()).
#pragma once

#include <memory>
#include <vector>

#include "core/distribution/device_pool.h"
#include "core/training/step_executor.h"

namespace fitbench {

class DataParallelExecutor : public StepExecutor {
 public:
  DataParallelExecutor(const ExecutorContext& ctx, int devices);
  ~DataParallelExecutor() override;

  void prepare(Index max_rows) override;
  void train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step, StepTotals& totals) override;
  void test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) override;
  void predict_step(ConstMatrixRef x, MatrixRef out) override;
  void pull_from_model() override;
  void push_to_model() override;

  int devices() const { return pool_.size(); }
  // The variable values device d computes with (device 0's are the model's own).
  std::vector<const Matrix*> replica_values(int device) const;
  // Rows of each device's shard for a batch of `rows`.
  static void shard_rows(Index rows, int devices, std::vector<Index>& offsets,
                         std::vector<Index>& sizes);

 private:
  struct Device;
  enum class Phase { kTrain, kTest, kPredict };
  // Runs one phase on every device and gathers errors and totals.
  void run(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
           StepTotals* totals);
  static void run_device(void* self, int device);
  void device_step(int d);

  ExecutorContext ctx_;
  DevicePool pool_;
  std::vector<std::unique_ptr<Device>> devices_;
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
