// Deterministic random numbers. `Rng` is a small splitmix64/xoshiro256** generator whose output is
// the same on every platform (no std:: distributions, whose results vary by library).
// `set_random_seed` seeds the process-wide seed sequence that initializers, shuffling and dropout
// draw their own seeds from, as keras.utils.set_random_seed does. Rng is not thread-safe (one per
// user); the global seed sequence is guarded by a mutex.
#pragma once

#include <cstdint>
#include <initializer_list>

namespace fitbench {

class Rng {
 public:
  explicit Rng(uint64_t seed = 0);

  uint64_t next_u64();
  // Uniform in [0, 1) with 53 random bits.
  double uniform01();
  double uniform(double low, double high) { return low + (high - low) * uniform01(); }
  // Standard normal (Box-Muller, both values used).
  double normal();
  // Normal with the given stddev, redrawn while outside two standard deviations (Keras's
  // truncated_normal).
  double truncated_normal(double stddev);
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n);

 private:
  uint64_t s_[4];
  double spare_ = 0.0;
  bool has_spare_ = false;
};

// Seeds the global seed sequence and the global Python-style generator Keras draws initializer
// seeds from (keras.utils.set_random_seed seeds Python's `random`, NumPy and the backend).
void set_random_seed(uint64_t seed);
// Keras's make_default_seed(): random.randint(1, 10**9) from the global Python-style generator
// (core/python/keras_random.h); thread-safe. Keras draws one per unseeded random initializer.
uint32_t make_default_seed();
// The next seed of the global sequence; thread-safe.
uint64_t next_seed();

// Gives the calling thread a seed sequence of its own while it lives: set_random_seed,
// make_default_seed and next_seed on this thread use it instead of the process-wide one, so runs
// on several threads at once (a sweep's trials) each see the sequence they would see alone. It
// starts as the process-wide sequence starts before any set_random_seed. Scopes do not nest.
class RandomScope {
 public:
  RandomScope();
  ~RandomScope();
  RandomScope(const RandomScope&) = delete;
  RandomScope& operator=(const RandomScope&) = delete;

  struct State;

 private:
  State* state_;
};
// A well-mixed 64-bit hash of the given words: counter-based randomness (dropout masks that do not
// depend on how a batch is split across devices).
uint64_t hash_words(std::initializer_list<uint64_t> words);
// hash_words mapped to [0, 1).
inline double hash_uniform01(std::initializer_list<uint64_t> words) {
  return static_cast<double>(hash_words(words) >> 11) * 0x1.0p-53;
}

}  // namespace fitbench
