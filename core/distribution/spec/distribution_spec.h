// The devices and distribution an experiment asks for, as the experiment file and the CLI give
// them. Value types.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// The ranges of the device settings, the same in experiment files, on the command line and in the
// window, so that no value one of them accepts is changed by another: at most 64 devices; a
// device at least 1/100 of full speed; at most 100 ms of latency per message; a link of at least
// 10 MB/s (or unlimited) and at most 10 TB/s. Beyond them a run would take hours for nothing.
inline constexpr int kMaxDeviceCount = 64;
inline constexpr double kMinDeviceSpeed = 0.01;
inline constexpr double kMaxLinkLatencyUs = 100000.0;
inline constexpr double kMinLinkGbps = 0.01;
inline constexpr double kMaxLinkGbps = 10000.0;

struct DevicesSpec {
  std::string type = "cpu";  // only "cpu" devices are simulated
  std::optional<int> count;  // none: --devices, FITBENCH_CPU_DEVICES, XLA_FLAGS, else 1
  // Rehearsal knobs (fitbench's own; Keras has none): how the simulated hardware behaves, in real
  // time. The defaults cost nothing. Validated by rehearsal_options() (distribution.h).
  // Relative speed per device in [0.01, 1] (0.5: its forward, backward and update take twice as
  // long); one entry per device; empty: all 1.
  std::vector<double> speed;
  double link_latency_us = 0.0;  // microseconds added to every message of a collective, <= 10^5
  double link_gbps = 0.0;  // bandwidth per link in GB/s (10^9 bytes/s), 0.01-10^4; 0: unlimited
  std::string allreduce = "ring";  // gradient all-reduce algorithm: "ring" or "naive"
  // Whose statistics BatchNormalization normalizes by under DataParallel: "global" (the whole
  // batch's, summed over the devices, as Keras on JAX) or "per_device" (each device's shard, the
  // moving statistics device 0's: PyTorch's DistributedDataParallel without SyncBatchNorm, a
  // teaching contrast).
  std::string batch_norm_statistics = "global";
};

struct DistributionSpec {
  std::string class_name;               // "" (none), "DataParallel", "ModelParallel"
  std::vector<int> mesh_shape;          // ModelParallel, e.g. {2, 2}
  std::vector<std::string> axis_names;  // ModelParallel, e.g. {"batch", "model"}
  // ModelParallel: variable-path regex -> axes per dimension ("" for a replicated dimension).
  std::vector<std::pair<std::string, std::vector<std::string>>> layout_map;
  std::string batch_dim_name;  // ModelParallel; default: the first axis name
};

}  // namespace fitbench
