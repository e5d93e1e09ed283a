// How a model is laid out on a ModelParallel mesh of B (batch axis) x M (model axis) devices:
// which matrix axis of each variable is split over the model axis, the flat mesh index of each
// (batch, model) coordinate, and the block of a variable each model-axis device holds. Value
// types and free functions; thread-safe.
#pragma once

#include <vector>

#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/network.h"

namespace fitbench {

// Kernels are (input, units) matrices, a bias one row of units.
struct ModelParallelPlan {
  enum class Split { kReplicated, kRows, kColumns };
  int batch = 1;                 // B: devices along the batch axis
  int model = 1;                 // M: devices along the model axis
  std::vector<int> device;       // device[b * model + m]: the flat mesh index (cpu:<index>)
  std::vector<Split> variables;  // one per network variable

  int device_at(int b, int m) const { return device[static_cast<size_t>(b * model + m)]; }
};

// Resolves spec (class ModelParallel) for `network` (built) on `devices` devices. Throws
// InputError for any error check_layout_map reports, or for a layout fitbench cannot run.
ModelParallelPlan make_model_parallel_plan(const Network& network, const DistributionSpec& spec,
                                           int devices);

// The block of a full variable matrix that model-axis device m of `model` holds.
struct SliceRect {
  Index row = 0, col = 0, rows = 0, cols = 0;
};
SliceRect slice_rect(const Matrix& full, ModelParallelPlan::Split split, int m, int model);
// The same for a variable matrix of rows x cols (the capacity plan's, before any is allocated).
SliceRect slice_rect(Index rows, Index cols, ModelParallelPlan::Split split, int m, int model);

}  // namespace fitbench
