// NumPy's legacy global generator (np.random.seed(s); np.random.normal(...)): MT19937 seeded with
// init_genrand and the polar Box-Muller "legacy_gauss", reproduced bit for bit for the
// "seed_legacy" data set (scripts that draw from the global generator that
// keras.utils.set_random_seed(s) seeds; the "seed" set is default_rng,
// core/python/numpy_generator.h). Not thread-safe.
#pragma once

#include <cstdint>
#include <random>

namespace fitbench {

class NumpyLegacyRandom {
 public:
  explicit NumpyLegacyRandom(uint32_t seed) : mt_(seed) {}

  // np.random.random_sample(): 53-bit double in [0, 1).
  double random_sample();
  // np.random.standard_normal() (legacy_gauss).
  double standard_normal();

 private:
  std::mt19937 mt_;
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

}  // namespace fitbench
