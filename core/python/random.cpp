#include "core/python/random.h"

#include <cmath>
#include <mutex>

#include "core/python/keras_random.h"

namespace fitbench {
namespace {

uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

constexpr uint64_t kUnseeded = 1337;  // used when set_random_seed was never called

std::mutex g_seed_mutex;
uint64_t g_seed_state = kUnseeded;
PythonRandom g_python_random(kUnseeded);

}  // namespace

struct RandomScope::State {
  uint64_t seed_state = kUnseeded;
  PythonRandom python_random{kUnseeded};
};

namespace {
thread_local RandomScope::State* t_scope = nullptr;
}  // namespace

RandomScope::RandomScope() : state_(new State) { t_scope = state_; }

RandomScope::~RandomScope() {
  t_scope = nullptr;
  delete state_;
}

Rng::Rng(uint64_t seed) {
  uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
}

uint64_t Rng::next_u64() {
  // xoshiro256** (Blackman & Vigna, 2018).
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Rng::uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Rng::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform01();
  while (u1 <= 0.0) u1 = uniform01();
  const double u2 = uniform01();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

double Rng::truncated_normal(double stddev) {
  for (;;) {
    const double z = normal();
    if (std::abs(z) <= 2.0) return z * stddev;
  }
}

uint64_t Rng::below(uint64_t n) {
  // Lemire's nearly divisionless method would do; modulo bias is negligible for the sizes used
  // here (n < 2^32), but reject the biased tail anyway so shuffles are exactly uniform.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

void set_random_seed(uint64_t seed) {
  if (t_scope) {
    t_scope->seed_state = seed;
    t_scope->python_random.seed_with(seed);
    return;
  }
  std::lock_guard<std::mutex> lock(g_seed_mutex);
  g_seed_state = seed;
  g_python_random.seed_with(seed);
}

uint32_t make_default_seed() {
  if (t_scope) return static_cast<uint32_t>(t_scope->python_random.randint(1, 1000000000));
  std::lock_guard<std::mutex> lock(g_seed_mutex);
  return static_cast<uint32_t>(g_python_random.randint(1, 1000000000));
}

uint64_t next_seed() {
  if (t_scope) return splitmix64(t_scope->seed_state);
  std::lock_guard<std::mutex> lock(g_seed_mutex);
  return splitmix64(g_seed_state);
}

uint64_t hash_words(std::initializer_list<uint64_t> words) {
  uint64_t h = 0x243F6A8885A308D3ull;
  for (uint64_t w : words) {
    uint64_t x = h ^ w;
    h = splitmix64(x);
  }
  return h;
}

}  // namespace fitbench
