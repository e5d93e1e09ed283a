#include "core/nn/activations.h"

#include <cmath>

#include "core/base/error.h"
#include "core/field_info.h"
#include "core/nn/activation_registry.h"

namespace fitbench {
namespace {

// Constants of keras/src/activations/activations.py.
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;
constexpr float kSeluScale = 1.0507009873554804934193349852946f;
constexpr float kLeakySlope = 0.2f;  // keras.activations.leaky_relu's negative_slope
constexpr float kEluAlpha = 1.0f;

constexpr ActivationInfo kActivations[] = {
    {"linear", Activation::kLinear, "No activation: the layer's output is its input."},
    {"relu", Activation::kRelu, "max(x, 0)."},
    {"sigmoid", Activation::kSigmoid, "1 / (1 + exp(-x)): a probability per unit."},
    {"tanh", Activation::kTanh, "Hyperbolic tangent, in (-1, 1)."},
    {"softmax", Activation::kSoftmax, "Probabilities over the units that add up to 1."},
    {"elu", Activation::kElu, "x for x > 0, exp(x) - 1 otherwise."},
    {"selu", Activation::kSelu, "Scaled elu (Klambauer et al., 2017)."},
    {"gelu", Activation::kGelu, "x times the normal distribution's CDF at x (exact form)."},
    {"leaky_relu", Activation::kLeakyRelu, "x for x > 0, 0.2 x otherwise."},
    {"softplus", Activation::kSoftplus, "log(1 + exp(x)), a smooth relu."},
    {"silu", Activation::kSilu, "x * sigmoid(x) (also called swish)."},
    {"swish", Activation::kSilu, "Another name of silu.", true},
};

inline float sigmoid(float x) {
  // Stable for large |x|.
  if (x >= 0) return 1.0f / (1.0f + std::exp(-x));
  const float e = std::exp(x);
  return e / (1.0f + e);
}

}  // namespace

std::span<const ActivationInfo> activations() { return kActivations; }

const ActivationInfo* find_activation(std::string_view name) {
  for (const ActivationInfo& a : kActivations)
    if (a.name == name) return &a;
  return nullptr;
}

Activation parse_activation(const std::string& name, const std::string& place) {
  if (name.empty() || name == "None") return Activation::kLinear;
  if (const ActivationInfo* a = find_activation(name)) return a->value;
  throw InputError(place,
                   "unknown activation \"" + name + "\"; expected one of: " + activation_names());
}

std::string activation_name(Activation a) {
  for (const ActivationInfo& n : kActivations)
    if (n.value == a) return std::string(n.name);
  return "linear";
}

const char* activation_names() {
  static const std::string names =
      join_names(kActivations, [](const ActivationInfo& a) { return a.name; });
  return names.c_str();
}

void activation_forward(Activation a, ConstMatrixRef z, MatrixRef out) {
  auto zi = z.array();
  auto o = out.array();
  switch (a) {
    case Activation::kLinear:
      if (out.data() != z.data()) out = z;
      break;
    case Activation::kRelu:
      o = zi.max(0.0f);
      break;
    case Activation::kSigmoid:
      o = zi.unaryExpr([](float x) { return sigmoid(x); });
      break;
    case Activation::kTanh:
      o = zi.tanh();
      break;
    case Activation::kSoftmax:
      for (Index r = 0; r < z.rows(); ++r) {
        const float m = z.row(r).maxCoeff();
        out.row(r) = (z.row(r).array() - m).exp().matrix();
        out.row(r) /= out.row(r).sum();
      }
      break;
    case Activation::kElu:
      o = zi.unaryExpr([](float x) { return x > 0 ? x : kEluAlpha * std::expm1(x); });
      break;
    case Activation::kSelu:
      o = zi.unaryExpr(
          [](float x) { return kSeluScale * (x > 0 ? x : kSeluAlpha * std::expm1(x)); });
      break;
    case Activation::kGelu:
      // Exact form (approximate=False, Keras's default): x * Phi(x).
      o = zi.unaryExpr(
          [](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); });
      break;
    case Activation::kLeakyRelu:
      o = zi.unaryExpr([](float x) { return x > 0 ? x : kLeakySlope * x; });
      break;
    case Activation::kSoftplus:
      o = zi.unaryExpr(
          [](float x) { return std::max(x, 0.0f) + std::log1p(std::exp(-std::abs(x))); });
      break;
    case Activation::kSilu:
      o = zi.unaryExpr([](float x) { return x * sigmoid(x); });
      break;
  }
}

bool activation_needs_z(Activation a) {
  switch (a) {
    case Activation::kLinear:
    case Activation::kSigmoid:
    case Activation::kTanh:
    case Activation::kSoftmax:
      return false;
    default:
      return true;
  }
}

void activation_backward(Activation a, ConstMatrixRef z, ConstMatrixRef out, MatrixRef grad) {
  auto g = grad.array();
  auto zi = z.array();
  auto o = out.array();
  switch (a) {
    case Activation::kLinear:
      break;
    case Activation::kRelu:
      g = (zi > 0.0f).select(g, 0.0f);
      break;
    case Activation::kSigmoid:
      g = g * o * (1.0f - o);
      break;
    case Activation::kTanh:
      g = g * (1.0f - o.square());
      break;
    case Activation::kSoftmax:
      // dz = s * (g - <g, s>) per row.
      for (Index r = 0; r < grad.rows(); ++r) {
        const float dot = grad.row(r).dot(out.row(r));
        grad.row(r) = (out.row(r).array() * (grad.row(r).array() - dot)).matrix();
      }
      break;
    case Activation::kElu:
      g = (zi > 0.0f).select(g, g * (o + kEluAlpha));
      break;
    case Activation::kSelu:
      g = (zi > 0.0f).select(g * kSeluScale, g * (o + kSeluScale * kSeluAlpha));
      break;
    case Activation::kGelu:
      g = g * zi.unaryExpr([](float x) {
        const float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678118654752f));
        const float pdf = 0.39894228040143268f * std::exp(-0.5f * x * x);
        return cdf + x * pdf;
      });
      break;
    case Activation::kLeakyRelu:
      g = (zi > 0.0f).select(g, g * kLeakySlope);
      break;
    case Activation::kSoftplus:
      g = g * zi.unaryExpr([](float x) { return sigmoid(x); });
      break;
    case Activation::kSilu:
      g = g * zi.unaryExpr([](float x) {
        const float s = sigmoid(x);
        return s * (1.0f + x * (1.0f - s));
      });
      break;
  }
}

}  // namespace fitbench
