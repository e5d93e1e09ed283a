#include "core/nn/initializers.h"

#include <cmath>

#include "core/error.h"

namespace fitbench {
namespace {

// keras/src/initializers/random_initializers.py compute_fans: a 1-D shape has fan_in = fan_out.
void compute_fans(const Shape& shape, double& fan_in, double& fan_out) {
  if (shape.size() == 1) {
    fan_in = fan_out = static_cast<double>(shape[0]);
  } else {
    fan_in = static_cast<double>(shape[0]);
    fan_out = static_cast<double>(shape[1]);
  }
}

// VarianceScaling (keras/src/initializers/random_initializers.py): truncated normal stddev is
// sqrt(scale / fan) / 0.87962566103423978; uniform limit is sqrt(3 * scale / fan).
enum class Mode { kFanIn, kFanAvg };
void variance_scaling(double scale, Mode mode, bool uniform, const Shape& shape, Rng& rng,
                      Matrix& value) {
  double fan_in, fan_out;
  compute_fans(shape, fan_in, fan_out);
  const double fan = mode == Mode::kFanIn ? fan_in : (fan_in + fan_out) / 2.0;
  const double s = scale / std::max(1.0, fan);
  if (uniform) {
    const double limit = std::sqrt(3.0 * s);
    for (Index i = 0; i < value.size(); ++i)
      value.data()[i] = static_cast<float>(rng.uniform(-limit, limit));
  } else {
    const double stddev = std::sqrt(s) / 0.87962566103423978;
    for (Index i = 0; i < value.size(); ++i)
      value.data()[i] = static_cast<float>(rng.truncated_normal(stddev));
  }
}

bool known(const std::string& n) {
  static const char* names[] = {
      "glorot_uniform", "glorot_normal", "he_uniform",     "he_normal", "lecun_uniform",
      "lecun_normal",   "random_normal", "random_uniform", "zeros",     "ones"};
  for (const char* k : names)
    if (n == k) return true;
  return false;
}

}  // namespace

void validate_initializer(const InitializerSpec& spec, const std::string& place) {
  if (!known(spec.name))
    throw InputError(place, "unknown initializer \"" + spec.name +
                                "\"; expected one of: glorot_uniform, glorot_normal, he_uniform, "
                                "he_normal, lecun_uniform, lecun_normal, random_normal, "
                                "random_uniform, zeros, ones");
  if (spec.name == "random_normal" && !(spec.stddev >= 0.0))
    throw InputError(place + ".stddev", "must be >= 0");
  if (spec.name == "random_uniform" && !(spec.minval <= spec.maxval))
    throw InputError(place + ".maxval", "must be >= minval");
}

void initialize(const InitializerSpec& spec, const Shape& shape, Rng& rng, Matrix& value) {
  const std::string& n = spec.name;
  if (n == "zeros") {
    value.setZero();
  } else if (n == "ones") {
    value.setOnes();
  } else if (n == "glorot_uniform") {
    variance_scaling(1.0, Mode::kFanAvg, true, shape, rng, value);
  } else if (n == "glorot_normal") {
    variance_scaling(1.0, Mode::kFanAvg, false, shape, rng, value);
  } else if (n == "he_uniform") {
    variance_scaling(2.0, Mode::kFanIn, true, shape, rng, value);
  } else if (n == "he_normal") {
    variance_scaling(2.0, Mode::kFanIn, false, shape, rng, value);
  } else if (n == "lecun_uniform") {
    variance_scaling(1.0, Mode::kFanIn, true, shape, rng, value);
  } else if (n == "lecun_normal") {
    variance_scaling(1.0, Mode::kFanIn, false, shape, rng, value);
  } else if (n == "random_normal") {
    for (Index i = 0; i < value.size(); ++i)
      value.data()[i] = static_cast<float>(spec.mean + spec.stddev * rng.normal());
  } else if (n == "random_uniform") {
    for (Index i = 0; i < value.size(); ++i)
      value.data()[i] = static_cast<float>(rng.uniform(spec.minval, spec.maxval));
  } else {
    throw InputError("", "unknown initializer \"" + n + "\"");
  }
}

}  // namespace fitbench
