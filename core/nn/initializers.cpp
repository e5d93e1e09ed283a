#include "core/nn/initializers.h"

#include <cmath>

#include "core/base/error.h"
#include "core/nn/initializer_registry.h"
#include "core/python/keras_random.h"

namespace fitbench {
namespace {

// keras/src/initializers/random_initializers.py compute_fans: a 1-D shape has fan_in = fan_out;
// a kernel of more axes (a Conv2D's (kh, kw, in, out)) counts its receptive field kh * kw in
// both fans.
void compute_fans(const Shape& shape, double& fan_in, double& fan_out) {
  if (shape.size() == 1) {
    fan_in = fan_out = static_cast<double>(shape[0]);
    return;
  }
  double receptive = 1.0;
  for (size_t d = 0; d + 2 < shape.size(); ++d) receptive *= static_cast<double>(shape[d]);
  fan_in = static_cast<double>(shape[shape.size() - 2]) * receptive;
  fan_out = static_cast<double>(shape.back()) * receptive;
}

// VarianceScaling (keras/src/initializers/random_initializers.py): truncated normal stddev is
// sqrt(scale / fan) / 0.87962566103423978 (JAX's truncated_normal on [-2, 2], times stddev);
// uniform limit is sqrt(3 * scale / fan) (JAX's uniform on [-limit, limit) in float32).
enum class Mode { kFanIn, kFanAvg };
void variance_scaling(double scale, Mode mode, bool uniform, const Shape& shape, uint32_t seed,
                      Matrix& value) {
  double fan_in, fan_out;
  compute_fans(shape, fan_in, fan_out);
  const double fan = mode == Mode::kFanIn ? fan_in : (fan_in + fan_out) / 2.0;
  const double s = scale / std::max(1.0, fan);
  const std::span<float> out(value.data(), static_cast<size_t>(value.size()));
  if (uniform) {
    const float limit = static_cast<float>(std::sqrt(3.0 * s));
    jax_uniform(seed, -limit, limit, out);
  } else {
    const float stddev = static_cast<float>(std::sqrt(s) / 0.87962566103423978);
    jax_truncated_normal(seed, -2.0f, 2.0f, out);
    for (float& v : out) v *= stddev;
  }
}

}  // namespace

void validate_initializer(const InitializerSpec& spec, const std::string& place) {
  const InitializerInfo* info = find_initializer(spec.name);
  if (info == nullptr || info->name != spec.name)
    throw InputError(
        place, "unknown initializer \"" + spec.name + "\"; expected one of: " +
                   join_names(initializers(), [](const InitializerInfo& i) { return i.name; }));
  if (spec.name == "random_normal" && !(spec.stddev >= 0.0))
    throw InputError(place + ".stddev", "must be >= 0");
  if (spec.name == "random_uniform" && !(spec.minval <= spec.maxval))
    throw InputError(place + ".maxval", "must be >= minval");
}

bool is_random_initializer(const InitializerSpec& spec) {
  const InitializerInfo* info = find_initializer(spec.name);
  return info == nullptr || info->random;
}

void initialize(const InitializerSpec& spec, const Shape& shape, uint32_t seed, Matrix& value) {
  const std::string& n = spec.name;
  const std::span<float> out(value.data(), static_cast<size_t>(value.size()));
  if (n == "zeros") {
    value.setZero();
  } else if (n == "ones") {
    value.setOnes();
  } else if (n == "glorot_uniform") {
    variance_scaling(1.0, Mode::kFanAvg, true, shape, seed, value);
  } else if (n == "glorot_normal") {
    variance_scaling(1.0, Mode::kFanAvg, false, shape, seed, value);
  } else if (n == "he_uniform") {
    variance_scaling(2.0, Mode::kFanIn, true, shape, seed, value);
  } else if (n == "he_normal") {
    variance_scaling(2.0, Mode::kFanIn, false, shape, seed, value);
  } else if (n == "lecun_uniform") {
    variance_scaling(1.0, Mode::kFanIn, true, shape, seed, value);
  } else if (n == "lecun_normal") {
    variance_scaling(1.0, Mode::kFanIn, false, shape, seed, value);
  } else if (n == "random_normal") {
    // keras/src/backend/jax/random.py normal: sample * stddev + mean in float32.
    jax_normal(seed, out);
    const float stddev = static_cast<float>(spec.stddev), mean = static_cast<float>(spec.mean);
    for (float& v : out) v = v * stddev + mean;
  } else if (n == "random_uniform") {
    jax_uniform(seed, static_cast<float>(spec.minval), static_cast<float>(spec.maxval), out);
  } else {
    throw InputError("", "unknown initializer \"" + n + "\"");
  }
}

}  // namespace fitbench
