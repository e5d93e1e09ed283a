#include "core/nn/activation_layer.h"

#include "core/base/error.h"

namespace fitbench {

Shape ActivationLayer::output_shape(const Shape& in, const std::string& place) const {
  if (activation_ == Activation::kSoftmax && in.size() != 1)
    throw InputError(place, "a softmax here would receive " + batch_shape_text(in) +
                                ", and Keras's softmax runs over the last axis alone; fitbench's "
                                "runs over one axis of features, so add a Flatten layer before it");
  return in;
}

ActivationLayer::ActivationLayer(LayerSpec spec)
    : Layer(std::move(spec)), activation_(parse_activation(this->spec().activation, "")) {}

void ActivationLayer::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                              MatrixRef, const ForwardContext&) const {
  activation_forward(activation_, x, y);
}

void ActivationLayer::backward(std::span<const Matrix* const>, ConstMatrixRef x, ConstMatrixRef y,
                               MatrixRef, MatrixRef dy, bool want_dx, MatrixRef dx,
                               std::span<Matrix* const>, const ForwardContext&) const {
  if (!want_dx) return;
  activation_backward(activation_, x, y, dy);
  dx = dy;
}

}  // namespace fitbench
