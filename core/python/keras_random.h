// The random streams Keras 3 on JAX uses, reproduced so that fitbench starts from the same weights
// and visits the batches in the same order as the Keras script an experiment mirrors:
//  - PythonRandom: CPython's `random` module (MT19937 seeded by init_by_array). Keras draws each
//    unseeded random initializer's seed from it with random.randint(1, 10**9)
//    (keras/src/random/seed_generator.py make_default_seed), in layer construction order.
//  - JAX's threefry2x32 counter-based generator and jax.random.uniform / normal /
//    truncated_normal over a raw key [seed, 0] (keras/src/random/seed_generator.py draw_seed),
//    with JAX's partitionable bit layout (jax_threefry_partitionable, the default since JAX 0.5).
//  - NumPy's Generator(PCG64(SeedSequence(seed))).permutation(n): Keras 3's array adapter shuffles
//    epoch e of a fit() with np.random.default_rng(e).permutation
//    (keras/src/trainers/data_adapters/array_data_adapter.py).
// Value types, not thread-safe (one per user).
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace fitbench {

// 128-bit arithmetic for PCG64 (a GCC/Clang extension).
__extension__ typedef unsigned __int128 Uint128;

// CPython's random.Random.
class PythonRandom {
 public:
  explicit PythonRandom(uint64_t seed = 0) { seed_with(seed); }
  // random.seed(n) for a non-negative integer n.
  void seed_with(uint64_t seed);
  // random.getrandbits(k) for 1 <= k <= 32.
  uint32_t getrandbits(int k);
  // random.randint(a, b) for 0 <= b - a < 2^32.
  int64_t randint(int64_t a, int64_t b);

 private:
  uint32_t next_u32();
  uint32_t mt_[624] = {};
  int index_ = 624;
};

// The Threefry-2x32 block function (20 rounds; Salmon et al., "Parallel random numbers: as easy as
// 1, 2, 3", SC 2011), as jax._src.prng.threefry2x32 computes it.
std::pair<uint32_t, uint32_t> threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1);

// jax.random.uniform(key, (n,), float32, minval, maxval) with key = [seed, 0], written to out.
void jax_uniform(uint32_t seed, float minval, float maxval, std::span<float> out);
// jax.random.normal(key, (n,), float32).
void jax_normal(uint32_t seed, std::span<float> out);
// jax.random.truncated_normal(key, lower, upper, (n,), float32).
void jax_truncated_normal(uint32_t seed, float lower, float upper, std::span<float> out);

// NumPy's PCG64 bit generator seeded through SeedSequence(seed).
class NumpyPcg64 {
 public:
  explicit NumpyPcg64(uint64_t seed);
  uint64_t next_u64();
  uint32_t next_u32();  // the low half of a 64-bit draw, then its high half

 private:
  Uint128 state_ = 0, inc_ = 0;
  bool has_u32_ = false;
  uint32_t u32_ = 0;
};

// np.random.default_rng(seed).permutation(n), into out (resized to n).
void numpy_permutation(uint64_t seed, int64_t n, std::vector<int64_t>& out);

}  // namespace fitbench
