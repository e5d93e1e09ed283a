#include "core/python/numpy_random.h"

#include <cmath>

namespace fitbench {

double NumpyLegacyRandom::random_sample() {
  // numpy/random/src/mt19937: (a >> 5) * 2^26 + (b >> 6), over 2^53.
  const uint32_t a = static_cast<uint32_t>(mt_()) >> 5;
  const uint32_t b = static_cast<uint32_t>(mt_()) >> 6;
  return (a * 67108864.0 + b) / 9007199254740992.0;
}

double NumpyLegacyRandom::standard_normal() {
  // numpy/random/src/legacy/legacy-distributions.c legacy_gauss: the polar method, keeping the
  // second value for the next call.
  if (has_gauss_) {
    has_gauss_ = false;
    return gauss_;
  }
  double x1, x2, r2;
  do {
    x1 = 2.0 * random_sample() - 1.0;
    x2 = 2.0 * random_sample() - 1.0;
    r2 = x1 * x1 + x2 * x2;
  } while (r2 >= 1.0 || r2 == 0.0);
  const double f = std::sqrt(-2.0 * std::log(r2) / r2);
  gauss_ = f * x1;
  has_gauss_ = true;
  return f * x2;
}

}  // namespace fitbench
