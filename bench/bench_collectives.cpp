// Synchronization costs of the simulated devices: (a) a 2-thread barrier round trip, SpinBarrier
// vs std::barrier; (b) all_reduce and all_gather on N = 2 and 4 threads, ring and naive, of 5
// floats (the seed model's gradients), 16,384 and 669,706 (the 784-512-512-10 MLP's gradients),
// with the bytes a rank sends and the GB/s that makes; (c) the seed model's train_step on 16 rows
// through DataParallel on 2 devices vs the local executor (the difference is the framework
// overhead of distribution), and fit() per step; (d) the MLP's train_step on a batch of 256:
// local, DataParallel x2 and ModelParallel 1x2 (kernels split by columns). Medians of repeats;
// never asserted. Usage: bench_collectives [--repeats N]
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

#include "bench/bench_util.h"
#include "core/data/dataset.h"
#include "core/distribution/collectives.h"
#include "core/distribution/data_parallel_executor.h"
#include "core/distribution/device_pool.h"
#include "core/distribution/distribution.h"
#include "core/distribution/layout_map.h"
#include "core/distribution/model_parallel_executor.h"
#include "core/random.h"
#include "core/training/sequential.h"

namespace {

using fitbench::bench::load_average;
using fitbench::bench::median;
using namespace fitbench;
using Clock = std::chrono::steady_clock;

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

// Runs fn(rank, iterations) on n threads at once.
void on_threads(int n, long iterations, const std::function<void(int, long)>& fn) {
  std::vector<std::thread> others;
  for (int r = 1; r < n; ++r) others.emplace_back([&, r] { fn(r, iterations); });
  fn(0, iterations);
  for (auto& t : others) t.join();
}

void two_threads(long iterations, const std::function<void(int, long)>& fn) {
  on_threads(2, iterations, fn);
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

// One collective call on n threads, per call: the median time and what rank 0 sends.
struct CallCost {
  double us = 0.0;
  int64_t bytes_sent = 0;  // by rank 0 (ring: every rank the same)
};

CallCost collective_us(CollectiveOp op, CollectiveAlgorithm alg, int n, size_t floats,
                       long iterations, int repeats) {
  auto coll = make_thread_collectives(n, alg);
  std::vector<std::vector<float>> buffers(static_cast<size_t>(n), std::vector<float>(floats, 1.0f));
  std::vector<std::vector<float>> pieces(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    pieces[static_cast<size_t>(r)].assign(
        static_cast<size_t>(chunk_of(static_cast<int64_t>(floats), n, r).size), 1.0f);
  CallCost cost;
  cost.us = us_per_iteration(
      [&](long it) {
        on_threads(n, it, [&](int r, long calls) {
          std::span<float> mine(buffers[static_cast<size_t>(r)]);
          for (long i = 0; i < calls; ++i) {
            CollectiveStats stats;
            if (op == CollectiveOp::kAllReduce) {
              mine[0] = 1.0f;  // keep the values bounded
              stats = coll->all_reduce(r, mine);
            } else {
              stats = coll->all_gather(r, pieces[static_cast<size_t>(r)], mine);
            }
            if (r == 0) cost.bytes_sent = stats.bytes_sent;
          }
        });
      },
      iterations, repeats);
  return cost;
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

SeedSteps seed_steps(int repeats, const RehearsalOptions& options) {
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

// (d) The MLP's train_step on one batch of 256 rows, per step in microseconds.
struct MlpSteps {
  double local_us = 0.0, dp2_us = 0.0, mp12_us = 0.0;
};

MlpSteps mlp_steps(int repeats) {
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {784};
  ModelSpec spec;
  spec.layers = {in};
  for (int64_t units : {512, 512, 10}) {
    LayerSpec d;
    d.class_name = "Dense";
    d.units = units;
    d.activation = units == 10 ? "softmax" : "relu";
    spec.layers.push_back(d);
  }
  CompileOptions c;
  c.optimizer.class_name = "Adam";
  c.loss.name = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  Rng rng(11);
  Matrix x(256, 784), y(256, 1);
  for (Index i = 0; i < 256; ++i) {
    for (Index j = 0; j < 784; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = static_cast<float>(rng.below(10));
  }
  set_random_seed(7);
  Sequential model(spec);
  model.compile(c);
  ExecutorContext saved;
  model.set_executor_factory([&saved](const ExecutorContext& ctx) {
    saved = ctx;
    return std::make_unique<LocalExecutor>(ctx);
  });
  model.fit(x, y, FitOptions{.epochs = 1, .batch_size = 256, .verbose = 0});
  StepTotals totals;
  totals.reset(saved.graph.metric_state_size());
  uint64_t step = 0;
  auto per_step = [&](StepExecutor& exec) {
    exec.prepare(256);
    return us_per_iteration(
        [&](long it) {
          for (long i = 0; i < it; ++i) exec.train_step(x, y, step++, totals);
        },
        40, repeats);
  };
  MlpSteps r;
  {
    LocalExecutor exec(saved);
    r.local_us = per_step(exec);
  }
  {
    DataParallelExecutor exec(saved, 2);
    r.dp2_us = per_step(exec);
  }
  {
    // ModelParallel starts its own optimizer state: it takes an optimizer that has not stepped.
    DistributionSpec mp;
    mp.class_name = "ModelParallel";
    mp.mesh_shape = {1, 2};
    mp.axis_names = {"batch", "model"};
    mp.layout_map = default_layout_map(model_variables(spec, 784), "model", 2);
    auto fresh = make_optimizer(c.optimizer, "compile.optimizer");
    ExecutorContext ctx = saved;
    ctx.optimizer = fresh.get();
    ModelParallelExecutor exec(ctx, make_model_parallel_plan(model.network(), mp, 2), c.optimizer,
                               std::make_shared<ModelParallelOptimizers>());
    r.mp12_us = per_step(exec);
  }
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
  // (b): per call, and the bandwidth rank 0's sent bytes make in that time.
  for (auto op : {CollectiveOp::kAllReduce, CollectiveOp::kAllGather})
    for (int n : {2, 4})
      for (size_t floats : {size_t(5), size_t(16384), size_t(669706)})
        for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
          const long iterations = floats < 100 ? 100000 : floats < 100000 ? 5000 : 50;
          const CallCost c = collective_us(op, alg, n, floats, iterations, repeats);
          char name[96];
          std::snprintf(name, sizeof name, "(b) %s %zu floats, N=%d, %s", op_name(op), floats, n,
                        algorithm_name(alg));
          std::printf("%-58s %10.3f us  rank 0 sends %9lld bytes (%.2f GB/s)\n", name, c.us,
                      static_cast<long long>(c.bytes_sent),
                      c.us > 0.0 ? static_cast<double>(c.bytes_sent) / (c.us * 1e3) : 0.0);
        }
  for (auto alg : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    RehearsalOptions options;
    options.algorithm = alg;
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
  const MlpSteps m = mlp_steps(repeats);
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, 256 rows, local executor", m.local_us);
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, DataParallel x2, ring", m.dp2_us);
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, ModelParallel 1x2, ring", m.mp12_us);
  std::printf("load at end: %s\n", load_average().c_str());
  return 0;
}
