// How the simulated hardware behaves under a distributed executor (DataParallel, ModelParallel):
// the rehearsal knobs of an experiment's devices section, validated by rehearsal_options()
// (distribution.h). A value type; the defaults cost nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/processes/process_group.h"

namespace fitbench {

struct RehearsalOptions {
  // The algorithm of every collective (devices.allreduce): the gradient all-reduce, and
  // ModelParallel's all-gathers and all-reduces of activations.
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;
  // Relative speed per device in (0, 1], by device index (a ModelParallel device's flat mesh
  // index): a device with speed s makes each of its compute phases (forward, backward, update)
  // last 1/s of their measured time. Empty: every device at 1.
  std::vector<double> speed;
  LinkModel link;  // each collective's modeled latency and bandwidth cost
  // DataParallel shards the optimizer update (reduce-scatter, 1/N of the update per device,
  // all-gather) when the trainable variables hold at least this many floats and the rule is
  // element-wise; smaller models all-reduce and update every replica whole. Sharding trades one
  // collective for two: on this project's 2-core machine an extra synchronization costs a few
  // microseconds, and Adam updates ~3 floats per nanosecond, so below ~16k floats the second
  // collective costs more than the (N-1)/N of the update it saves. Not an experiment setting;
  // tests set 0 to shard any model.
  int64_t sharded_update_min_elements = 16384;
  // The processes the devices are spread over (null or one process: every device is a thread of
  // this one). With P processes, process p hosts devices p*N/P .. (p+1)*N/P - 1 on its threads
  // (under ModelParallel, in mesh order: whole rows by default, parts of rows when asked) and
  // exchanges with the others through HierarchicalCollectives; the link model is not applied.
  std::shared_ptr<ProcessGroup> processes;
  // DataParallel's BatchNormalization normalizes each device's shard by its own statistics and
  // every replica takes device 0's moving statistics after each step (devices.
  // batch_norm_statistics "per_device": PyTorch's DistributedDataParallel without SyncBatchNorm,
  // whose buffers are broadcast from rank 0). False: the global batch's statistics, as Keras's.
  bool per_device_batch_statistics = false;

  // The speeds of devices first .. first + count - 1 (a process's devices); empty when unset.
  std::vector<double> speeds_of(int first, int count) const {
    if (speed.empty()) return {};
    return std::vector<double>(speed.begin() + first, speed.begin() + first + count);
  }
};

}  // namespace fitbench
