// Synchronization costs of the simulated devices: (a) a 2-thread barrier round trip, SpinBarrier
// vs std::barrier; (b) all_reduce and all_gather on N = 2 and 4 threads, ring and naive, of 5
// floats (the seed model's gradients), 16,384 and 669,706 (the 784-512-512-10 MLP's gradients),
// with the bytes a rank sends and the GB/s that makes; (c) the seed model's train_step on 16 rows
// through DataParallel on 2 devices vs the local executor (the difference is the framework
// overhead of distribution), and fit() per step; (d) the MLP's train_step on shuffled batches
// of 256: local, DataParallel x2, ModelParallel 1x2 (kernels split by columns) and DataParallel on
// one device (that executor's spans of the whole step), in alternating blocks of steps, with the
// speedups as medians of each round's ratios and each DataParallel device's time per span.
// Medians of repeats; never asserted.
// Usage: bench_collectives [--repeats N] [--mlp]   (--mlp: part (d) alone)
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_models.h"
#include "bench/bench_util.h"
#include "core/data/dataset.h"
#include "core/distribution/collectives/collectives.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/threads/device_pool.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

namespace {

using fitbench::bench::host_cpu;
using fitbench::bench::load_average;
using fitbench::bench::median;
using fitbench::bench::mlp_compile;
using fitbench::bench::mlp_spec;
using fitbench::bench::seed_compile;
using fitbench::bench::seed_spec;
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

// (d) The MLP's train_step on shuffled batches of 256 rows (as fit() hands them over:
// train_step_rows with the batch's row indices), per step in microseconds. The local executor,
// DataParallel x2 and ModelParallel 1x2 each train a model of their own, in alternating blocks of
// steps, so that all three see the same moments of a machine whose speed drifts; the ratios are
// the medians of each round's ratios.
struct MlpSteps {
  double local_us = 0.0, dp2_us = 0.0, mp12_us = 0.0;
  double dp2_speedup = 0.0, mp12_speedup = 0.0;  // local / distributed, median over rounds
  double dp2_speedup_lo = 0.0, dp2_speedup_hi = 0.0;
  double dp1_us = 0.0;
  // DataParallel x2: each span label's median time per step on devices 0 and 1 (steps in which a
  // device has no span of a label, e.g. no waiting, are left out of that label's median); and
  // the same executor on one device, the reference its two halves are compared with.
  std::map<std::string, double> dp2_spans[2], dp1_spans[2];
};

// Keeps every device's span durations of each step, by label.
struct SpanLog {
  std::map<std::string, std::vector<double>> per_device[2];
  void add(const StepTrace& t) {
    for (size_t d = 0; d < 2 && d < t.spans.size(); ++d) {
      std::map<std::string, double> step;
      for (const TraceSpan& s : t.spans[d]) step[span_label(s)] += s.duration_us;
      for (const auto& [k, v] : step) per_device[d][k].push_back(v);
    }
  }
  void medians(std::map<std::string, double> (&out)[2]) const {
    for (int d = 0; d < 2; ++d)
      for (const auto& [k, v] : per_device[d]) out[d][k] = median(v);
  }
};

// A compiled MLP that has trained one step locally (its optimizer is built), and its executor
// context.
struct MlpModel {
  std::unique_ptr<Sequential> model;
  ExecutorContext ctx;
};

MlpModel mlp_model(const CompileOptions& c, const Matrix& x, const Matrix& y) {
  MlpModel m;
  set_random_seed(7);
  m.model = std::make_unique<Sequential>(mlp_spec());
  m.model->compile(c);
  m.model->set_executor_factory([&m](const ExecutorContext& ctx) {
    m.ctx = ctx;
    return std::make_unique<LocalExecutor>(ctx);
  });
  m.model->fit(x.topRows(256), y.topRows(256),
               FitOptions{.epochs = 1, .batch_size = 256, .verbose = 0});
  return m;
}

MlpSteps mlp_steps(int repeats) {
  const CompileOptions c = mlp_compile();
  constexpr Index kRows = 4096, kBatch = 256;
  Rng rng(11);
  Matrix x(kRows, 784), y(kRows, 1);
  for (Index i = 0; i < kRows; ++i) {
    for (Index j = 0; j < 784; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = static_cast<float>(rng.below(10));
  }
  MlpModel local_model = mlp_model(c, x, y), dp_model = mlp_model(c, x, y),
           mp_model = mlp_model(c, x, y), dp1_model = mlp_model(c, x, y);
  LocalExecutor local(local_model.ctx);
  DataParallelExecutor dp2(dp_model.ctx, 2), dp1(dp1_model.ctx, 1);
  // ModelParallel starts its own optimizer state: it takes an optimizer that has not stepped.
  DistributionSpec mp;
  mp.class_name = "ModelParallel";
  mp.mesh_shape = {1, 2};
  mp.axis_names = {"batch", "model"};
  mp.layout_map = default_layout_map(model_variables(mlp_spec(), 784), "model", 2);
  auto fresh = make_optimizer(c.optimizer, "compile.optimizer");
  ExecutorContext mp_ctx = mp_model.ctx;
  mp_ctx.optimizer = fresh.get();
  ModelParallelExecutor mp12(mp_ctx, make_model_parallel_plan(mp_model.model->network(), mp, 2),
                             c.optimizer, std::make_shared<ModelParallelOptimizers>());
  StepExecutor* execs[4] = {&local, &dp2, &mp12, &dp1};
  StepTotals totals;
  totals.reset(local_model.ctx.graph.metric_state_size());
  Matrix xb(kBatch, 784), yb(kBatch, 1);
  std::vector<int64_t> order(static_cast<size_t>(kRows));
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  uint64_t step = 0;
  SpanLog dp2_log, dp1_log;
  SpanLog* logs[4] = {nullptr, &dp2_log, nullptr, &dp1_log};
  // One block: 10 steps of one executor over shuffled batches; microseconds per step (the spans
  // are logged outside the timed steps).
  auto block = [&](int e, bool keep_spans) {
    constexpr int kSteps = 10;
    for (size_t i = order.size() - 1; i > 0; --i)
      std::swap(order[i], order[static_cast<size_t>(rng.below(static_cast<int64_t>(i) + 1))]);
    double us = 0.0;
    for (int i = 0; i < kSteps; ++i) {
      const std::span<const int64_t> index(order.data() + i * kBatch, kBatch);
      const auto t0 = Clock::now();
      execs[e]->train_step_rows(x, y, index, xb, yb, step++, totals);
      us += std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
      if (keep_spans && logs[e]) logs[e]->add(*execs[e]->step_trace());
    }
    return us / kSteps;
  };
  for (StepExecutor* e : execs) e->prepare(kBatch);
  for (int e = 0; e < 4; ++e) block(e, false);  // warm-up
  std::vector<double> us[4], dp2_ratio, mp12_ratio;
  for (int round = 0; round < 2 * repeats; ++round) {
    for (int e = 0; e < 4; ++e) us[e].push_back(block(e, true));
    dp2_ratio.push_back(us[0].back() / us[1].back());
    mp12_ratio.push_back(us[0].back() / us[2].back());
  }
  MlpSteps r;
  r.local_us = median(us[0]);
  r.dp2_us = median(us[1]);
  r.mp12_us = median(us[2]);
  r.dp1_us = median(us[3]);
  r.dp2_speedup = median(dp2_ratio);
  r.mp12_speedup = median(mp12_ratio);
  r.dp2_speedup_lo = *std::min_element(dp2_ratio.begin(), dp2_ratio.end());
  r.dp2_speedup_hi = *std::max_element(dp2_ratio.begin(), dp2_ratio.end());
  dp2_log.medians(r.dp2_spans);
  dp1_log.medians(r.dp1_spans);
  return r;
}

// (a) to (c): barriers, collectives over buffer sizes, the seed model's steps.
void run_small(int repeats) {
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
}

void print_mlp(const MlpSteps& m) {
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, 256 rows, local executor", m.local_us);
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, DataParallel x2, ring", m.dp2_us);
  std::printf("%-58s %10.3f  (rounds %.3f-%.3f)\n", "(d) MLP local / DataParallel x2, per round",
              m.dp2_speedup, m.dp2_speedup_lo, m.dp2_speedup_hi);
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, DataParallel x1", m.dp1_us);
  std::printf("(d)   DataParallel x1, cpu:0 per step (us):");
  for (const auto& [label, us] : m.dp1_spans[0]) std::printf(" %s %.1f", label.c_str(), us);
  std::printf("\n");
  for (int d = 0; d < 2; ++d) {
    std::printf("(d)   DataParallel x2, cpu:%d per step (us):", d);
    for (const auto& [label, us] : m.dp2_spans[d]) std::printf(" %s %.1f", label.c_str(), us);
    std::printf("\n");
  }
  std::printf("%-58s %10.1f us\n", "(d) MLP train_step, ModelParallel 1x2, ring", m.mp12_us);
  std::printf("%-58s %10.3f\n", "(d) MLP local / ModelParallel 1x2, per round", m.mp12_speedup);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  bool mlp_only = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--repeats") == 0 && i + 1 < argc) repeats = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--mlp") == 0) mlp_only = true;
  }
  std::printf("bench_collectives: medians of %d repeats; %u hardware threads (%s); load %s\n",
              repeats, std::thread::hardware_concurrency(), host_cpu().c_str(),
              load_average().c_str());
  if (!mlp_only) run_small(repeats);
  const MlpSteps m = mlp_steps(repeats);
  print_mlp(m);
  std::printf("load at end: %s\n", load_average().c_str());
  return 0;
}
