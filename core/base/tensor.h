// Dense float32 matrices used everywhere in the engine: rows are samples (dim 0, the batch),
// columns are features, as Keras's (batch, units) tensors. Row-major, so a batch's rows are
// contiguous and a shard of a batch is a plain block. Value types; no shared state.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <limits>
#include <vector>

namespace fitbench {

using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using MatrixRef = Eigen::Ref<Matrix>;
using ConstMatrixRef = Eigen::Ref<const Matrix>;
using Index = Eigen::Index;

// A Keras-style shape without the batch dimension's None, e.g. {4, 1} for a kernel or {1} for a
// bias.
using Shape = std::vector<int64_t>;

// The number of values in one sample of `shape` (1 for a scalar), saturating at INT64_MAX for
// a shape read from a file that no memory could hold.
inline int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n)) return std::numeric_limits<int64_t>::max();
  return n;
}

// A variable's Keras shape as the row-major matrix that holds it: a bias (units) is one row, a
// kernel (..., in, out) is (the product of the other axes, out). So a Dense kernel (in, out) is
// itself and a Conv2D kernel (kh, kw, in, out) is (kh * kw * in, out), its values in Keras's C
// order.
inline Index matrix_rows(const Shape& shape) {
  return shape.size() <= 1 ? 1 : shape_size(Shape(shape.begin(), shape.end() - 1));
}
inline Index matrix_cols(const Shape& shape) { return shape.empty() ? 1 : shape.back(); }

// The bytes of one float32 value, for memory and traffic counts.
inline constexpr int64_t kFloatBytes = sizeof(float);

}  // namespace fitbench
