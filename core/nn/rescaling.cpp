#include "core/nn/rescaling.h"

namespace fitbench {

void Rescaling::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y, MatrixRef,
                        const ForwardContext&) const {
  y.noalias() = x * static_cast<float>(spec().scale);
  // A separate pass: one expression would let the compiler fuse the multiply and the add (FMA),
  // a rounding Keras's float32 call does not make.
  y.array() += static_cast<float>(spec().offset);
}

void Rescaling::backward(std::span<const Matrix* const>, ConstMatrixRef, ConstMatrixRef, MatrixRef,
                         MatrixRef dy, bool want_dx, MatrixRef dx, std::span<Matrix* const>,
                         const ForwardContext&) const {
  if (want_dx) dx.noalias() = dy * static_cast<float>(spec().scale);
}

}  // namespace fitbench
