// keras.layers.Flatten and keras.layers.Reshape: a sample's values stay where they are (rows
// are row-major, see Layer), only its shape changes, so forward and backward copy the block.
// No variables; thread-safe.
#pragma once

#include "core/nn/layer.h"

namespace fitbench {

// Throws InputError at `place`.config.target_shape unless `target_shape` is a shape Keras's
// Reshape takes: one to eight positive dimensions, one of which may be -1.
void check_target_shape(const Shape& target_shape, const std::string& place);

// The output shape of Reshape(target_shape) for a sample of shape `in`, as Keras's
// compute_reshape_output_shape gives it: one -1 is inferred. Throws InputError at `place` when
// target_shape is not a shape (a 0, a dimension below -1, two -1s) or holds another number of
// values than `in`.
Shape reshape_output(const Shape& in, const Shape& target_shape, const std::string& place);

// The base of both: y = x, dx = dy.
class ReshapingLayer : public Layer {
 public:
  using Layer::Layer;
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;
};

// keras.layers.Flatten (channels_last): (None, d1, ..., dk) -> (None, d1 * ... * dk).
class Flatten : public ReshapingLayer {
 public:
  using ReshapingLayer::ReshapingLayer;
  Shape output_shape(const Shape& in, const std::string& place) const override;
};

// keras.layers.Reshape(target_shape).
class Reshape : public ReshapingLayer {
 public:
  using ReshapingLayer::ReshapingLayer;
  Shape output_shape(const Shape& in, const std::string& place) const override;
};

}  // namespace fitbench
