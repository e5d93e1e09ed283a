// NumPy's Generator on PCG64 (np.random.default_rng(seed)): random() and the ziggurat
// standard_normal() / normal(), reproduced bit for bit against NumPy 1.24 so the "seed" data set
// is the Keras script's `np.random.default_rng(7).normal(size=(128, 4))`. A value type, not
// thread-safe (one per user); the ziggurat tables it shares are built once, thread-safely.
#pragma once

#include <cstdint>

#include "core/python/keras_random.h"

namespace fitbench {

class NumpyGenerator {
 public:
  // np.random.default_rng(seed): PCG64 seeded through SeedSequence(seed).
  explicit NumpyGenerator(uint64_t seed) : bits_(seed) {}

  // Generator.random(): 53 random bits of a 64-bit draw, in [0, 1).
  double random();
  // Generator.standard_normal() (random_standard_normal in numpy/random/src/distributions).
  double standard_normal();
  // Generator.normal(loc, scale), as NumPy computes it: loc + scale * standard_normal().
  double normal(double loc, double scale) { return loc + scale * standard_normal(); }

 private:
  NumpyPcg64 bits_;
};

// NumPy's ziggurat tables for the standard normal (Marsaglia & Tsang, "The Ziggurat Method for
// Generating Random Variables", J. Stat. Softw. 5(8), 2000; 256 layers, 52-bit integers), built
// on first use. Exposed for tests.
struct ZigguratTables {
  uint64_t ki[256];  // acceptance bounds: x[i - 1] / x[i] scaled by 2^52 (ki[0]: the base strip)
  double wi[256];    // x[i] / 2^52 (wi[0]: the base strip's width v / f(r) over 2^52)
  double fi[256];    // f(x[i]) = exp(-x[i]^2 / 2)
};
const ZigguratTables& ziggurat_normal_tables();

}  // namespace fitbench
