#include "core/nn/window_pooling.h"

#include <limits>

namespace fitbench {

Shape WindowPooling2D::output_shape(const Shape& in, const std::string& place) const {
  require_image(in, place, class_name());
  const WindowGeometry g = fitted_window(in, spec().pool_size, spec().strides, spec().padding,
                                         place, "pool_size", "window");
  return {g.out_height, g.out_width, g.channels};
}

void WindowPooling2D::build(const Shape& in) {
  geo_ = window_geometry(in, spec().pool_size, spec().strides, spec().padding);
}

WindowPooling2D::Window WindowPooling2D::window(Index oy, Index ox) const {
  const Index top = oy * spec().strides[0] - geo_.pad_top;
  const Index left = ox * spec().strides[1] - geo_.pad_left;
  return {std::max<Index>(top, 0), std::min<Index>(top + spec().pool_size[0], geo_.height),
          std::max<Index>(left, 0), std::min<Index>(left + spec().pool_size[1], geo_.width)};
}

void WindowPooling2D::forward(std::span<const Matrix* const>, ConstMatrixRef x, MatrixRef y,
                              MatrixRef, const ForwardContext&) const {
  const Index c = geo_.channels;
  using Channels = Eigen::Map<Eigen::ArrayXf>;
  using ConstChannels = Eigen::Map<const Eigen::ArrayXf>;
  for (Index r = 0; r < x.rows(); ++r) {
    const float* image = x.data() + r * x.outerStride();
    float* out = y.data() + r * y.outerStride();
    for (Index oy = 0; oy < geo_.out_height; ++oy)
      for (Index ox = 0; ox < geo_.out_width; ++ox, out += c) {
        const Window w = window(oy, ox);
        Channels o(out, c);
        o.setConstant(kind_ == Kind::kMax ? -std::numeric_limits<float>::infinity() : 0.0f);
        for (Index iy = w.y0; iy < w.y1; ++iy)
          for (Index ix = w.x0; ix < w.x1; ++ix) {
            const ConstChannels pixel(image + (iy * geo_.width + ix) * c, c);
            if (kind_ == Kind::kMax)
              o = o.max(pixel);
            else
              o += pixel;
          }
        if (kind_ == Kind::kAverage) o /= static_cast<float>(w.pixels());
      }
  }
}

void WindowPooling2D::backward(std::span<const Matrix* const>, ConstMatrixRef x, ConstMatrixRef y,
                               MatrixRef, MatrixRef dy, bool want_dx, MatrixRef dx,
                               std::span<Matrix* const>, const ForwardContext&) const {
  if (!want_dx) return;
  const Index c = geo_.channels;
  dx.setZero();
  for (Index r = 0; r < dx.rows(); ++r) {
    const float* image = x.data() + r * x.outerStride();
    const float* out = y.data() + r * y.outerStride();
    const float* grad = dy.data() + r * dy.outerStride();
    float* back = dx.data() + r * dx.outerStride();
    for (Index oy = 0; oy < geo_.out_height; ++oy)
      for (Index ox = 0; ox < geo_.out_width; ++ox, out += c, grad += c) {
        const Window w = window(oy, ox);
        if (kind_ == Kind::kAverage) {
          const float count = static_cast<float>(w.pixels());
          for (Index iy = w.y0; iy < w.y1; ++iy)
            for (Index ix = w.x0; ix < w.x1; ++ix) {
              float* d = back + (iy * geo_.width + ix) * c;
              for (Index ch = 0; ch < c; ++ch) d[ch] += grad[ch] / count;
            }
          continue;
        }
        // Each channel's gradient to the first pixel holding its maximum.
        for (Index ch = 0; ch < c; ++ch) {
          bool found = false;
          for (Index iy = w.y0; iy < w.y1 && !found; ++iy)
            for (Index ix = w.x0; ix < w.x1 && !found; ++ix) {
              const Index at = (iy * geo_.width + ix) * c + ch;
              if (image[at] == out[ch]) {
                back[at] += grad[ch];
                found = true;
              }
            }
        }
      }
  }
}

}  // namespace fitbench
