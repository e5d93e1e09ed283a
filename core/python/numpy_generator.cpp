#include "core/python/numpy_generator.h"

#include <cmath>

namespace fitbench {
namespace {

// numpy/random/src/distributions/ziggurat_constants.h: the tail's start r and 1 / r.
constexpr double kR = 3.6541528853610087963519472518;
constexpr double kInvR = 0.27366123732975827203338247596;
// The area of each layer, v = r f(r) + integral of f from r to infinity, as NumPy's tables were
// made with it (17 digits). Marsaglia and Tsang print 0.00492867323399; that value, or v computed
// from r (0x1.43016a5a43732p-8, 4 ulp away), gives different tables.
constexpr double kArea = 0.0049286732339746519;
constexpr double kTwoPow52 = 4503599627370496.0;
// The one layer whose f(x) NumPy's tables hold one ulp above the correctly rounded value. The
// tables came from a float64 NumPy script; for this layer's exp(-x^2 / 2) the exact value lies
// 0.498 ulp above a double, and the libm that ran the script rounded it up, not down. The
// recurrence carries that ulp into every smaller layer (x[1..37], so ki[2..38], wi[1..37] and
// fi[1..37]), so it is reproduced here: without it 37 wi, 17 ki and 38 fi entries differ (checked
// in tst_numpy_generator).
constexpr int kRoundedUpLayer = 38;

// exp and log evaluated in long double and rounded once: the correctly rounded double (no value
// used here lies within 2^-11 ulp of a tie), whatever the platform's double libm does.
double exp_rounded(double a) { return static_cast<double>(std::exp(static_cast<long double>(a))); }
double log_rounded(double a) { return static_cast<double>(std::log(static_cast<long double>(a))); }

// Marsaglia and Tsang's construction with 256 layers, from the top (x[255] = r) down: each layer
// has area v, so x[i] = sqrt(-2 log(f(x[i+1]) + v / x[i+1])). Every step is rounded to double as
// NumPy's float64 script rounded it: the recurrence amplifies rounding towards x = 0 (an exact
// computation differs from NumPy's tables by up to ~640 ulps in x[1]), so it is not computed more
// precisely than NumPy did.
ZigguratTables build_tables() {
  double x[256], f[256];
  x[255] = kR;
  f[255] = exp_rounded(-0.5 * kR * kR);
  for (int i = 254; i >= 1; --i) {
    x[i] = std::sqrt(-2.0 * log_rounded(f[i + 1] + kArea / x[i + 1]));
    f[i] = exp_rounded(-0.5 * x[i] * x[i]);
    if (i == kRoundedUpLayer) f[i] = std::nextafter(f[i], 2.0);
  }
  x[0] = 0.0;
  f[0] = 1.0;

  ZigguratTables t;
  // The base strip (layer 0: the rectangle below x[255] plus the tail) has width v / f(r).
  t.ki[0] = static_cast<uint64_t>(std::nearbyint(kR * f[255] / kArea * kTwoPow52));
  t.wi[0] = kArea / f[255] / kTwoPow52;
  t.fi[0] = f[0];
  for (int i = 1; i < 256; ++i) {
    t.ki[i] = static_cast<uint64_t>(std::nearbyint(x[i - 1] / x[i] * kTwoPow52));
    t.wi[i] = x[i] / kTwoPow52;
    t.fi[i] = f[i];
  }
  return t;
}

}  // namespace

const ZigguratTables& ziggurat_normal_tables() {
  static const ZigguratTables tables = build_tables();
  return tables;
}

double NumpyGenerator::random() {
  return static_cast<double>(bits_.next_u64() >> 11) * (1.0 / 9007199254740992.0);
}

double NumpyGenerator::standard_normal() {
  // random_standard_normal: 8 bits pick the layer, 1 the sign, 52 the magnitude. This file is
  // built with -ffp-contract=off: NumPy rounds the wedge test's product and sum separately.
  const ZigguratTables& t = ziggurat_normal_tables();
  for (;;) {
    uint64_t r = bits_.next_u64();
    const int idx = static_cast<int>(r & 0xff);
    r >>= 8;
    const bool negative = (r & 0x1) != 0;
    const uint64_t rabs = (r >> 1) & 0x000fffffffffffffull;
    double x = static_cast<double>(rabs) * t.wi[idx];
    if (negative) x = -x;
    if (rabs < t.ki[idx]) return x;  // inside a layer's rectangle: 99.3% of draws
    if (idx == 0) {
      // The tail beyond r (Marsaglia 1964), with 1 - U so that log never sees 0.
      for (;;) {
        const double xx = -kInvR * std::log1p(-random());
        const double yy = -std::log1p(-random());
        if (yy + yy > xx * xx) return ((rabs >> 8) & 0x1) ? -(kR + xx) : kR + xx;
      }
    }
    // The wedge between the layer's rectangle and the curve.
    if ((t.fi[idx - 1] - t.fi[idx]) * random() + t.fi[idx] < std::exp(-0.5 * x * x)) return x;
  }
}

}  // namespace fitbench
