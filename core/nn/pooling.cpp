#include "core/nn/pooling.h"

#include "core/nn/window_geometry.h"

namespace fitbench {

Shape GlobalAveragePooling2D::output_shape(const Shape& in, const std::string& place) const {
  require_image(in, place, class_name());
  return {in[2]};
}

void GlobalAveragePooling2D::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                                     MatrixRef, const ForwardContext&) const {
  const Index channels = y.cols(), pixels = x.cols() / channels;
  const float count = static_cast<float>(pixels);
  for (Index r = 0; r < x.rows(); ++r) {
    // The row's pixels as a (pixels, channels) row-major block; the column sums are the sums.
    const Eigen::Map<const Matrix, 0, Eigen::OuterStride<>> image(x.row(r).data(), pixels, channels,
                                                                  Eigen::OuterStride<>(channels));
    y.row(r) = image.colwise().sum() / count;
  }
}

void GlobalAveragePooling2D::backward(std::span<const Matrix* const>, ConstMatrixRef,
                                      ConstMatrixRef, MatrixRef, MatrixRef dy, bool want_dx,
                                      MatrixRef dx, std::span<Matrix* const>,
                                      const ForwardContext&) const {
  if (!want_dx) return;
  const Index channels = dy.cols(), pixels = dx.cols() / channels;
  const float count = static_cast<float>(pixels);
  for (Index r = 0; r < dx.rows(); ++r) {
    Eigen::Map<Matrix, 0, Eigen::OuterStride<>> image(dx.row(r).data(), pixels, channels,
                                                      Eigen::OuterStride<>(channels));
    image.rowwise() = dy.row(r) / count;
  }
}

}  // namespace fitbench
