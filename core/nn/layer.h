// The layer interface: a layer holds only its configuration. Parameters and per-call buffers are
// passed in, so one layer object serves every replica at once (forward/backward are const and
// re-entrant). Row blocks are (n, units) with n <= the workspace capacity.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/nn/layer_spec.h"

namespace fitbench {

// A sample's shape as Keras prints a batch of them: "(None, 28, 28)".
inline std::string batch_shape_text(const Shape& shape) {
  std::string out = "(None";
  for (int64_t d : shape) out += ", " + std::to_string(d);
  return out + ")";
}

// Sums values over every part of a global batch that devices share, in place: each part's call
// returns the sum of all parts' values. Every part calls it the same number of times in the same
// order (an executor implements it with a collective over its devices).
class BatchReducer {
 public:
  virtual ~BatchReducer() = default;
  virtual void sum(std::span<double> values) = 0;
};

// What a layer needs to know about the current call (forward and backward alike).
struct ForwardContext {
  bool training = false;
  uint64_t step = 0;     // global training step (dropout masks)
  Index row_offset = 0;  // first row of this block within the global batch (dropout masks)
  uint64_t seed = 0;     // the run's dropout seed
  // Statistics over the batch (BatchNormalization): null when this call's rows are the whole
  // batch, else what sums a statistic over the global batch's parts.
  BatchReducer* batch = nullptr;
  // This layer's per-call values that are not per row, kept from forward to backward and
  // update_state (BatchNormalization's statistics); Network sets it for each layer from its
  // Workspace (scratch_size() doubles).
  std::span<double> scratch;
};

// A variable a layer creates when built: name within the layer ("kernel"), Keras shape, init.
struct VariableDef {
  std::string name;
  Shape shape;
  InitializerSpec initializer;
  RegularizerSpec regularizer;
  // false: state fit() does not train but the layer updates (BatchNormalization's moving
  // statistics); such a variable has no gradient and no optimizer slots.
  bool trainable = true;
};

class Layer {
 public:
  explicit Layer(LayerSpec spec) : spec_(std::move(spec)) {}
  virtual ~Layer() = default;

  const LayerSpec& spec() const { return spec_; }
  const std::string& name() const { return spec_.name; }
  const std::string& class_name() const { return spec_.class_name; }

  // Layers compute on rows of flat values: a sample of shape (28, 28) is a row of 784 values in
  // row-major (C) order, as NumPy stores it, so a shape is metadata and Flatten or Reshape moves
  // no value. output_shape maps the sample shape, and throws InputError at `place` when the layer
  // cannot take `in`.
  virtual Shape output_shape(const Shape& in, const std::string& /*place*/) const { return in; }
  // Called by Network::build with the input's sample shape once output_shape accepted it, before
  // variable_defs and cache_units: a layer whose computation depends on the input's geometry and
  // not only on its width (Conv2D) records it here. Not called while the layer computes.
  virtual void build(const Shape& /*in*/) {}
  virtual std::vector<VariableDef> variable_defs(int64_t /*input_units*/) const { return {}; }
  // Columns of the per-call cache this layer keeps between forward and backward (0: none).
  virtual int64_t cache_units(int64_t /*input_units*/) const { return 0; }
  // Doubles of per-call scratch that are not per row (ForwardContext::scratch; 0: none).
  virtual int64_t scratch_size() const { return 0; }
  // After a training step's forward: updates the layer's state variables (those VariableDef
  // marks not trainable; `params` are all its variables) from what forward left in `scratch`.
  virtual void update_state(std::span<Matrix* const> /*params*/,
                            std::span<const double> /*scratch*/) const {}
  // The sizes of the BatchReducer::sum calls a training forward (or backward, with want_dx)
  // makes, in order, appended to `sizes`: the sums a device that failed before them still takes
  // part in, so that the devices sharing its batch do not wait for it.
  virtual void batch_sums(bool /*backward*/, bool /*want_dx*/,
                          std::vector<int64_t>& /*sizes*/) const {}

  // y = layer(x). `params` are this layer's variables in variable_defs() order.
  virtual void forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
                       MatrixRef cache, const ForwardContext& ctx) const = 0;
  // dy: dL/dy on entry (may be overwritten); cache: what forward kept (may be overwritten too);
  // ctx: the forward call's context (its scratch as forward left it).
  // Writes dL/dparam into grads (entries may be null for frozen variables; gradients are
  // overwritten, not accumulated) and dL/dx into dx when want_dx.
  virtual void backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                        MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                        std::span<Matrix* const> grads, const ForwardContext& ctx) const = 0;

 private:
  LayerSpec spec_;
};

}  // namespace fitbench
