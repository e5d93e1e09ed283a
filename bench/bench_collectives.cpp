// Synchronization costs of the simulated devices: (a) a 2-thread barrier round trip, SpinBarrier
// vs std::barrier; (b) all_reduce on 2 threads, ring and naive, of the seed model's 5 gradients
// and of the 784-512-512-10 MLP's 669,706; (c) the seed model's train_step on 16 rows through
// DataParallel on 2 devices vs the local executor (the difference is the framework overhead of
// distribution), and fit() per step. Medians of repeats; never asserted.
// Usage: bench_collectives [--repeats N]
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/data/dataset.h"
#include "core/distribution/collectives.h"
#include "core/distribution/data_parallel_executor.h"
#include "core/distribution/device_pool.h"
#include "core/distribution/distribution.h"
#include "core/random.h"
#include "core/training/sequential.h"

namespace {

using namespace fitbench;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// Median over repeats of the time per iteration of body(iterations), in microseconds.
double us_per_iteration(const std::function<void(long)>& body, long iterations, int repeats) {
  body(iterations / 10 + 1);  // warm-up
  std::vector<double> per;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    body(iterations);
    per.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
                  static_cast<double>(iterations));
  }
  return median(per);
}

// Runs fn(rank, iterations) on two threads at once.
void two_threads(long iterations, const std::function<void(int, long)>& fn) {
  std::thread other([&] { fn(1, iterations); });
  fn(0, iterations);
  other.join();
}

double barrier_us(bool spin, int repeats) {
  SpinBarrier sb(2);
  std::barrier<> sb_std(2);
  return us_per_iteration(
      [&](long it) {
        two_threads(it, [&](int, long n) {
          for (long i = 0; i < n; ++i) spin ? sb.arrive_and_wait() : sb_std.arrive_and_wait();
        });
      },
      200000, repeats);
}

double all_reduce_us(CollectiveAlgorithm alg, size_t floats, long iterations, int repeats) {
  auto coll = make_thread_collectives(2, alg);
  std::vector<float> a(floats, 1.0f), b(floats, 2.0f);
  return us_per_iteration(
      [&](long it) {
        two_threads(it, [&](int r, long n) {
          std::span<float> mine(r == 0 ? a : b);
          for (long i = 0; i < n; ++i) {
            mine[0] = 1.0f;  // keep the values bounded
            coll->all_reduce(r, mine);
          }
        });
      },
      iterations, repeats);
}

ModelSpec seed_spec() {
  LayerSpec in, d;
  in.class_name = "InputLayer";
  in.shape = {4};
  d.class_name = "Dense";
  d.units = 1;
  d.activation = "sigmoid";
  ModelSpec s;
  s.layers = {in, d};
  return s;
}

CompileOptions seed_compile() {
  CompileOptions c;
  c.optimizer.class_name = "SGD";
  c.optimizer.learning_rate = 0.2;
  c.loss.name = "binary_crossentropy";
  c.metrics = {"accuracy"};
  return c;
}

struct SeedSteps {
  double local_us = 0.0, dp2_us = 0.0, fit_local_us = 0.0, fit_dp2_us = 0.0;
};

SeedSteps seed_steps(int repeats, const DataParallelOptions& options) {
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
  FitOptions once{.epochs = 1, .batch_size = 16, .verbose = 0};
  model.fit(d.x, d.y, once);  // builds the optimizer; saves the executor context
  const Matrix x = d.x.topRows(16), y = d.y.topRows(16);
  StepTotals totals;
  totals.reset(saved.graph.metric_state_size());
  uint64_t step = 0;
  SeedSteps r;
  {
    LocalExecutor exec(saved);
    exec.prepare(16);
    r.local_us = us_per_iteration(
        [&](long it) {
          for (long i = 0; i < it; ++i) exec.train_step(x, y, step++, totals);
        },
        200000, repeats);
  }
  {
    DataParallelExecutor exec(saved, 2, options);
    exec.prepare(16);
    r.dp2_us = us_per_iteration(
        [&](long it) {
          for (long i = 0; i < it; ++i) exec.train_step(x, y, step++, totals);
        },
        100000, repeats);
  }
  auto fit_us = [&](Sequential& m) {
    const FitOptions o{.epochs = 250, .batch_size = 16, .verbose = 0};  // 2000 steps
    return us_per_iteration(
               [&](long it) {
                 for (long i = 0; i < it; ++i) m.fit(d.x, d.y, o);
               },
               1, repeats) /
           2000.0;
  };
  model.set_executor_factory(
      [](const ExecutorContext& ctx) { return std::make_unique<LocalExecutor>(ctx); });
  r.fit_local_us = fit_us(model);
  use_data_parallel(model, 2, options);
  r.fit_dp2_us = fit_us(model);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
  std::printf("bench_collectives: medians of %d repeats; %u hardware threads; load %s\n", repeats,
              std::thread::hardware_concurrency(), load_average().c_str());
  std::printf("%-58s %10.3f us\n", "(a) barrier, 2 threads, SpinBarrier",
              barrier_us(true, repeats));
  std::printf("%-58s %10.3f us\n", "(a) barrier, 2 threads, std::barrier",
              barrier_us(false, repeats));
  for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    const std::string name = algorithm_name(alg);
    std::printf("%-58s %10.3f us\n", ("(b) all_reduce 5 floats, 2 threads, " + name).c_str(),
                all_reduce_us(alg, 5, 100000, repeats));
    std::printf("%-58s %10.1f us\n", ("(b) all_reduce 669,706 floats, 2 threads, " + name).c_str(),
                all_reduce_us(alg, 669706, 50, repeats));
  }
  for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    DataParallelOptions options;
    options.allreduce = alg;
    const SeedSteps s = seed_steps(repeats, options);
    const std::string name = algorithm_name(alg);
    std::printf("%-58s %10.3f us\n", "(c) seed train_step, 16 rows, local executor", s.local_us);
    std::printf("%-58s %10.3f us\n", ("(c) seed train_step, DataParallel x2, " + name).c_str(),
                s.dp2_us);
    std::printf("%-58s %10.3f us\n", ("(c) framework overhead of DataParallel x2, " + name).c_str(),
                s.dp2_us - s.local_us);
    std::printf("%-58s %10.3f us\n", "(c) seed fit() per step, local", s.fit_local_us);
    std::printf("%-58s %10.3f us\n", ("(c) seed fit() per step, DataParallel x2, " + name).c_str(),
                s.fit_dp2_us);
  }
  std::printf("load at end: %s\n", load_average().c_str());
  return 0;
}
