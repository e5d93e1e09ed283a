// How the simulated hardware behaves under a distributed executor (DataParallel, ModelParallel):
// the rehearsal knobs of an experiment's devices section, validated by rehearsal_options()
// (distribution.h). A value type; the defaults cost nothing.
#pragma once

#include <vector>

#include "core/distribution/collectives.h"

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
};

}  // namespace fitbench
