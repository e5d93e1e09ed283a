// Where a window (a Conv2D's kernel, a pooling layer's pool) goes over a (height, width,
// channels) sample: the output's size and the padding before the first window, as Keras's
// compute_conv_output_shape and XLA's "VALID" and "SAME" paddings give them. Free functions;
// thread-safe.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/nn/layer.h"

namespace fitbench {

struct WindowGeometry {
  Index height = 0, width = 0, channels = 0;
  Index out_height = 0, out_width = 0;
  Index pad_top = 0, pad_left = 0;  // "same": the zeros above and left of the image
};

// Throws InputError at `place` unless `in` is an image (height, width, channels), saying what to
// do for `class_name`.
inline void require_image(const Shape& in, const std::string& place,
                          const std::string& class_name) {
  if (in.size() != 3)
    throw InputError(place, "this " + class_name + " layer receives " + batch_shape_text(in) +
                                ": it takes images of shape (height, width, channels), so give "
                                "the model such an input or add a Reshape before it (e.g. to "
                                "(28, 28, 1) for 28 x 28 grey pictures)");
}

// The geometry of `window` (height, width) moved by `strides` over the image `in` with
// `padding` "valid" or "same". "same" gives ceil(size / stride) outputs and splits the zeros as
// XLA's SAME, the smaller half first; "valid" gives (size - window) // stride + 1, or 0 when the
// window does not fit.
inline WindowGeometry window_geometry(const Shape& in, const std::vector<int64_t>& window,
                                      const std::vector<int64_t>& strides,
                                      const std::string& padding) {
  WindowGeometry g;
  g.height = in[0];
  g.width = in[1];
  g.channels = in[2];
  Index out[2], pad[2];
  for (size_t a = 0; a < 2; ++a) {
    const Index size = in[a], k = window[a], s = strides[a];
    if (padding == "same") {
      out[a] = (size - 1) / s + 1;
      pad[a] = std::max<Index>((out[a] - 1) * s + k - size, 0) / 2;
    } else {
      out[a] = size >= k ? (size - k) / s + 1 : 0;
      pad[a] = 0;
    }
  }
  g.out_height = out[0];
  g.out_width = out[1];
  g.pad_top = pad[0];
  g.pad_left = pad[1];
  return g;
}

// window_geometry for a layer at `place` whose window is its config's `key` ("kernel_size",
// "pool_size"): throws InputError there when a "valid" window does not fit in the image.
inline WindowGeometry fitted_window(const Shape& in, const std::vector<int64_t>& window,
                                    const std::vector<int64_t>& strides, const std::string& padding,
                                    const std::string& place, const std::string& key,
                                    const std::string& what) {
  const WindowGeometry g = window_geometry(in, window, strides, padding);
  if (g.out_height < 1 || g.out_width < 1)
    throw InputError(place + ".config." + key,
                     "the " + std::to_string(window[0]) + " x " + std::to_string(window[1]) + " " +
                         what + " does not fit in this layer's input " + batch_shape_text(in) +
                         " with padding \"valid\": use a smaller " + what + " or padding \"same\"");
  return g;
}

}  // namespace fitbench
