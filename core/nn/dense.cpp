#include "core/nn/dense.h"

#include "core/base/error.h"

namespace fitbench {

Shape Dense::output_shape(const Shape& in, const std::string& place) const {
  if (in.size() != 1) {
    Shape keras(in.begin(), in.end() - 1);
    keras.push_back(spec().units);
    throw InputError(place, "this Dense layer receives " + batch_shape_text(in) +
                                ": fitbench's Dense takes one axis of features, so add a Flatten "
                                "layer before it (Keras would apply it to the last axis alone and "
                                "output " +
                                batch_shape_text(keras) + ")");
  }
  return {spec().units};
}

Dense::Dense(LayerSpec spec)
    : Layer(std::move(spec)), activation_(parse_activation(this->spec().activation, "")) {}

std::vector<VariableDef> Dense::variable_defs(int64_t input_units) const {
  std::vector<VariableDef> defs;
  defs.push_back({"kernel",
                  {input_units, spec().units},
                  spec().kernel_initializer,
                  spec().kernel_regularizer});
  if (spec().use_bias)
    defs.push_back({"bias", {spec().units}, spec().bias_initializer, spec().bias_regularizer});
  return defs;
}

int64_t Dense::cache_units(int64_t) const {
  // The pre-activation z, when backward needs it.
  return activation_needs_z(activation_) ? spec().units : 0;
}

void Dense::forward(std::span<const Matrix* const> params, ConstMatrixRef x, MatrixRef y,
                    MatrixRef cache, const ForwardContext&) const {
  const Matrix& kernel = *params[0];
  const bool keep_z = cache.cols() > 0;
  MatrixRef z = keep_z ? cache : y;
  z.noalias() = x * kernel;
  if (spec().use_bias) z.rowwise() += params[1]->row(0);
  activation_forward(activation_, z, y);
}

void Dense::backward(std::span<const Matrix* const> params, ConstMatrixRef x, ConstMatrixRef y,
                     MatrixRef cache, MatrixRef dy, bool want_dx, MatrixRef dx,
                     std::span<Matrix* const> grads, const ForwardContext&) const {
  activation_backward(activation_, cache.cols() > 0 ? ConstMatrixRef(cache) : y, y,
                      dy);  // dy is now dL/dz
  if (grads[0]) grads[0]->noalias() = x.transpose() * dy;
  if (spec().use_bias && grads[1]) grads[1]->row(0).noalias() = dy.colwise().sum();
  if (want_dx) dx.noalias() = dy * params[0]->transpose();
}

}  // namespace fitbench
