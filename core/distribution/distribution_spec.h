// The devices and distribution an experiment asks for, as the experiment file and the CLI give
// them. Value types.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fitbench {

struct DevicesSpec {
  std::string type = "cpu";  // only "cpu" devices are simulated
  std::optional<int> count;  // none: --devices, FITBENCH_CPU_DEVICES, XLA_FLAGS, else 1
  // Rehearsal knobs (fitbench's own; Keras has none): how the simulated hardware behaves, in real
  // time. The defaults cost nothing. Validated by rehearsal_options() (distribution.h).
  // Relative speed per device in (0, 1] (0.5: its forward, backward and update take twice as
  // long); one entry per device; empty: all 1.
  std::vector<double> speed;
  double link_latency_us = 0.0;    // microseconds added to every message of a collective
  double link_gbps = 0.0;          // bandwidth per link in GB/s (10^9 bytes/s); 0: unlimited
  std::string allreduce = "ring";  // gradient all-reduce algorithm: "ring" or "naive"
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
