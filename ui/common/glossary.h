// One or two plain sentences for each concept a learner meets in the workbench, used as tooltips
// by every panel and view so that a term is explained the same way everywhere. Constants only.
#pragma once

#include <QString>

namespace fitbench::glossary {

inline QString device() {
  return QStringLiteral(
      "A device is one processor that runs part of the training step. fitbench simulates CPU "
      "devices, each with its own worker thread, as JAX does with "
      "--xla_force_host_platform_device_count.");
}
inline QString shard() {
  return QStringLiteral(
      "A shard is the slice of the batch (or of a weight) that one device holds. DataParallel "
      "splits each batch into one contiguous shard per device; the first devices get one more row "
      "when the batch does not divide evenly.");
}
inline QString replica() {
  return QStringLiteral(
      "A replica is a full copy of the model's weights on one device. With DataParallel every "
      "device keeps a replica, and all replicas stay identical because they apply the same "
      "update.");
}
inline QString allReduce() {
  return QStringLiteral(
      "All-reduce combines every device's gradients into one sum that every device receives. The "
      "ring algorithm sends each device's data around a ring in pieces; the naive one sends "
      "everything to one device, which sends the sum back to all. For a larger model DataParallel "
      "splits it around the update: a reduce-scatter leaves each device the sum of its part, each "
      "device updates "
      "that part of the weights, and an all-gather hands every device the whole.");
}
inline QString mesh() {
  return QStringLiteral(
      "A device mesh arranges the devices in a grid with named axes, such as batch x model. The "
      "batch axis splits data; the model axis splits weights.");
}
inline QString layout() {
  return QStringLiteral(
      "A layout says how one weight is split over the mesh: for each dimension, the mesh axis it "
      "is "
      "split along, or nothing when every device holds that dimension whole.");
}
inline QString dataParallel() {
  return QStringLiteral(
      "DataParallel: every device holds the whole model and trains on its own shard of each batch; "
      "the gradients are all-reduced so one step equals one step on a single device.");
}
inline QString modelParallel() {
  return QStringLiteral(
      "ModelParallel: the weights themselves are split across the devices of a mesh by a layout "
      "map, so a model too large for one device can still train.");
}
inline QString straggler() {
  return QStringLiteral(
      "A straggler is a slower device. Every device waits for it at each all-reduce, so one slow "
      "device slows the whole step.");
}

}  // namespace fitbench::glossary
