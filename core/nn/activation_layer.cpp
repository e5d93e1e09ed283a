#include "core/nn/activation_layer.h"

namespace fitbench {

ActivationLayer::ActivationLayer(LayerSpec spec)
    : Layer(std::move(spec)), activation_(parse_activation(this->spec().activation, "")) {}

void ActivationLayer::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                              MatrixRef, const ForwardContext&) const {
  activation_forward(activation_, x, y);
}

void ActivationLayer::backward(std::span<const Matrix* const>, ConstMatrixRef x, ConstMatrixRef y,
                               ConstMatrixRef, MatrixRef dy, bool want_dx, MatrixRef dx,
                               std::span<Matrix* const>) const {
  if (!want_dx) return;
  activation_backward(activation_, x, y, dy);
  dx = dy;
}

}  // namespace fitbench
