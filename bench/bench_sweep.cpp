// Sweeps on oneTBB (docs/sweeps.md): 16 trials of the xor example on one device each (a random
// sweep of Adam's learning rate), run with --jobs 1 and --jobs 2 in alternating repeats; the
// ratio of the medians is the speed-up (target: at least 1.8x on two idle cores). The sweep
// machinery's own cost per trial is the jobs-1 sweep's time less the same 16 runs made one after
// another with plan_run + execute_run (target: under 1 ms per trial).
//   bench_sweep [--repeats N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "bench/bench_util.h"
#include "core/io/experiment.h"
#include "core/python/random.h"
#include "core/run/run.h"
#include "core/run/sweep.h"

using namespace fitbench;

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The trials one after another, as a script calling `fitbench-cli run` in-process would.
double run_alone(const SweepPlan& plan) {
  const auto start = std::chrono::steady_clock::now();
  for (const SweepTrial& trial : plan.trials) {
    RandomScope scope;
    RunOverrides o = trial.overrides;
    o.verbose = 0;
    o.seed = trial.spec.seed.value_or(0);
    RunPlan run = plan_run(trial.spec, o, PlanContext{});
    std::ostringstream sink;
    RunIO io;
    io.out = &sink;
    io.warnings = &sink;
    (void)execute_run(run, io);
  }
  return seconds_since(start);
}

double sweep(const SweepPlan& plan, int jobs) {
  SweepOptions options;
  options.jobs = jobs;
  const auto start = std::chrono::steady_clock::now();
  (void)run_sweep(plan, options);
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
  ExperimentSpec spec = read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/xor.json");
  spec.sweep = nlohmann::ordered_json::parse(R"({"method": "random", "max_trials": 16, "seed": 1,
    "objective": "loss", "parameters": {"compile.optimizer.config.learning_rate":
      {"class_name": "Float", "config": {"min_value": 0.001, "max_value": 0.3, "sampling": "log"}}}})");
  const SweepPlan plan = plan_sweep(spec, PlanContext{});
  std::printf("host: %s\nload before: %s\n", bench::host_cpu().c_str(),
              bench::load_average().c_str());
  std::vector<double> one, two, alone;
  (void)sweep(plan, 2);  // warm-up
  for (int r = 0; r < repeats; ++r) {
    one.push_back(sweep(plan, 1));
    two.push_back(sweep(plan, 2));
    alone.push_back(run_alone(plan));
  }
  const double m1 = bench::median(one), m2 = bench::median(two), ma = bench::median(alone);
  const double n = static_cast<double>(plan.trials.size());
  std::printf("16 xor trials (30 epochs, 1 device each), medians of %d:\n", repeats);
  std::printf("  --jobs 1: %.1f ms   --jobs 2: %.1f ms   speed-up %.2fx (target >= 1.8x)\n",
              m1 * 1e3, m2 * 1e3, m1 / m2);
  std::printf(
      "  the same runs one after another: %.1f ms; sweep overhead per trial %.3f ms "
      "(target < 1 ms)\n",
      ma * 1e3, (m1 - ma) / n * 1e3);
  std::printf("load after: %s\n", bench::load_average().c_str());
  std::printf("SUMMARY sweep speedup=%.3f overhead_ms=%.4f\n", m1 / m2, (m1 - ma) / n * 1e3);
  return 0;
}
