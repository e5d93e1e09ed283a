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
