// Training-step speed: (a) the seed model's StepExecutor::train_step on a 16-row batch and its
// fit() time per step, with the framework overhead left after the FLOP time; (b) a 784-512-512-10
// MLP's samples/s and GFLOP/s through Sequential::fit(verbose=0); (a) and (b) also with
// DataParallel on 2 simulated devices; (c) this machine's Eigen SGEMM peak on the MLP's shapes and
// 1024^3, on one thread and on two threads running independent GEMM loops at once (the ceiling of
// two simulated devices).
// Usage: bench_step [--repeats N] [--quick]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_gemm.h"
#include "bench/bench_models.h"
#include "bench/bench_util.h"
#include "core/data/dataset.h"
#include "core/distribution/executors/distribution.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

namespace {

using fitbench::bench::host_cpu;
using fitbench::bench::load_average;
using fitbench::bench::median;
using namespace fitbench;
using fitbench::bench::Clock;
using fitbench::bench::dense;
using fitbench::bench::EpochTimer;
using fitbench::bench::Gemm;
using fitbench::bench::gemm_gflops_1;
using fitbench::bench::input;
using fitbench::bench::mlp_compile;
using fitbench::bench::mlp_spec;
using fitbench::bench::random_matrix;
using fitbench::bench::seconds_since;
using fitbench::bench::seed_compile;
using fitbench::bench::seed_spec;
using fitbench::bench::time_per_iteration;

// The vector instructions this binary was compiled for (Eigen's own string does not list AVX2/FMA
// for an AVX2 build).
const char* isa() {
#if defined(__AVX512F__)
  return "AVX-512F+FMA";
#elif defined(__AVX2__) && defined(__FMA__)
  return "AVX2+FMA";
#elif defined(__AVX__)
  return "AVX";
#else
  return "SSE2";
#endif
}

// ---- (c) SGEMM ----

// Two threads, each with its own matrices, running the same number of products at once; the
// aggregate GFLOP/s over the wall time of both (median of repeats).
double gemm_gflops_2(Index m, Index k, Index n, int repeats) {
  Gemm g0(m, k, n, 1), g1(m, k, n, 3);
  long iterations = 1;
  {
    const auto t0 = Clock::now();
    g0.run(1);
    const double t = seconds_since(t0);
    iterations = std::max(1L, static_cast<long>(0.3 / std::max(t, 1e-6)));
  }
  std::vector<double> rates;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    std::thread other([&] { g1.run(iterations); });
    g0.run(iterations);
    other.join();
    rates.push_back(2.0 * g0.flops() * static_cast<double>(iterations) / seconds_since(t0) * 1e-9);
  }
  return median(rates);
}

// ---- models ----

FitOptions quiet_fit(int epochs, int batch_size) {
  FitOptions o;
  o.epochs = epochs;
  o.batch_size = batch_size;
  o.verbose = 0;
  o.shuffle = true;
  return o;
}

struct SeedResult {
  double step_us = 0.0;          // LocalExecutor::train_step on 16 rows
  double fit_step_us = 0.0;      // Sequential::fit wall time per step (128 samples, batch 16)
  double fit_step_us_dp2 = 0.0;  // the same with DataParallel on 2 simulated devices
  double flops_per_step = 0.0;
};

// fit() wall time per step of the seed model on d (batch 16), median of repeats.
double seed_fit_step_us(Sequential& model, const Dataset& d, int repeats) {
  const int epochs = 250;  // 2000 steps per fit()
  const double steps = epochs * static_cast<double>((d.x.rows() + 15) / 16);
  model.fit(d.x, d.y, quiet_fit(1, 16));  // warm-up: optimizer slots, device threads
  std::vector<double> per;
  for (int rep = 0; rep < repeats; ++rep) {
    const auto t0 = Clock::now();
    model.fit(d.x, d.y, quiet_fit(epochs, 16));
    per.push_back(seconds_since(t0) / steps);
  }
  return 1e6 * median(per);
}

// (a) The seed model: the executor's train_step on a fixed 16-row batch, and fit() per step.
SeedResult bench_seed(int repeats) {
  DataSpec data;
  data.generator = "seed";
  data.samples = 128;
  const Dataset d = generate_dataset(data);
  set_random_seed(7);
  Sequential model(seed_spec());
  model.compile(seed_compile());
  ExecutorContext saved;
  model.set_executor_factory([&saved](const ExecutorContext& ctx) {
    saved = ctx;
    return std::make_unique<LocalExecutor>(ctx);
  });
  model.fit(d.x, d.y, quiet_fit(1, 16));  // builds the optimizer; saves the executor context

  SeedResult r;
  {
    LocalExecutor exec(saved);
    exec.prepare(16);
    const Matrix x = d.x.topRows(16), y = d.y.topRows(16);
    StepTotals totals;
    totals.reset(saved.graph.metric_state_size());
    uint64_t step = 0;
    r.step_us = 1e6 * time_per_iteration(
                          [&](long it) {
                            for (long i = 0; i < it; ++i) exec.train_step(x, y, step++, totals);
                          },
                          repeats, 0.2);
  }
  r.fit_step_us = seed_fit_step_us(model, d, repeats);
  {
    set_random_seed(7);
    Sequential dp(seed_spec());
    dp.compile(seed_compile());
    use_data_parallel(dp, 2);
    r.fit_step_us_dp2 = seed_fit_step_us(dp, d, repeats);
  }
  r.flops_per_step = 6.0 * static_cast<double>(model.count_params(true)) * 16.0;
  return r;
}

struct MlpResult {
  double samples_per_s = 0.0;
  double samples_per_s_dp2 = 0.0;        // DataParallel on 2 simulated devices
  double dp2_setup_s = 0.0;              // its first epoch's excess: what fit() sets up once
  double samples_per_s_cpu[2] = {0, 0};  // one device, pinned to CPU 0 / CPU 1
  double flops_per_sample = 0.0;         // 6 * params: 2 forward + 4 backward per weight
  double gemm_flops_per_sample = 0.0;    // the GEMMs a step runs (no dx for the first layer)
  double gemm_only_samples_per_s = 0.0;  // the step's 8 products alone, same shapes
};

// The eight products of one MLP step at batch b, written as Dense computes them.
struct MlpGemms {
  Matrix x, w1, w2, w3, h1, h2, out, d3, d2, d1, g1, g2, g3;
  explicit MlpGemms(Index b)
      : x(random_matrix(b, 784, 5)),
        w1(random_matrix(784, 512, 6)),
        w2(random_matrix(512, 512, 7)),
        w3(random_matrix(512, 10, 8)),
        h1(b, 512),
        h2(b, 512),
        out(b, 10),
        d3(random_matrix(b, 10, 9)),
        d2(b, 512),
        d1(b, 512),
        g1(784, 512),
        g2(512, 512),
        g3(512, 10) {}
  void run(long iterations) {
    for (long i = 0; i < iterations; ++i) {
      h1.noalias() = x * w1;
      h2.noalias() = h1 * w2;
      out.noalias() = h2 * w3;
      g3.noalias() = h2.transpose() * d3;
      d2.noalias() = d3 * w3.transpose();
      g2.noalias() = h1.transpose() * d2;
      d1.noalias() = d2 * w2.transpose();
      g1.noalias() = x.transpose() * d1;
    }
  }
};

// The MLP's fit() samples/s over whole epochs of x (batch 256), median of repeats; devices > 0
// trains with DataParallel over that many simulated devices.
// The time of each epoch of a fit().
// Steady-state training throughput: one fit() of 1 + repeats epochs, and the median samples/s
// of its epochs after the first. The first epoch also pays what a fit() sets up once (a
// DataParallel executor's threads, replicas and optimizer clones: fresh memory, which this VM's
// page faults make cost tens of milliseconds); `setup_s` gets its excess over the median.
double mlp_samples_per_s(const Matrix& x, const Matrix& y, int repeats, int devices,
                         double* setup_s = nullptr) {
  set_random_seed(7);
  Sequential model(mlp_spec());
  model.compile(mlp_compile());
  if (devices > 0) use_data_parallel(model, devices);
  EpochTimer timer;
  RunOptions run;
  run.callbacks = {&timer};
  model.fit(x, y, quiet_fit(1 + repeats, 256), run);
  std::vector<double> steady(timer.seconds.begin() + 1, timer.seconds.end());
  const double epoch_s = median(steady);
  if (setup_s) *setup_s = timer.seconds.front() - epoch_s;
  return static_cast<double>(x.rows()) / epoch_s;
}

// The same on one device with the calling thread pinned to `cpu`; 0 when pinning fails.
double mlp_samples_per_s_on(int cpu, const Matrix& x, const Matrix& y, int repeats) {
  cpu_set_t saved, one;
  if (pthread_getaffinity_np(pthread_self(), sizeof(saved), &saved) != 0) return 0.0;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0) return 0.0;
  const double rate = mlp_samples_per_s(x, y, repeats, 0);
  pthread_setaffinity_np(pthread_self(), sizeof(saved), &saved);
  return rate;
}

// (b) The MLP through fit() on `samples` synthetic samples, and its GEMMs alone.
MlpResult bench_mlp(int repeats, int samples) {
  const Index n = samples;
  Matrix x = random_matrix(n, 784, 21);
  Matrix y(n, 1);
  Rng rng(22);
  for (Index i = 0; i < n; ++i) y(i, 0) = static_cast<float>(rng.below(10));
  MlpResult r;
  r.samples_per_s = mlp_samples_per_s(x, y, repeats, 0);
  r.samples_per_s_dp2 = mlp_samples_per_s(x, y, repeats, 2, &r.dp2_setup_s);
  if (std::thread::hardware_concurrency() >= 2)
    for (int c = 0; c < 2; ++c) r.samples_per_s_cpu[c] = mlp_samples_per_s_on(c, x, y, repeats);
  Sequential model(mlp_spec());
  r.flops_per_sample = 6.0 * static_cast<double>(model.count_params(true));
  const double dims[] = {784, 512, 512, 10};
  for (int l = 0; l < 3; ++l)
    r.gemm_flops_per_sample += (l == 0 ? 4.0 : 6.0) * dims[l] * dims[l + 1];
  MlpGemms g(256);
  const double t = time_per_iteration([&](long it) { g.run(it); }, repeats, 0.3);
  r.gemm_only_samples_per_s = 256.0 / t;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  int mlp_samples = 4096;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc)
      repeats = std::max(5, std::atoi(argv[++i]));
    else if (std::strcmp(argv[i], "--quick") == 0)
      mlp_samples = 1024;
  }
  std::printf(
      "bench_step: Eigen %d.%d.%d, compiled for %s (Eigen: %s), %d repeats (medians), "
      "load avg %s\nhost: %s\n",
      EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION, isa(),
      Eigen::SimdInstructionSetsInUse(), repeats, load_average().c_str(), host_cpu().c_str());

  const double peak_mlp_1 = gemm_gflops_1(256, 784, 512, repeats);
  const double peak_mlp_2 = gemm_gflops_2(256, 784, 512, repeats);
  const double peak_cube_1 = gemm_gflops_1(1024, 1024, 1024, repeats);
  const double peak_cube_2 = gemm_gflops_2(1024, 1024, 1024, repeats);
  const SeedResult seed = bench_seed(repeats);
  const MlpResult mlp = bench_mlp(repeats, mlp_samples);

  const double flop_us = seed.flops_per_step / (peak_mlp_1 * 1e9) * 1e6;
  const double mlp_gflops = mlp.samples_per_s * mlp.flops_per_sample * 1e-9;
  const double mlp_gemm_gflops = mlp.samples_per_s * mlp.gemm_flops_per_sample * 1e-9;

  std::printf("\n%-52s %14s\n", "measurement", "median");
  std::printf("%-52s %11.1f GF/s\n", "(c) SGEMM 256x784x512, 1 thread", peak_mlp_1);
  std::printf("%-52s %11.1f GF/s\n", "(c) SGEMM 256x784x512, 2 threads (independent)", peak_mlp_2);
  std::printf("%-52s %11.1f GF/s\n", "(c) SGEMM 1024^3, 1 thread", peak_cube_1);
  std::printf("%-52s %11.1f GF/s\n", "(c) SGEMM 1024^3, 2 threads (independent)", peak_cube_2);
  std::printf("%-52s %11.2f us\n", "(a) seed train_step, 16 rows (LocalExecutor)", seed.step_us);
  std::printf("%-52s %11.2f us\n", "(a) seed fit() per step, 128 samples, batch 16",
              seed.fit_step_us);
  std::printf("%-52s %11.2f us\n", "(a) seed fit() per step, DataParallel 2 devices",
              seed.fit_step_us_dp2);
  std::printf("%-52s %11.4f us\n", "(a) seed FLOP time per step (6*params*16 @ 1T peak)", flop_us);
  std::printf("%-52s %11.2f us\n", "(a) seed framework overhead per train_step",
              seed.step_us - flop_us);
  std::printf("%-52s %9.0f samp/s\n", "(b) MLP fit(), Adam, batch 256, 1 thread",
              mlp.samples_per_s);
  std::printf("%-52s %9.0f samp/s\n", "(b) MLP fit(), DataParallel 2 devices",
              mlp.samples_per_s_dp2);
  std::printf("%-52s %11.1f ms\n", "(b) MLP DataParallel 2 devices, fit() setup (once)",
              mlp.dp2_setup_s * 1e3);
  std::printf("%-52s %9.0f samp/s\n", "(b) MLP fit(), 1 device pinned to CPU 0",
              mlp.samples_per_s_cpu[0]);
  std::printf("%-52s %9.0f samp/s\n", "(b) MLP fit(), 1 device pinned to CPU 1",
              mlp.samples_per_s_cpu[1]);
  std::printf("%-52s %11.1f GF/s\n", "(b) MLP fit() model FLOP rate (6*params/sample)", mlp_gflops);
  std::printf("%-52s %11.1f GF/s\n", "(b) MLP fit() GEMM FLOP rate (FLOPs actually run)",
              mlp_gemm_gflops);
  std::printf("%-52s %9.0f samp/s\n", "(b) MLP step's 8 GEMMs alone (ceiling), 1 thread",
              mlp.gemm_only_samples_per_s);
  std::printf("\nratios\n");
  std::printf("%-52s %11.2f\n", "SGEMM 2 threads / 1 thread, 256x784x512", peak_mlp_2 / peak_mlp_1);
  std::printf("%-52s %11.2f\n", "SGEMM 2 threads / 1 thread, 1024^3", peak_cube_2 / peak_cube_1);
  std::printf("%-52s %11.2f\n", "MLP fit GEMM GF/s / SGEMM 256x784x512 1T",
              mlp_gemm_gflops / peak_mlp_1);
  std::printf("%-52s %11.2f\n", "MLP fit samples/s / its GEMMs alone",
              mlp.samples_per_s / mlp.gemm_only_samples_per_s);
  std::printf("%-52s %11.2f\n", "MLP fit DataParallel 2 devices / 1 device",
              mlp.samples_per_s_dp2 / mlp.samples_per_s);
  // Equal shards in lockstep: a step lasts as long as the slower CPU takes for half the batch,
  // so two devices can reach at most 2 x the slower CPU's one-device rate.
  const double ceiling = 2.0 * std::min(mlp.samples_per_s_cpu[0], mlp.samples_per_s_cpu[1]);
  std::printf("%-52s %11.2f\n", "CPU 1 / CPU 0, MLP fit one device",
              mlp.samples_per_s_cpu[1] / mlp.samples_per_s_cpu[0]);
  std::printf("%-52s %11.2f\n", "MLP DataParallel 2 / (2 x slower CPU's 1 device)",
              ceiling > 0 ? mlp.samples_per_s_dp2 / ceiling : 0.0);
  std::printf("%-52s %11.2f\n", "seed fit() per step / train_step",
              seed.fit_step_us / seed.step_us);
  std::printf("load avg at end: %s\n", load_average().c_str());
  // One machine-readable line for bench/run_all.sh.
  std::printf(
      "SUMMARY seed_step_us=%.2f seed_fit_step_us=%.2f mlp_samples_per_s=%.0f mlp_gflops=%.1f "
      "mlp_gemm_gflops=%.1f mlp_gemm_only_samples_per_s=%.0f sgemm_mlp_1t=%.1f sgemm_mlp_2t=%.1f "
      "sgemm_1024_1t=%.1f "
      "sgemm_1024_2t=%.1f seed_fit_step_us_dp2=%.2f mlp_samples_per_s_dp2=%.0f "
      "mlp_samples_per_s_cpu0=%.0f mlp_samples_per_s_cpu1=%.0f simd=%s host=\"%s\"\n",
      seed.step_us, seed.fit_step_us, mlp.samples_per_s, mlp_gflops, mlp_gemm_gflops,
      mlp.gemm_only_samples_per_s, peak_mlp_1, peak_mlp_2, peak_cube_1, peak_cube_2,
      seed.fit_step_us_dp2, mlp.samples_per_s_dp2, mlp.samples_per_s_cpu[0],
      mlp.samples_per_s_cpu[1], isa(), host_cpu().c_str());
  return 0;
}
