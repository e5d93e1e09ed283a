#include "core/python/keras_random.h"

#include <bit>
#include <cmath>
#include <cstring>

namespace fitbench {

// ---- PythonRandom: MT19937 (Matsumoto & Nishimura 1998) with CPython's init_by_array seeding
// (Modules/_randommodule.c). ----

void PythonRandom::seed_with(uint64_t seed) {
  uint32_t key[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  const int key_length = key[1] != 0 ? 2 : 1;
  mt_[0] = 19650218u;
  for (int i = 1; i < 624; ++i)
    mt_[i] = 1812433253u * (mt_[i - 1] ^ (mt_[i - 1] >> 30)) + static_cast<uint32_t>(i);
  int i = 1, j = 0;
  for (int k = 624 > key_length ? 624 : key_length; k > 0; --k) {
    mt_[i] = (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1664525u)) + key[j] +
             static_cast<uint32_t>(j);
    ++i;
    ++j;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
    if (j >= key_length) j = 0;
  }
  for (int k = 623; k > 0; --k) {
    mt_[i] =
        (mt_[i] ^ ((mt_[i - 1] ^ (mt_[i - 1] >> 30)) * 1566083941u)) - static_cast<uint32_t>(i);
    ++i;
    if (i >= 624) {
      mt_[0] = mt_[623];
      i = 1;
    }
  }
  mt_[0] = 0x80000000u;
  index_ = 624;
}

uint32_t PythonRandom::next_u32() {
  if (index_ >= 624) {
    for (int k = 0; k < 624; ++k) {
      const uint32_t y = (mt_[k] & 0x80000000u) | (mt_[(k + 1) % 624] & 0x7fffffffu);
      mt_[k] = mt_[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }
  uint32_t y = mt_[index_++];
  y ^= y >> 11;
  y ^= (y << 7) & 0x9d2c5680u;
  y ^= (y << 15) & 0xefc60000u;
  y ^= y >> 18;
  return y;
}

uint32_t PythonRandom::getrandbits(int k) { return next_u32() >> (32 - k); }

int64_t PythonRandom::randint(int64_t a, int64_t b) {
  // random.randrange -> _randbelow_with_getrandbits: k = n.bit_length(), redraw while r >= n.
  const uint64_t n = static_cast<uint64_t>(b - a) + 1;
  const int k = std::bit_width(n);
  uint64_t r = getrandbits(k);
  while (r >= n) r = getrandbits(k);
  return a + static_cast<int64_t>(r);
}

// ---- JAX ----

std::pair<uint32_t, uint32_t> threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (int group = 0; group < 5; ++group) {
    for (int r : kRotations[group % 2]) {
      x0 += x1;
      x1 = std::rotl(x1, r);
      x1 ^= x0;
    }
    x0 += ks[(group + 1) % 3];
    x1 += ks[(group + 2) % 3] + static_cast<uint32_t>(group + 1);
  }
  return {x0, x1};
}

namespace {

// Element i's 32 random bits under the partitionable layout: the two outputs of threefry on the
// 64-bit counter (0, i), xor-ed (jax._src.prng._threefry_random_bits_partitionable).
uint32_t random_bits(uint32_t seed, uint32_t i) {
  const auto [a, b] = threefry2x32(seed, 0u, 0u, i);
  return a ^ b;
}

// jax.random._uniform for float32: 23 random mantissa bits under exponent 0 give [1, 2); minus 1,
// scaled to [minval, maxval) in float32, and never below minval.
float uniform_from_bits(uint32_t bits, float minval, float maxval) {
  const uint32_t float_bits = (bits >> 9) | 0x3F800000u;
  float f;
  std::memcpy(&f, &float_bits, sizeof f);
  f -= 1.0f;
  const float v = f * (maxval - minval) + minval;
  return v < minval ? minval : v;
}

// The inverse error function in float32 as XLA computes it (M. Giles, "Approximating the erfinv
// function", GPU Computing Gems, 2011; single-precision coefficients).
float erfinv32(float x) {
  float w = -std::log((1.0f - x) * (1.0f + x));
  float p;
  if (w < 5.0f) {
    w -= 2.5f;
    p = 2.81022636e-08f;
    p = 3.43273939e-07f + p * w;
    p = -3.5233877e-06f + p * w;
    p = -4.39150654e-06f + p * w;
    p = 0.00021858087f + p * w;
    p = -0.00125372503f + p * w;
    p = -0.00417768164f + p * w;
    p = 0.246640727f + p * w;
    p = 1.50140941f + p * w;
  } else {
    w = std::sqrt(w) - 3.0f;
    p = -0.000200214257f;
    p = 0.000100950558f + p * w;
    p = 0.00134934322f + p * w;
    p = -0.00367342844f + p * w;
    p = 0.00573950773f + p * w;
    p = -0.0076224613f + p * w;
    p = 0.00943887047f + p * w;
    p = 1.00167406f + p * w;
    p = 2.83297682f + p * w;
  }
  return std::abs(x) == 1.0f ? x * INFINITY : p * x;
}

constexpr float kSqrt2 = 1.41421356237309504880f;

}  // namespace

void jax_uniform(uint32_t seed, float minval, float maxval, std::span<float> out) {
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = uniform_from_bits(random_bits(seed, static_cast<uint32_t>(i)), minval, maxval);
}

void jax_normal(uint32_t seed, std::span<float> out) {
  // jax.random._normal_real: uniform on (nextafter(-1, 0), 1), then sqrt(2) * erfinv.
  const float lo = std::nextafter(-1.0f, 0.0f);
  for (size_t i = 0; i < out.size(); ++i)
    out[i] =
        kSqrt2 * erfinv32(uniform_from_bits(random_bits(seed, static_cast<uint32_t>(i)), lo, 1.0f));
}

void jax_truncated_normal(uint32_t seed, float lower, float upper, std::span<float> out) {
  // jax.random._truncated_normal: uniform between erf(lower / sqrt 2) and erf(upper / sqrt 2),
  // through sqrt(2) * erfinv, clipped just inside (lower, upper).
  const float a = std::erf(lower / kSqrt2);
  const float b = std::erf(upper / kSqrt2);
  const float lo = std::nextafter(lower, INFINITY);
  const float hi = std::nextafter(upper, -INFINITY);
  for (size_t i = 0; i < out.size(); ++i) {
    const float v =
        kSqrt2 * erfinv32(uniform_from_bits(random_bits(seed, static_cast<uint32_t>(i)), a, b));
    out[i] = v < lo ? lo : (v > hi ? hi : v);
  }
}

// ---- NumPy: SeedSequence (numpy/random/bit_generator.pyx), PCG64 (XSL-RR 128/64, O'Neill 2014),
// Generator.shuffle's random_interval (numpy/random/src/distributions/distributions.c). ----

namespace {

constexpr uint32_t kInitA = 0x43b0d7e5u, kMultA = 0x931e8875u;
constexpr uint32_t kInitB = 0x8b51f9ddu, kMultB = 0x58f38dedu;
constexpr uint32_t kMixMultL = 0xca01f9ddu, kMixMultR = 0x4973f715u;

uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
  value ^= hash_const;
  hash_const *= kMultA;
  value *= hash_const;
  return value ^ (value >> 16);
}

uint32_t mix(uint32_t x, uint32_t y) {
  const uint32_t result = kMixMultL * x - kMixMultR * y;
  return result ^ (result >> 16);
}

// SeedSequence(seed).generate_state(4, np.uint64) as 8 little-endian 32-bit words.
void seed_sequence_state(uint64_t seed, uint32_t out[8]) {
  uint32_t entropy[2] = {static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32)};
  const int entropy_size = entropy[1] != 0 ? 2 : 1;
  uint32_t pool[4];
  uint32_t hash_const = kInitA;
  for (int i = 0; i < 4; ++i) pool[i] = hashmix(i < entropy_size ? entropy[i] : 0u, hash_const);
  for (int src = 0; src < 4; ++src)
    for (int dst = 0; dst < 4; ++dst)
      if (src != dst) pool[dst] = mix(pool[dst], hashmix(pool[src], hash_const));
  uint32_t hash_b = kInitB;
  for (int i = 0; i < 8; ++i) {
    uint32_t v = pool[i % 4];
    v ^= hash_b;
    hash_b *= kMultB;
    v *= hash_b;
    out[i] = v ^ (v >> 16);
  }
}

const Uint128 kPcgMultiplier =
    (static_cast<Uint128>(0x2360ED051FC65DA4ull) << 64) | 0x4385DF649FCCF645ull;

}  // namespace

NumpyPcg64::NumpyPcg64(uint64_t seed) {
  uint32_t w[8];
  seed_sequence_state(seed, w);
  uint64_t v[4];
  for (int i = 0; i < 4; ++i)
    v[i] = static_cast<uint64_t>(w[2 * i]) | (uint64_t{w[2 * i + 1]} << 32);
  const Uint128 initstate = (static_cast<Uint128>(v[0]) << 64) | v[1];
  const Uint128 initseq = (static_cast<Uint128>(v[2]) << 64) | v[3];
  state_ = 0;
  inc_ = (initseq << 1) | 1u;
  state_ = state_ * kPcgMultiplier + inc_;
  state_ += initstate;
  state_ = state_ * kPcgMultiplier + inc_;
}

uint64_t NumpyPcg64::next_u64() {
  state_ = state_ * kPcgMultiplier + inc_;
  const uint64_t hi = static_cast<uint64_t>(state_ >> 64);
  const uint64_t lo = static_cast<uint64_t>(state_);
  return std::rotr(hi ^ lo, static_cast<int>(state_ >> 122));
}

uint32_t NumpyPcg64::next_u32() {
  if (has_u32_) {
    has_u32_ = false;
    return u32_;
  }
  const uint64_t next = next_u64();
  has_u32_ = true;
  u32_ = static_cast<uint32_t>(next >> 32);
  return static_cast<uint32_t>(next);
}

void numpy_permutation(uint64_t seed, int64_t n, std::vector<int64_t>& out) {
  out.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out[static_cast<size_t>(i)] = i;
  NumpyPcg64 bits(seed);
  for (int64_t i = n - 1; i >= 1; --i) {
    // random_interval(max = i): mask rejection on 32-bit draws (64-bit ones past 2^32 - 1).
    const uint64_t max = static_cast<uint64_t>(i);
    uint64_t mask = max;
    for (int s = 1; s < 64; s <<= 1) mask |= mask >> s;
    uint64_t j;
    if (max <= 0xffffffffull) {
      do j = bits.next_u32() & mask;
      while (j > max);
    } else {
      do j = bits.next_u64() & mask;
      while (j > max);
    }
    std::swap(out[static_cast<size_t>(i)], out[static_cast<size_t>(j)]);
  }
}

}  // namespace fitbench
