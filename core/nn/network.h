// The computation of a Sequential model: its layers in order, their shapes once built, and
// forward/backward over a block of rows using caller-owned parameters and a caller-owned
// Workspace. A Network is immutable after build() and may be used by many replicas at once.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/nn/layer.h"
#include "core/nn/layer_spec.h"

namespace fitbench {

// Per-replica buffers of one forward/backward pass, sized for up to `capacity` rows; a call with
// fewer rows uses the top rows, so the steady state allocates nothing.
struct Workspace {
  Index capacity = 0;
  std::vector<Matrix> outputs;               // per layer: (capacity, units)
  std::vector<Matrix> caches;                // per layer: (capacity, cache units) or empty
  std::vector<Matrix> grads;                 // per layer: dL/d(output), (capacity, units)
  std::vector<std::vector<double>> scratch;  // per layer: Layer::scratch_size() doubles
};

// A variable of the built network: full Keras path, shape, initializer, regularizer, and layer.
struct NetworkVariable {
  std::string path;
  Shape shape;
  InitializerSpec initializer;
  RegularizerSpec regularizer;
  bool trainable = true;
  int layer = 0;
};

// The largest Conv2D filters, kernel side and stride fitbench takes (the window's fields too).
inline constexpr int64_t kMaxConvSize = 1 << 16;

// The layer `spec` describes (not an InputLayer). Throws InputError at `place` (the layer's place
// in the file, "model.config.layers[1]") for an unknown class or an impossible field.
std::unique_ptr<Layer> make_layer(const LayerSpec& spec, const std::string& place);

class Network {
 public:
  // Validates the spec and names unnamed layers as Keras does (dense, dense_1, ...). Throws
  // InputError with places like "model.config.layers[1].config.units".
  explicit Network(const ModelSpec& spec);

  const std::string& name() const { return name_; }
  const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }
  // The sample shape an InputLayer declares, if any, and its number of values.
  const std::optional<Shape>& declared_input_shape() const { return declared_shape_; }
  std::optional<int64_t> declared_input_units() const {
    return declared_shape_ ? std::optional<int64_t>(shape_size(*declared_shape_)) : std::nullopt;
  }

  // Fixes the input's sample shape and so every shape. `input_units` is a flat row of that many
  // values; `input_shape` a sample's shape (the data's, e.g. (28, 28) for an image). A declared
  // InputLayer shape wins when it holds as many values as the data's samples (the rows are
  // row-major, so 784 values fill (28, 28)). Throws InputError if the counts differ, at a layer
  // that cannot take its input's shape, or at a layer's units when the model passes
  // kMaxModelFloats.
  void build(int64_t input_units);
  void build(const Shape& input_shape);
  // build() without the size limit, for plans that allocate nothing (the capacity plan): a model
  // too large for this machine still has shapes to plan for a target.
  void build_shapes(int64_t input_units);
  bool built() const { return input_units_ > 0; }
  int64_t input_units() const { return input_units_; }
  int64_t output_units() const { return units_.empty() ? input_units_ : units_.back(); }
  int64_t layer_units(size_t layer) const { return units_[layer]; }
  // A sample's shape at the input and after each layer (no batch axis).
  const Shape& input_shape() const { return input_shape_; }
  const Shape& layer_shape(size_t layer) const { return shapes_[layer]; }
  const std::vector<NetworkVariable>& variables() const { return variables_; }
  // Index of layer l's first variable and how many it has.
  size_t first_variable(size_t layer) const { return first_var_[layer]; }
  // Floats a forward and backward pass keep per row of a batch (outputs, caches, gradients).
  int64_t workspace_floats_per_row() const;
  // The most floats a model's variables may hold together, and a batch's workspace (1 GiB each):
  // beyond, build() and fit() refuse with the place instead of running out of memory.
  static constexpr int64_t kMaxModelFloats = int64_t{1} << 28;
  size_t variable_count(size_t layer) const { return first_var_[layer + 1] - first_var_[layer]; }

  void reserve(Workspace& ws, Index rows) const;

  // Runs every layer on x (n rows, n <= ws.capacity). params: one per variable, in order.
  void forward(std::span<const Matrix* const> params, ConstMatrixRef x, Workspace& ws,
               const ForwardContext& ctx) const;
  // The output block of the last forward, and the buffer the loss writes dL/d(output) into.
  ConstMatrixRef output(const Workspace& ws, Index n) const;
  MatrixRef output_grad(Workspace& ws, Index n) const;
  // Backpropagates from output_grad into grads (one per variable; null entries are skipped).
  // `ctx`: the forward call's (its reducer, when the batch is shared by devices).
  void backward(std::span<const Matrix* const> params, ConstMatrixRef x, Workspace& ws, Index n,
                std::span<Matrix* const> grads, const ForwardContext& ctx = {}) const;
  // After a training forward: each layer with state (BatchNormalization's moving statistics)
  // updates its state variables in `params` from what the forward left in ws.
  void update_state(std::span<Matrix* const> params, const Workspace& ws) const;
  // Whether any layer keeps state that update_state changes.
  bool has_state() const;
  // The sizes of the BatchReducer sums a training forward (or backward) of the whole network
  // makes, in order (Layer::batch_sums).
  std::vector<int64_t> batch_sums(bool backward) const;

  // Whether any variable has a regularization penalty.
  bool has_regularization() const;
  // Sum of the variables' regularization penalties (Keras: l1 * sum|w| + l2 * sum w^2).
  double regularization_loss(std::span<const Matrix* const> params) const;
  // grads += d(regularization)/d(params) for trainable regularized variables.
  void add_regularization_gradient(std::span<const Matrix* const> params,
                                   std::span<Matrix* const> grads) const;

 private:
  std::string name_;
  std::optional<Shape> declared_shape_;
  std::vector<std::string>
      layer_places_;  // each layer's place in the file (ModelSpec::layer_place)
  // Throws InputError at the layer's units: `floats` units (units), or variables in all.
  [[noreturn]] void too_large(size_t layer, double floats, bool units) const;
  void build_checked(const Shape& input_shape, bool limit);
  std::vector<std::unique_ptr<Layer>> layers_;
  int64_t input_units_ = 0;
  Shape input_shape_;
  std::vector<int64_t> units_;
  std::vector<Shape> shapes_;
  std::vector<NetworkVariable> variables_;
  std::vector<size_t> first_var_;
};

}  // namespace fitbench
