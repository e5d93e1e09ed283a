// Whether a run's memory plan fits in what the process may take (memory_limit.h), and when not,
// the one setting to change: the device count (DataParallel replicas), the batch size
// (activations) or the widest layer's units (variables and optimizer slots). plan_run asks this
// before it builds the model. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>

#include "core/base/memory_limit.h"
#include "core/run/capacity.h"

namespace fitbench {

struct MemoryVerdict {
  bool fits = true;
  enum class Setting { kDevices, kBatchSize, kLayerUnits } setting = Setting::kLayerUnits;
  size_t layer = 0;      // kLayerUnits: the layer's index in the model spec (InputLayer counted)
  std::string sentence;  // why it does not fit, with the estimate and what to change
};

// `allocated` is what the process holds of the plan already (the data set, once loaded): the
// limit is what it may take on top.
MemoryVerdict check_memory(const CapacityInput& in, const MemoryPlan& plan,
                           const MemoryLimit& limit, int64_t allocated);

}  // namespace fitbench
