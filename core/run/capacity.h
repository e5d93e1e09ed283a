// The capacity plan: the bytes each device of a run holds while it trains, predicted from the
// model's shapes and the strategy before anything is allocated, with the rules the executors
// allocate by (the same sharded-update decision, layout splits and buffer sizes), so that on this
// machine it is what DeviceMemory reports after prepare(). docs/capacity.md gives the formulas.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/base/memory_limit.h"  // bytes_text
#include "core/distribution/executors/rehearsal_options.h"
#include "core/distribution/layout/model_parallel_plan.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/layer_spec.h"
#include "core/optimizers/optimizer_spec.h"
#include "core/training/device_memory.h"

namespace fitbench {

struct RunPlan;

// What a plan trains, as the capacity plan needs it.
struct CapacityInput {
  ModelSpec model;
  OptimizerSpec optimizer;
  DistributionSpec distribution;  // class_name empty: one device, no distribution
  int devices = 1;
  RehearsalOptions options;  // the collectives' algorithm and the sharded-update threshold
  int64_t features = 0;      // the data's input columns
  int64_t targets = 0;       // the data's target columns
  int64_t samples = 0;       // rows of the data set
  int64_t train_rows = 0;    // rows fit() trains on (the rest is the validation split)
  int64_t batch_size = 32;   // fit.batch_size
};

// The input of a plan (its spec, device count and data).
CapacityInput capacity_input(const RunPlan& plan);

struct MemoryPlan {
  std::vector<DeviceMemory> devices;  // by device index (a mesh's flat index)
  // What the process holds besides the devices: the model's own variables and whole optimizer
  // state when no device computes with them (ModelParallel, DataParallel's sharded update),
  // fit()'s batch buffers and the validation split's copy.
  int64_t host = 0;
  int64_t data = 0;             // the data set (inputs and targets, float32)
  int64_t parameters = 0;       // floats in every variable
  int64_t trainable = 0;        // floats in the trainable ones
  int slots_per_variable = 0;   // the optimizer's slots per trainable float
  bool sharded_update = false;  // DataParallel updates 1/N per device (shards_update)
  int64_t rows_per_device = 0;  // the most rows a device's step takes

  int64_t devices_total() const;
  int64_t job_total() const { return devices_total() + host + data; }
  // The device holding the most bytes (0 for none).
  int64_t largest_device() const;
};

// The plan for `in`. Throws InputError (the layout map's place) for a ModelParallel layout the
// executor would refuse, and the model's own errors (a layer's units at its place).
MemoryPlan plan_memory(const CapacityInput& in);

// "Scale" what-ifs: factors for the batch (the data set grows with it, so the batch is not cut
// to the rows there are), the units of every Dense layer but the output, and the device count
// (DataParallel's devices; ModelParallel's batch axis).
struct CapacityScale {
  double batch = 1.0;
  double width = 1.0;
  double devices = 1.0;
};
// `in` scaled; counts are rounded and at least 1.
CapacityInput scale_input(CapacityInput in, const CapacityScale& scale);

// The ModelParallel plan a run of `in` uses on `net` (built for in.features): its layout map,
// or the default one when it has none (fill_default_layout), as plan_run decides. Throws
// InputError for a layout the executor would refuse.
ModelParallelPlan mesh_plan(const CapacityInput& in, const Network& net);

}  // namespace fitbench
