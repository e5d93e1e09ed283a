// keras.layers.MaxPooling2D and AveragePooling2D (channels_last): a window of pool_size pixels
// moves over a (height, width, channels) sample by `strides`, "valid" (inside the image only) or
// "same" (the image padded as XLA's SAME pads it, the smaller half first), and each channel's
// maximum or mean over the window's pixels is the output pixel's, (out_h, out_w, channels).
// Padding never wins a maximum and is not counted in a mean: a "same" window at the border
// averages its pixels inside the image alone, as Keras's average_pool divides by the window's
// count of real pixels.
//
// Backward: a maximum's gradient goes to the first pixel in the window (row by row) that holds
// it, found again from the input, so no cache is kept; a mean's to each of its pixels divided by
// their count. The input's geometry is recorded by build(). Thread-safe once built.
#pragma once

#include "core/nn/layer.h"
#include "core/nn/window_geometry.h"

namespace fitbench {

class WindowPooling2D : public Layer {
 public:
  enum class Kind { kMax, kAverage };
  WindowPooling2D(LayerSpec spec, Kind kind) : Layer(std::move(spec)), kind_(kind) {}

  // Throws InputError at `place` unless `in` is (height, width, channels) and the window fits.
  Shape output_shape(const Shape& in, const std::string& place) const override;
  void build(const Shape& in) override;
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;

 private:
  // The window of output pixel (oy, ox), clipped to the image: rows [y0, y1), columns [x0, x1).
  struct Window {
    Index y0, y1, x0, x1;
    Index pixels() const { return (y1 - y0) * (x1 - x0); }
  };
  Window window(Index oy, Index ox) const;

  Kind kind_;
  WindowGeometry geo_;
};

}  // namespace fitbench
