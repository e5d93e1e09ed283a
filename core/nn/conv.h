// keras.layers.Conv2D (channels_last): each of `filters` kernels of (kh, kw, channels) slides over
// a (height, width, channels) sample with the layer's strides, "valid" (no padding) or "same"
// (zeros around, split as XLA's SAME splits them: the smaller half before), giving (out_h, out_w,
// filters) = activation(convolution + bias).
//
// The convolution is one GEMM: forward writes each sample's windows as rows (im2col) into the
// per-call cache, so that n samples are an (n * out_h * out_w, kh * kw * channels) matrix whose
// product with the kernel, held as the (kh * kw * channels, filters) matrix of Keras's (kh, kw,
// channels, filters) values in C order, is the output's (n * out_h * out_w, filters) rows in
// place. Backward reuses the windows for the kernel's gradient, then overwrites them with the
// windows' gradients and adds those back into the input's pixels (col2im). No allocation per call.
//
// The input's geometry is recorded by build(); the number of filters is read from the kernel, so a
// kernel sliced along its output channels computes those channels alone. Thread-safe once built.
#pragma once

#include "core/nn/activations.h"
#include "core/nn/layer.h"
#include "core/nn/window_geometry.h"

namespace fitbench {

class Conv2D : public Layer {
 public:
  explicit Conv2D(LayerSpec spec);

  Activation activation() const { return activation_; }
  // Throws InputError at `place` unless `in` is (height, width, channels) and the kernel fits.
  Shape output_shape(const Shape& in, const std::string& place) const override;
  void build(const Shape& in) override;
  std::vector<VariableDef> variable_defs(int64_t input_units) const override;
  // The windows (out_h * out_w * kh * kw * channels), then the pre-activation (out_h * out_w *
  // filters) unless the activation's derivative follows from its output.
  int64_t cache_units(int64_t input_units) const override;
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
               MatrixRef cache, const ForwardContext& ctx) const override;
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                std::span<Matrix* const> grads, const ForwardContext& ctx) const override;

  // After build: the output's pixels, and one window's values (kh * kw * channels); a sample's
  // forward GEMM is (pixels_out, window) x (window, filters).
  Index pixels_out() const { return geo_.out_height * geo_.out_width; }
  Index window() const { return spec().kernel_size[0] * spec().kernel_size[1] * geo_.channels; }

 private:
  void im2col(ConstMatrixRef x, float* windows) const;
  void col2im(const float* windows, MatrixRef dx) const;

  Activation activation_;
  WindowGeometry geo_;
};

}  // namespace fitbench
