#include "core/nn/reshaping.h"

#include "core/base/error.h"

namespace fitbench {

void check_target_shape(const Shape& target_shape, const std::string& place) {
  const std::string target = place + ".config.target_shape";
  if (target_shape.empty() || target_shape.size() > 8)
    throw InputError(target, "must hold one to eight dimensions, e.g. [7, 112] or [-1, 28]");
  int unknown = 0;
  double known = 1.0;
  for (const int64_t d : target_shape) {
    if (d == -1) {
      if (++unknown > 1)
        throw InputError(target, "may hold one -1 (a dimension to infer), not two");
    } else if (d < 1) {
      throw InputError(
          target, "must hold positive dimensions and at most one -1, got " + std::to_string(d));
    } else {
      known *= static_cast<double>(d);
    }
  }
  if (known > 1e15) throw InputError(target, "describes more values than any model can hold");
}

Shape reshape_output(const Shape& in, const Shape& target_shape, const std::string& place) {
  check_target_shape(target_shape, place);
  const std::string target = place + ".config.target_shape";
  int unknown = -1;
  int64_t known = 1;
  for (size_t i = 0; i < target_shape.size(); ++i) {
    if (target_shape[i] == -1)
      unknown = static_cast<int>(i);
    else
      known *= target_shape[i];
  }
  const int64_t size = shape_size(in);
  Shape out = target_shape;
  if (unknown >= 0) {
    if (size % known != 0)
      throw InputError(target, "cannot hold the " + std::to_string(size) + " values of " +
                                   batch_shape_text(in) + ": they are not a multiple of " +
                                   std::to_string(known));
    out[static_cast<size_t>(unknown)] = size / known;
  } else if (known != size) {
    throw InputError(target, batch_shape_text(target_shape) + " holds " + std::to_string(known) +
                                 " values but the layer receives " + batch_shape_text(in) + ", " +
                                 std::to_string(size) +
                                 " values; a reshape keeps the number of values");
  }
  return out;
}

void ReshapingLayer::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                             MatrixRef, const ForwardContext&) const {
  y = x;
}

void ReshapingLayer::backward(std::span<const Matrix* const>, ConstMatrixRef, ConstMatrixRef,
                              MatrixRef, MatrixRef dy, bool want_dx, MatrixRef dx,
                              std::span<Matrix* const>, const ForwardContext&) const {
  if (want_dx) dx = dy;
}

Shape Flatten::output_shape(const Shape& in, const std::string&) const { return {shape_size(in)}; }

Shape Reshape::output_shape(const Shape& in, const std::string& place) const {
  return reshape_output(in, spec().target_shape, place);
}

}  // namespace fitbench
