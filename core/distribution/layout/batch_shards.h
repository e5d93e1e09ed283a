// What the distributed executors (DataParallel, ModelParallel) share around each batch: its split
// along dim 0 into contiguous shards, the job the devices work on, each device's copy of its
// shard, the sums a shard adds to the step's totals, and a device's gradients as the pieces of
// one buffer for an all-reduce. Free functions and value types; a ShardBuffers is used by its
// device's thread.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/base/tensor.h"
#include "core/training/replica.h"

namespace fitbench {

// Rows of each of `shards` shards of a batch of `rows`: contiguous, the first rows % shards
// shards one row longer (sizes 4, 3, 3 for 10 rows on 3 shards; a shard may get none).
void shard_rows(Index rows, int shards, std::vector<Index>& offsets, std::vector<Index>& sizes);

// The batch the devices of a distributed executor work on during one job (set by the driving
// thread before the job, read by the devices during it).
struct BatchJob {
  enum class Phase { kTrain, kTest, kPredict };
  Phase phase = Phase::kTrain;
  const ConstMatrixRef* x = nullptr;
  const ConstMatrixRef* y = nullptr;  // null when predicting
  MatrixRef* out = nullptr;           // predictions (kPredict only)
  uint64_t step = 0;                  // the model's train step counter (kTrain)
  float scale = 1.0f;                 // the loss gradient's scale: 1 / the batch's rows
  std::vector<Index> offsets, sizes;  // each shard's rows
  // A gathered batch: rows index[i] of x and y form the batch (empty: x and y are the batch).
  std::span<const int64_t> index;

  // Sets the job and splits the batch (x and y, or their rows `index`) into `shards` shards.
  void start(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y, MatrixRef* out,
             int shards, std::span<const int64_t> index = {});
  Index rows() const { return index.empty() ? x->rows() : static_cast<Index>(index.size()); }
  bool training() const { return phase == Phase::kTrain; }
};

// A device's own copy of its rows of a batch (the "shard copy" of the trace).
struct ShardBuffers {
  Matrix x, y;
  Index capacity = 0;  // rows the buffers keep room for

  // Room for `rows` rows of `features` columns (allocation happens here and when a batch's
  // target has more columns than seen so far).
  void reserve(Index rows, Index features);
  // Copies rows [offset, offset + rows) of the job's batch, and of y unless it is null (from
  // rows job.index[offset...] of x and y for a gathered batch).
  void copy(const BatchJob& job, Index offset, Index rows);
};

// Adds a shard's loss sum, sample count and metric states (of y_pred against y) to totals.
void add_shard_totals(const ComputeGraph& graph, ConstMatrixRef y_pred, ConstMatrixRef y,
                      double loss_sum, StepTotals& totals);

// The gradients that are not null, as the pieces of one buffer (for an all-reduce), and the
// number of floats in it.
std::vector<std::span<float>> gradient_pieces(std::span<Matrix* const> grads);
int64_t total_size(std::span<const std::span<float>> pieces);

}  // namespace fitbench
