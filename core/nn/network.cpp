#include "core/nn/network.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/nn/activation_layer.h"
#include "core/nn/conv.h"
#include "core/nn/dense.h"
#include "core/nn/dropout.h"
#include "core/nn/initializers.h"
#include "core/nn/layer_registry.h"
#include "core/nn/normalization.h"
#include "core/nn/pooling.h"
#include "core/nn/rescaling.h"
#include "core/nn/reshaping.h"
#include "core/nn/window_pooling.h"

namespace fitbench {
namespace {

// The class's automatic name prefix from the layer registry.
std::string snake_name(const std::string& class_name) {
  const LayerInfo* info = find_layer_class(class_name);
  return std::string(info != nullptr ? info->auto_name : "input_layer");
}

}  // namespace

std::unique_ptr<Layer> make_layer(const LayerSpec& l, const std::string& place) {
  if (l.class_name == "Dense") {
    if (l.units < 1)
      throw InputError(place + ".config.units",
                       "must be a positive integer, got " + std::to_string(l.units));
    parse_activation(l.activation, place + ".config.activation");
    validate_initializer(l.kernel_initializer, place + ".config.kernel_initializer");
    validate_initializer(l.bias_initializer, place + ".config.bias_initializer");
    return std::make_unique<Dense>(l);
  }
  const bool pooling = l.class_name == "MaxPooling2D" || l.class_name == "AveragePooling2D";
  if (l.class_name == "Conv2D" || pooling) {
    if (!pooling && (l.filters < 1 || l.filters > kMaxConvSize))
      throw InputError(place + ".config.filters", "must be an integer in [1, " +
                                                      std::to_string(kMaxConvSize) + "], got " +
                                                      std::to_string(l.filters));
    for (const auto& [key, pair] :
         {std::pair{pooling ? "pool_size" : "kernel_size", pooling ? &l.pool_size : &l.kernel_size},
          std::pair{"strides", &l.strides}})
      if (pair->size() != 2 || std::any_of(pair->begin(), pair->end(),
                                           [](int64_t d) { return d < 1 || d > kMaxConvSize; }))
        throw InputError(place + ".config." + key, "must be two integers (height, width) in [1, " +
                                                       std::to_string(kMaxConvSize) + "]");
    if (l.padding != "valid" && l.padding != "same")
      throw InputError(place + ".config.padding",
                       "must be \"valid\" or \"same\", got \"" + l.padding + "\"");
    if (pooling)
      return std::make_unique<WindowPooling2D>(l, l.class_name == "MaxPooling2D"
                                                      ? WindowPooling2D::Kind::kMax
                                                      : WindowPooling2D::Kind::kAverage);
    parse_activation(l.activation, place + ".config.activation");
    validate_initializer(l.kernel_initializer, place + ".config.kernel_initializer");
    validate_initializer(l.bias_initializer, place + ".config.bias_initializer");
    return std::make_unique<Conv2D>(l);
  }
  if (l.class_name == "Dropout") {
    if (!(l.rate >= 0.0 && l.rate < 1.0))
      throw InputError(place + ".config.rate", "must be in [0, 1)");
    return std::make_unique<Dropout>(l);
  }
  if (l.class_name == "Activation") {
    parse_activation(l.activation, place + ".config.activation");
    return std::make_unique<ActivationLayer>(l);
  }
  if (l.class_name == "Flatten") return std::make_unique<Flatten>(l);
  if (l.class_name == "GlobalAveragePooling2D") return std::make_unique<GlobalAveragePooling2D>(l);
  if (l.class_name == "Rescaling") {
    for (const auto& [key, value] : {std::pair{"scale", l.scale}, {"offset", l.offset}})
      if (!std::isfinite(value) || std::abs(value) > std::numeric_limits<float>::max())
        // The file reader's sentence (a value from the window or from code reaches here).
        throw InputError(place + ".config." + key,
                         "must be a number a float32 holds, got " + format_number(value));
    return std::make_unique<Rescaling>(l);
  }
  if (l.class_name == "LayerNormalization" || l.class_name == "BatchNormalization") {
    if (!(l.epsilon > 0.0 && l.epsilon <= 1.0))
      throw InputError(place + ".config.epsilon",
                       "must be a number in (0, 1], got " + format_number(l.epsilon));
    validate_initializer(l.gamma_initializer, place + ".config.gamma_initializer");
    validate_initializer(l.beta_initializer, place + ".config.beta_initializer");
    if (l.class_name == "LayerNormalization") return std::make_unique<LayerNormalization>(l);
    if (!(l.momentum >= 0.0 && l.momentum <= 1.0))
      throw InputError(place + ".config.momentum",
                       "must be a number in [0, 1], got " + format_number(l.momentum));
    validate_initializer(l.moving_mean_initializer, place + ".config.moving_mean_initializer");
    validate_initializer(l.moving_variance_initializer,
                         place + ".config.moving_variance_initializer");
    return std::make_unique<BatchNormalization>(l);
  }
  if (l.class_name == "Reshape") {
    check_target_shape(l.target_shape, place);
    return std::make_unique<Reshape>(l);
  }
  throw InputError(place + ".class_name",
                   "layer \"" + l.class_name +
                       "\" is not supported; fitbench has InputLayer, Dense, Conv2D, MaxPooling2D, "
                       "AveragePooling2D, Activation, Dropout, Flatten, Reshape, Rescaling, "
                       "GlobalAveragePooling2D, LayerNormalization and BatchNormalization");
}

Network::Network(const ModelSpec& spec) : name_(spec.name.empty() ? "sequential" : spec.name) {
  std::set<std::string> used;
  for (const auto& l : spec.layers)
    if (!l.name.empty()) used.insert(l.name);
  std::map<std::string, int> counters;
  for (size_t i = 0; i < spec.layers.size(); ++i) {
    LayerSpec l = spec.layers[i];
    const std::string place = spec.layer_place(i);
    if (l.class_name == "InputLayer") {
      if (i != 0) throw InputError(place, "an InputLayer may only be the first layer");
      if (l.shape.empty() || l.shape.size() > 8 ||
          std::any_of(l.shape.begin(), l.shape.end(), [](int64_t d) { return d < 1; }))
        throw InputError(place + ".config.batch_shape",
                         "must describe one to eight positive dimensions after the batch's, e.g. "
                         "[null, 4] or [null, 28, 28]");
      double values = 1.0;
      for (int64_t d : l.shape) values *= static_cast<double>(d);
      if (values > static_cast<double>(kMaxModelFloats))
        throw InputError(place + ".config.batch_shape", "describes samples of more than " +
                                                            std::to_string(kMaxModelFloats) +
                                                            " values, over fitbench's limit");
      declared_shape_ = l.shape;
      continue;
    }
    if (l.name.empty()) {
      // Keras's automatic names: the first is "dense", then "dense_1", "dense_2", ...
      const std::string base = snake_name(l.class_name);
      for (;;) {
        int& n = counters[base];
        std::string candidate = n == 0 ? base : base + "_" + std::to_string(n);
        ++n;
        if (!used.count(candidate)) {
          l.name = candidate;
          used.insert(candidate);
          break;
        }
      }
    }
    layers_.push_back(make_layer(l, place));
    layer_places_.push_back(place);
  }
}

void Network::too_large(size_t layer, double floats, bool units) const {
  const std::string place = layer_places_[layer] + ".config.units";
  char amount[32];
  // The count as written (400060001), unless it is too long to read.
  std::snprintf(amount, sizeof amount, floats < 1e15 ? "%.0f" : "%.3g", floats);
  const std::string limit =
      "fitbench's limit of " + std::to_string(kMaxModelFloats) + " floats (1 GiB) per model";
  throw InputError(place, units
                              ? std::string("is too large: ") + amount + " units are over " + limit
                              : std::string("is too large: with this layer the model's variables "
                                            "hold ") +
                                    amount + " floats, over " + limit);
}

int64_t Network::workspace_floats_per_row() const {
  int64_t floats = 0, in = input_units_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    floats += 2 * units_[l] + layers_[l]->cache_units(in);
    in = units_[l];
  }
  return floats;
}

void Network::build(int64_t input_units) { build_checked({input_units}, true); }

void Network::build(const Shape& input_shape) { build_checked(input_shape, true); }

void Network::build_shapes(int64_t input_units) { build_checked({input_units}, false); }

void Network::build_checked(const Shape& given, bool limit) {
  if (given.empty() || std::any_of(given.begin(), given.end(), [](int64_t d) { return d < 1; }))
    throw InputError("model", "the input needs at least one feature");
  const int64_t input_units = shape_size(given);
  if (declared_shape_ && shape_size(*declared_shape_) != input_units) {
    const int64_t declared = shape_size(*declared_shape_);
    throw InputError(
        "model",
        declared_shape_->size() == 1 && given.size() == 1
            ? "the model's input has " + counted(declared, "feature") + " but the data has " +
                  std::to_string(input_units)
            : "the model's input has shape " + batch_shape_text(*declared_shape_) + ", " +
                  counted(declared, "value") +
                  " per sample, but the data's "
                  "samples have " +
                  std::to_string(input_units) +
                  (given.size() == 1 ? std::string() : " (shape " + batch_shape_text(given) + ")"));
  }
  input_units_ = input_units;
  input_shape_ = declared_shape_ ? *declared_shape_ : given;
  units_.clear();
  shapes_.clear();
  variables_.clear();
  first_var_.assign(1, 0);
  int64_t in = input_units;
  Shape shape = input_shape_;
  double floats = 0.0;  // in double: 10^12 units times 10^12 inputs must not wrap around
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = *layers_[l];
    // The output's width is its shape's size: a pooling layer's depends on the input's shape,
    // not only on its width.
    const Shape layer_input = shape;
    shape = layer.output_shape(shape, layer_places_[l]);
    layers_[l]->build(layer_input);
    const int64_t out = shape_size(shape);
    if (limit && out > kMaxModelFloats) too_large(l, static_cast<double>(out), true);
    for (const auto& def : layer.variable_defs(in)) {
      double n = 1.0;
      for (int64_t d : def.shape) n *= static_cast<double>(d);
      floats += n;
      if (limit && floats > static_cast<double>(kMaxModelFloats)) too_large(l, floats, false);
    }
    for (auto& def : layer.variable_defs(in)) {
      variables_.push_back({name_ + "/" + layer.name() + "/" + def.name, def.shape, def.initializer,
                            def.regularizer, layer.spec().trainable && def.trainable,
                            static_cast<int>(l)});
    }
    first_var_.push_back(variables_.size());
    in = out;
    units_.push_back(in);
    shapes_.push_back(shape);
  }
}

void Network::reserve(Workspace& ws, Index rows) const {
  if (ws.capacity >= rows && ws.outputs.size() == layers_.size()) return;
  ws.capacity = rows;
  ws.outputs.resize(layers_.size());
  ws.caches.resize(layers_.size());
  ws.grads.resize(layers_.size());
  ws.scratch.resize(layers_.size());
  int64_t in = input_units_;
  for (size_t l = 0; l < layers_.size(); ++l) {
    ws.scratch[l].assign(static_cast<size_t>(layers_[l]->scratch_size()), 0.0);
    ws.outputs[l].resize(rows, units_[l]);
    ws.grads[l].resize(rows, units_[l]);
    ws.caches[l].resize(rows, layers_[l]->cache_units(in));
    in = units_[l];
  }
}

void Network::forward(std::span<const Matrix* const> params, ConstMatrixRef x, Workspace& ws,
                      const ForwardContext& ctx) const {
  const Index n = x.rows();
  for (size_t l = 0; l < layers_.size(); ++l) {
    const Layer& layer = *layers_[l];
    auto p = params.subspan(first_var_[l], variable_count(l));
    auto y = ws.outputs[l].topRows(n);
    auto cache = ws.caches[l].topRows(n);
    ForwardContext layer_ctx = ctx;
    layer_ctx.scratch = ws.scratch[l];
    if (l == 0)
      layer.forward(p, x, y, cache, layer_ctx);
    else
      layer.forward(p, ws.outputs[l - 1].topRows(n), y, cache, layer_ctx);
  }
}

void Network::update_state(std::span<Matrix* const> params, const Workspace& ws) const {
  for (size_t l = 0; l < layers_.size(); ++l)
    if (!ws.scratch[l].empty())
      layers_[l]->update_state(params.subspan(first_var_[l], variable_count(l)), ws.scratch[l]);
}

bool Network::has_state() const {
  return std::any_of(layers_.begin(), layers_.end(),
                     [](const auto& layer) { return layer->scratch_size() > 0; });
}

std::vector<int64_t> Network::batch_sums(bool backward) const {
  std::vector<int64_t> sizes;
  if (!backward)
    for (const auto& layer : layers_) layer->batch_sums(false, false, sizes);
  else
    for (size_t l = layers_.size(); l-- > 0;) layers_[l]->batch_sums(true, l > 0, sizes);
  return sizes;
}

ConstMatrixRef Network::output(const Workspace& ws, Index n) const {
  return static_cast<const Matrix&>(ws.outputs.back()).topRows(n);
}

MatrixRef Network::output_grad(Workspace& ws, Index n) const { return ws.grads.back().topRows(n); }

void Network::backward(std::span<const Matrix* const> params, ConstMatrixRef x, Workspace& ws,
                       Index n, std::span<Matrix* const> grads, const ForwardContext& ctx) const {
  for (size_t l = layers_.size(); l-- > 0;) {
    const Layer& layer = *layers_[l];
    auto p = params.subspan(first_var_[l], variable_count(l));
    auto g = grads.subspan(first_var_[l], variable_count(l));
    const bool want_dx = l > 0;
    auto dx = want_dx ? ws.grads[l - 1].topRows(n) : ws.grads[l].topRows(0);
    ForwardContext layer_ctx = ctx;
    layer_ctx.scratch = ws.scratch[l];
    if (l == 0)
      layer.backward(p, x, ws.outputs[l].topRows(n), ws.caches[l].topRows(n),
                     ws.grads[l].topRows(n), false, dx, g, layer_ctx);
    else
      layer.backward(p, ws.outputs[l - 1].topRows(n), ws.outputs[l].topRows(n),
                     ws.caches[l].topRows(n), ws.grads[l].topRows(n), want_dx, dx, g, layer_ctx);
  }
}

bool Network::has_regularization() const {
  return std::any_of(variables_.begin(), variables_.end(),
                     [](const auto& v) { return v.regularizer.active(); });
}

double Network::regularization_loss(std::span<const Matrix* const> params) const {
  double total = 0.0;
  for (size_t i = 0; i < variables_.size(); ++i) {
    const auto& r = variables_[i].regularizer;
    if (!r.active()) continue;
    if (r.l1 != 0.0) total += r.l1 * static_cast<double>(params[i]->cwiseAbs().sum());
    if (r.l2 != 0.0) total += r.l2 * static_cast<double>(params[i]->squaredNorm());
  }
  return total;
}

void Network::add_regularization_gradient(std::span<const Matrix* const> params,
                                          std::span<Matrix* const> grads) const {
  for (size_t i = 0; i < variables_.size(); ++i) {
    const auto& r = variables_[i].regularizer;
    if (!r.active() || !grads[i]) continue;
    const float l1 = static_cast<float>(r.l1), l2x2 = static_cast<float>(2.0 * r.l2);
    grads[i]->array() += l1 * params[i]->array().sign() + l2x2 * params[i]->array();
  }
}

}  // namespace fitbench
