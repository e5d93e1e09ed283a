// Dense float32 matrices used everywhere in the engine: rows are samples (dim 0, the batch),
// columns are features, as Keras's (batch, units) tensors. Row-major, so a batch's rows are
// contiguous and a shard of a batch is a plain block. Value types; no shared state.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

namespace fitbench {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixRef = Eigen::Ref<Matrix>;
using ConstMatrixRef = Eigen::Ref<const Matrix>;
using Index = Eigen::Index;

// A Keras-style shape without the batch dimension's None, e.g. {4, 1} for a kernel or {1} for a
// bias.
using Shape = std::vector<int64_t>;

}  // namespace fitbench
