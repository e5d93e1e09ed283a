// The state of one device of ModelParallelExecutor (model_parallel_executor.h): its slices,
// gradients, optimizer and per-layer buffers. Internal to core/distribution (the executor's two
// source files); used by the device's thread during a job.
#pragma once

#include <span>
#include <vector>

#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/batch_shards.h"

namespace fitbench {

struct ModelParallelExecutor::Device {
  int index = 0;     // this process's index of the device (its flat mesh index less first_)
  int b = 0, m = 0;  // coordinates on the (batch, model) mesh
  // Its mesh row among those this process hosts (rows_) and its rank in the row's collectives
  // (m, or its index among the row's devices in this process when the row spans processes); the
  // same for its column (columns_; b, or its index).
  int row = 0, row_rank = 0, col = 0, col_rank = 0;
  bool writes = false;  // writes its slices back into the model (this process's first b of its m)
  std::vector<Matrix> values, grads;
  std::vector<Matrix*> params, grad_ptrs;  // grad_ptrs[i] null for a frozen variable
  std::vector<const Matrix*> const_params;
  std::vector<Matrix*> trainable_vars, trainable_grads;
  // The trainable gradients, summed along the batch axis; per variable its squared norm, summed
  // along the model axis (norm clipping).
  std::vector<std::span<float>> grad_pieces;
  std::vector<float> squared_norms;
  Optimizer* optimizer = nullptr;
  StepTotals totals;
  ShardBuffers shard;  // this device's copy of its rows of the batch
  // Per layer, for this device's rows of a batch: pre-activation, output, layer cache, dL/d(out);
  // this device's piece of an all-gather and the row's gathered pieces (one after the other); the
  // whole bias when a replicated kernel has a sharded bias.
  Index capacity = 0;
  std::vector<Matrix> z, a, cache, da;
  std::vector<std::vector<float>> piece, gathered, full_bias;
  // Per Conv2D split by its output channels whose bias is replicated: the device's channels of the
  // bias, and their gradient (the row all-gathers the whole bias's).
  std::vector<Matrix> conv_bias, conv_bias_grad;
  // Per layer, its scratch (Layer::scratch_size()); BatchNormalization's sums on their way
  // through the column's all_reduce (the batch's statistics over the mesh's rows).
  std::vector<std::vector<double>> scratch;
  std::vector<float> batch_sums;
  std::vector<int64_t> sum_sizes;  // a failed device's BatchNormalization sums (finish)
};

}  // namespace fitbench
