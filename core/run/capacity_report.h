// A capacity report: one plan's memory per device, whether it fits a target, its predicted step
// and scaling efficiency, and the sentences that say so; the device-count sweep's plans. What
// `fitbench-cli plan` prints and the window's Capacity view draws, computed once here.
// Value types and pure functions; thread-safe (fit_of reads the process's limits).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/run/capacity.h"
#include "core/run/step_time.h"
#include "core/run/target.h"

namespace fitbench {

// Whether every device fits the target's memory (or, for this machine's shared memory, the job
// fits what the process may take).
struct CapacityFit {
  bool fits = true;
  int64_t capacity = 0;  // per device, or the process's room when shared
  bool shared = false;   // the target's devices share this process's memory (this-machine)
};
CapacityFit fit_of(const MemoryPlan& plan, const Target& target);

// Samples/s of `in` on one device, no distribution: the baseline of scaling efficiency.
double one_device_rate(CapacityInput in, const Target& target);

// The sweep's plans for `n` devices: DataParallel, and meshes (n/m) x m for model axes of 2, 4
// and 8 that divide n (the experiment's layout map, or the default one).
std::vector<CapacityInput> sweep_inputs(const CapacityInput& base, int n);

// "DataParallel on 8 devices", "ModelParallel on a 2x4 mesh", "no distribution (one device)".
std::string strategy_text(const CapacityInput& in);

// One plan on one target.
struct CapacityRow {
  std::string strategy;  // strategy_text
  int devices = 1;
  MemoryPlan memory;
  StepTime step;
  CapacityFit fit;
  double efficiency = 0.0;  // samples/s over devices x the one-device rate
  std::string problem;      // a plan that cannot be made (a mesh the layout cannot use), or ""
};
// The row of `in` on `target`; `one_rate` is one_device_rate(in, target). A layout the
// executor would refuse is the row's problem, not an exception.
CapacityRow capacity_row(const CapacityInput& in, const Target& target, double one_rate);

// The rows of sweep_inputs(in, n) for each n of `counts`, in order, with the device count.
std::vector<std::pair<int, CapacityRow>> sweep_rows(const CapacityInput& in, const Target& target,
                                                    double one_rate,
                                                    const std::vector<int>& counts);

// "Fits: no: the largest device needs 41.7 MiB of 30.5 MiB" (or, shared: "the job needs ... and
// this process may take ...").
std::string fit_sentence(const CapacityRow& row);
// "Step: compute 2.12 ms + communication 272.1 µs = 2.39 ms; 26,727 samples/s; scaling
// efficiency 89% of 8 x one device" (the efficiency on more than one device only).
std::string step_sentence(const CapacityRow& row);

// "gradient all_reduce over 8 devices: 231 MiB on the links, 272.1 µs".
std::string collective_text(const CollectiveCost& cost);

// "1.51 ms", "240.0 µs", "2.30 s".
std::string seconds_text(double seconds);
// "12,345" (rounded).
std::string grouped_text(double value);
// `value` with `digits` decimals ("%.*f").
std::string fixed_text(double value, int digits);

}  // namespace fitbench
