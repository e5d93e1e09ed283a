// The bytes one device holds while it trains, by what they are for: what an executor reports of
// the buffers it allocated (StepExecutor::device_memory) and what the capacity plan predicts
// (core/run/capacity.h) use this one shape, so a test can compare them field by field.
// A value type.
#pragma once

#include <cstdint>

namespace fitbench {

struct DeviceMemory {
  int64_t weights = 0;          // the variables' values this device computes with
  int64_t gradients = 0;        // its gradient buffers (trainable variables)
  int64_t optimizer_slots = 0;  // the optimizer's slot variables this device keeps
  int64_t activations = 0;      // forward outputs, caches and their gradients, kept for backward
  int64_t buffers = 0;          // its copy of its batch rows, collective staging and pieces
  int64_t total() const { return weights + gradients + optimizer_slots + activations + buffers; }
};

}  // namespace fitbench
