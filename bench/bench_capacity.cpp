// The capacity rehearsal's step model against the measured step: calibrates this machine
// (core/run/calibrate.h), predicts the MLP 784-512-512-10's step (Adam, batch 128) with
// DataParallel on 1, 2 and 4 devices, and measures the real median step, `rounds` times each
// (argument 1, default 3). Prints one line per round: predicted, measured, error, and what the
// calibration found. Numbers, never assertions.
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "core/io/experiment.h"
#include "core/run/calibrate.h"
#include "core/run/run_plan.h"
#include "core/run/step_time.h"

using namespace fitbench;

namespace {

nlohmann::json mlp_experiment() {
  nlohmann::json layers = nlohmann::json::array();
  layers.push_back({{"class_name", "InputLayer"}, {"config", {{"batch_shape", {nullptr, 784}}}}});
  for (int units : {512, 512})
    layers.push_back(
        {{"class_name", "Dense"}, {"config", {{"units", units}, {"activation", "relu"}}}});
  layers.push_back(
      {{"class_name", "Dense"}, {"config", {{"units", 10}, {"activation", "softmax"}}}});
  return {{"name", "mlp"},
          {"seed", 1},
          {"distribution", {{"class_name", "DataParallel"}}},
          {"data", {{"generator", "seed"}, {"samples", 128 * 17}, {"features", 784}, {"seed", 1}}},
          {"model", {{"class_name", "Sequential"}, {"config", {{"layers", layers}}}}},
          {"compile", {{"optimizer", "adam"}, {"loss", "sparse_categorical_crossentropy"}}},
          {"fit", {{"epochs", 1}, {"batch_size", 128}, {"verbose", 0}, {"shuffle", false}}}};
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 3;
  const ExperimentSpec spec = parse_experiment(mlp_experiment(), "mlp", {});
  std::printf("MLP 784-512-512-10, Adam, batch 128, DataParallel; median step of 16\n");
  std::printf("%-8s %-6s %12s %12s %8s %10s %6s %16s\n", "devices", "round", "predicted ms",
              "measured ms", "error", "GFLOP/s", "cores", "link us / GB/s");
  for (int devices : {1, 2, 4}) {
    for (int round = 0; round < rounds; ++round) {
      RunOverrides o;
      o.devices = devices;
      RunPlan plan = plan_run(spec, o, PlanContext{});
      const CapacityInput in = capacity_input(plan);
      const Calibration c = calibrate(in);
      const double predicted = predict_step(in, calibrated_target(c)).total_s;
      const double measured = measure_step_seconds(plan, 16);
      std::printf("%-8d %-6d %12.2f %12.2f %7.0f%% %10.1f %6.2f %8.2f / %5.1f\n", devices, round,
                  predicted * 1e3, measured * 1e3, (predicted / measured - 1.0) * 100.0,
                  c.flops / 1e9, c.cores, c.link.latency_us, c.link.gbps);
    }
  }
  return 0;
}
