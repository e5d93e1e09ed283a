#include "core/run/memory_check.h"

#include "core/distribution/spec/strategies.h"
#include "core/nn/network.h"

namespace fitbench {
namespace {

std::string breakdown(const MemoryPlan& plan) {
  DeviceMemory sum;
  for (const DeviceMemory& d : plan.devices) {
    sum.weights += d.weights;
    sum.gradients += d.gradients;
    sum.optimizer_slots += d.optimizer_slots;
    sum.activations += d.activations;
    sum.buffers += d.buffers;
  }
  std::string text = std::to_string(plan.devices.size()) +
                     (plan.devices.size() == 1 ? " device: " : " devices: ") + "weights " +
                     bytes_text(sum.weights) + ", gradients " + bytes_text(sum.gradients) +
                     ", optimizer slots " + bytes_text(sum.optimizer_slots) + ", activations " +
                     bytes_text(sum.activations) + ", buffers " + bytes_text(sum.buffers);
  if (plan.host > 0)
    text += "; the model's own copies and fit()'s buffers " + bytes_text(plan.host);
  return text;
}

// The most DataParallel devices whose plan fits in `room` (0 when not even one).
int devices_that_fit(CapacityInput in, int64_t room) {
  int lo = 0, hi = in.devices;
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    in.devices = mid;
    const MemoryPlan p = plan_memory(in);
    if (p.job_total() - p.data <= room)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

}  // namespace

MemoryVerdict check_memory(const CapacityInput& in, const MemoryPlan& plan,
                           const MemoryLimit& limit, int64_t allocated) {
  MemoryVerdict v;
  const int64_t needed = plan.job_total() - allocated;
  if (needed <= limit.bytes) return v;
  v.fits = false;
  v.sentence = "this run needs about " + bytes_text(plan.job_total()) + " (" + breakdown(plan) +
               ") but the process may take " + bytes_text(limit.bytes) + " more (" + limit.source +
               ")";
  int64_t activations = 0;
  for (const DeviceMemory& d : plan.devices) activations += d.activations;
  if (in.distribution.class_name == kDataParallel && in.devices > 1) {
    const int fit = devices_that_fit(in, limit.bytes + allocated - plan.data);
    if (fit >= 1) {
      v.setting = MemoryVerdict::Setting::kDevices;
      v.sentence += "; every DataParallel device holds a whole replica, so use at most " +
                    std::to_string(fit) + (fit == 1 ? " device" : " devices") +
                    ", or ModelParallel to split the variables";
      return v;
    }
  }
  if (activations * 2 > plan.job_total()) {
    v.setting = MemoryVerdict::Setting::kBatchSize;
    v.sentence += "; most of it is activations kept for the backward pass, so use a smaller batch";
    return v;
  }
  // The layer with the most variable floats.
  Network net(in.model);
  net.build_shapes(in.features);
  size_t widest = 0;
  int64_t most = -1;
  for (size_t l = 0; l < net.layers().size(); ++l) {
    int64_t floats = 0;
    for (size_t k = net.first_variable(l); k < net.first_variable(l) + net.variable_count(l); ++k) {
      int64_t size = 1;
      for (int64_t d : net.variables()[k].shape) size *= d;
      floats += size;
    }
    if (floats > most) {
      most = floats;
      widest = l;
    }
  }
  const bool input_layer =
      !in.model.layers.empty() && in.model.layers[0].class_name == "InputLayer";
  v.layer = widest + (input_layer ? 1 : 0);
  v.setting = MemoryVerdict::Setting::kLayerUnits;
  v.sentence +=
      "; this layer holds the most variables (" + bytes_text(most * 4) +
      " each for weights and gradients" +
      (plan.slots_per_variable > 0 ? ", and " + std::to_string(plan.slots_per_variable) +
                                         "x that in " + in.optimizer.class_name + "'s slots"
                                   : std::string()) +
      "), so make it narrower";
  return v;
}

}  // namespace fitbench
