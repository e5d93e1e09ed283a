#include "core/nn/conv.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace fitbench {
namespace {

using RowBlock = Eigen::Map<Matrix>;
using ConstRowBlock = Eigen::Map<const Matrix>;

// A block whose rows follow one another in memory (a Workspace's top rows), so that its values
// may be viewed with another row width.
template <typename Ref>
auto* contiguous_data(Ref& block, const char* what) {
  if (block.rows() > 1 && block.outerStride() != block.cols())
    throw std::logic_error(std::string("Conv2D: the ") + what + " block is not contiguous");
  return block.data();
}

}  // namespace

Conv2D::Conv2D(LayerSpec spec)
    : Layer(std::move(spec)), activation_(parse_activation(this->spec().activation, "")) {}

Shape Conv2D::output_shape(const Shape& in, const std::string& place) const {
  require_image(in, place, class_name());
  const WindowGeometry g = fitted_window(in, spec().kernel_size, spec().strides, spec().padding,
                                         place, "kernel_size", "kernel");
  return {g.out_height, g.out_width, spec().filters};
}

void Conv2D::build(const Shape& in) {
  geo_ = window_geometry(in, spec().kernel_size, spec().strides, spec().padding);
}

std::vector<VariableDef> Conv2D::variable_defs(int64_t) const {
  std::vector<VariableDef> defs;
  defs.push_back({"kernel",
                  {spec().kernel_size[0], spec().kernel_size[1], geo_.channels, spec().filters},
                  spec().kernel_initializer,
                  spec().kernel_regularizer});
  if (spec().use_bias)
    defs.push_back({"bias", {spec().filters}, spec().bias_initializer, spec().bias_regularizer});
  return defs;
}

int64_t Conv2D::cache_units(int64_t) const {
  return pixels_out() * window() +
         (activation_needs_z(activation_) ? pixels_out() * spec().filters : 0);
}

void Conv2D::im2col(ConstMatrixRef x, float* windows) const {
  const Index kh = spec().kernel_size[0], kw = spec().kernel_size[1];
  const Index sh = spec().strides[0], sw = spec().strides[1];
  const Index c = geo_.channels, row_floats = kw * c, k = window();
  for (Index r = 0; r < x.rows(); ++r) {
    const float* image = x.data() + r * x.outerStride();
    float* w = windows + r * pixels_out() * k;
    for (Index oy = 0; oy < geo_.out_height; ++oy) {
      for (Index ox = 0; ox < geo_.out_width; ++ox, w += k) {
        const Index x0 = ox * sw - geo_.pad_left;
        const bool inside = x0 >= 0 && x0 + kw <= geo_.width;
        for (Index ky = 0; ky < kh; ++ky) {
          float* dst = w + ky * row_floats;
          const Index iy = oy * sh + ky - geo_.pad_top;
          if (iy < 0 || iy >= geo_.height) {
            std::fill(dst, dst + row_floats, 0.0f);
          } else if (inside) {
            // The window's row is kw neighbouring pixels: one copy.
            std::memcpy(dst, image + (iy * geo_.width + x0) * c,
                        static_cast<size_t>(row_floats) * sizeof(float));
          } else {
            for (Index kx = 0; kx < kw; ++kx) {
              const Index ix = x0 + kx;
              if (ix < 0 || ix >= geo_.width)
                std::fill(dst + kx * c, dst + (kx + 1) * c, 0.0f);
              else
                std::memcpy(dst + kx * c, image + (iy * geo_.width + ix) * c,
                            static_cast<size_t>(c) * sizeof(float));
            }
          }
        }
      }
    }
  }
}

void Conv2D::col2im(const float* windows, MatrixRef dx) const {
  const Index kh = spec().kernel_size[0], kw = spec().kernel_size[1];
  const Index sh = spec().strides[0], sw = spec().strides[1];
  const Index c = geo_.channels, k = window();
  dx.setZero();
  for (Index r = 0; r < dx.rows(); ++r) {
    float* image = dx.data() + r * dx.outerStride();
    const float* w = windows + r * pixels_out() * k;
    for (Index oy = 0; oy < geo_.out_height; ++oy) {
      for (Index ox = 0; ox < geo_.out_width; ++ox, w += k) {
        for (Index ky = 0; ky < kh; ++ky) {
          const Index iy = oy * sh + ky - geo_.pad_top;
          if (iy < 0 || iy >= geo_.height) continue;
          for (Index kx = 0; kx < kw; ++kx) {
            const Index ix = ox * sw + kx - geo_.pad_left;
            if (ix < 0 || ix >= geo_.width) continue;
            float* dst = image + (iy * geo_.width + ix) * c;
            const float* src = w + (ky * kw + kx) * c;
            for (Index ch = 0; ch < c; ++ch) dst[ch] += src[ch];
          }
        }
      }
    }
  }
}

void Conv2D::forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
                     MatrixRef cache, const ForwardContext&) const {
  const Matrix& kernel = *params[0];
  const Index n = x.rows(), rows = n * pixels_out(), filters = kernel.cols();
  float* windows = contiguous_data(cache, "cache");
  im2col(x, windows);
  RowBlock out(contiguous_data(y, "output"), rows, filters);
  RowBlock z(activation_needs_z(activation_) ? windows + rows * window() : out.data(), rows,
             filters);
  z.noalias() = ConstRowBlock(windows, rows, window()) * kernel;
  if (spec().use_bias) z.rowwise() += params[1]->row(0);
  activation_forward(activation_, z, out);
}

void Conv2D::backward(std::span<const Matrix* const> params, ConstMatrixRef, ConstMatrixRef y,
                      MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                      std::span<Matrix* const> grads, const ForwardContext&) const {
  const Matrix& kernel = *params[0];
  const Index rows = y.rows() * pixels_out(), filters = kernel.cols();
  float* windows = contiguous_data(cache, "cache");
  const ConstRowBlock out(contiguous_data(y, "output"), rows, filters);
  const ConstRowBlock z(activation_needs_z(activation_) ? windows + rows * window() : out.data(),
                        rows, filters);
  RowBlock dz(contiguous_data(dy, "gradient"), rows, filters);
  activation_backward(activation_, z, out, dz);  // dy is now dL/dz
  if (grads[0]) grads[0]->noalias() = ConstRowBlock(windows, rows, window()).transpose() * dz;
  if (spec().use_bias && grads[1]) grads[1]->row(0).noalias() = dz.colwise().sum();
  if (!want_dx) return;
  // The windows are no longer needed: their gradients take their place.
  RowBlock(windows, rows, window()).noalias() = dz * kernel.transpose();
  col2im(windows, dx);
}

}  // namespace fitbench
