// The predicted time of one training step on a target: each device's compute (the layers'
// FLOPs at its rows of the batch, and its part of the update, at the target's FLOP/s) and the
// collectives of the step (their messages from CollectiveSchedule, each costing latency + bytes /
// bandwidth of the link it crosses), added along the step's critical path: the executors run
// forward, backward, the collectives and the update one after another, and the busiest device
// sets the pace. predict_step_phases gives the same step device by device and phase by phase (the
// device timeline's modelled time). docs/capacity.md gives the formulas. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run/capacity.h"
#include "core/run/target.h"

namespace fitbench {

// One collective of a step.
struct CollectiveCost {
  std::string what;  // "gradient all_reduce", "hidden_1 forward all_gather"
  CollectiveOp op = CollectiveOp::kAllReduce;
  int ranks = 1;               // devices taking part (one group; groups run side by side)
  int64_t elements = 0;        // floats in the whole buffer
  int64_t bytes_on_links = 0;  // every message of every group of this kind, summed
  double seconds = 0.0;        // on the critical path
};

struct StepTime {
  double compute_s = 0.0;
  double communication_s = 0.0;
  double total_s = 0.0;
  double samples_per_s = 0.0;
  int64_t communication_bytes = 0;  // sent on every link in one step
  std::vector<CollectiveCost> collectives;
};

// One device's part of a modelled step, in seconds on the target.
struct DevicePhases {
  int64_t rows = 0;         // rows of the batch it computes (its shard, or its mesh row's)
  double forward_s = 0.0;   // its layers' forward FLOPs at those rows (its share of split layers)
  double backward_s = 0.0;  // the gradients' FLOPs at those rows
  double update_s = 0.0;    // its part of the optimizer update
  double compute_s() const { return forward_s + backward_s + update_s; }
};

// predict_step phase by phase: each device's forward, backward and update, and the collectives in
// the order a step runs them: those of the forward pass (ModelParallel's activations) after the
// forward computations, the others (the gradients') after the backward ones. The busiest device's
// compute_s() is predict_step's compute_s; the collectives' seconds add up to its
// communication_s.
struct StepPhases {
  std::vector<DevicePhases> devices;  // by device index (a mesh's flat index)
  std::vector<CollectiveCost> forward_collectives;
  std::vector<CollectiveCost> backward_collectives;
};

// FLOPs of one row through the model, forward and backward (Dense: 2 x inputs x units for the
// product, the same for the kernel's gradient and, past the first layer, for the input's).
double row_flops(const CapacityInput& in);
// FLOPs of the optimizer's rule per trainable float (SGD 2, with momentum 4, Adam 12, ...).
double update_flops_per_float(const OptimizerSpec& spec);

// The step of `in` on `target`. Throws InputError for a layout the executor would refuse.
StepTime predict_step(const CapacityInput& in, const Target& target);
// The step of `in` on `target` device by device (the devices' rows as the executors split the
// batch: the first batch % N shards one row longer). Throws as predict_step does.
StepPhases predict_step_phases(const CapacityInput& in, const Target& target);

// One all-reduce of `elements` floats over `ranks` devices on `link`: the sum over the schedule's
// steps of the busiest device's messages (CollectiveSchedule up to 64 devices, the same closed
// form above: ring 2(N-1) x (latency + ceil(E/N) x 4 / bandwidth)), in seconds.
double all_reduce_seconds(CollectiveAlgorithm algorithm, int ranks, int64_t elements,
                          const LinkModel& link);

}  // namespace fitbench
