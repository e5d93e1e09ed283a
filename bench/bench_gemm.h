// Timing helpers the speed benchmarks share: a median time per iteration of a body grown until
// it takes long enough to measure, random matrices, and this machine's Eigen SGEMM rate on one
// thread (the yardstick of the engine's matrix products). Header-only; no state.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <vector>

#include "bench/bench_util.h"
#include "core/base/tensor.h"
#include "core/python/random.h"
#include "core/training/callback.h"

namespace fitbench::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Runs body(iterations) with iterations grown until one call takes >= min_seconds, then returns
// the median over `repeats` calls of the time per iteration.
inline double time_per_iteration(const std::function<void(long)>& body, int repeats,
                                 double min_seconds) {
  long iterations = 1;
  for (;;) {
    const auto t0 = Clock::now();
    body(iterations);
    const double t = seconds_since(t0);
    if (t >= min_seconds) break;
    iterations =
        t > 0.0 ? std::max(iterations * 2, static_cast<long>(iterations * min_seconds / t * 1.2))
                : iterations * 10;
  }
  std::vector<double> per;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    body(iterations);
    per.push_back(seconds_since(t0) / static_cast<double>(iterations));
  }
  return median(per);
}

inline Matrix random_matrix(Index rows, Index cols, uint64_t seed) {
  Rng rng(seed);
  Matrix m(rows, cols);
  for (Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(rng.uniform(-1.0, 1.0));
  return m;
}

// C(m,n) = A(m,k) * B(k,n) on row-major matrices, as Dense::forward computes x * kernel.
struct Gemm {
  Matrix a, b, c;
  Gemm(Index m, Index k, Index n, uint64_t seed)
      : a(random_matrix(m, k, seed)), b(random_matrix(k, n, seed + 1)), c(m, n) {}
  void run(long iterations) {
    for (long i = 0; i < iterations; ++i) c.noalias() = a * b;
  }
  double flops() const { return 2.0 * a.rows() * a.cols() * b.cols(); }
};

// One thread's GFLOP/s on an m x k x n product (median of repeats).
inline double gemm_gflops_1(Index m, Index k, Index n, int repeats) {
  Gemm g(m, k, n, 1);
  const double t = time_per_iteration([&](long it) { g.run(it); }, repeats, 0.25);
  return g.flops() / t * 1e-9;
}

// Each epoch's wall time in seconds, as fit() reports its callbacks (throughput benchmarks).
struct EpochTimer : Callback {
  Clock::time_point begin;
  std::vector<double> seconds;
  void on_epoch_begin(int, const Logs&) override { begin = Clock::now(); }
  void on_epoch_end(int, Logs&) override { seconds.push_back(seconds_since(begin)); }
};

}  // namespace fitbench::bench
