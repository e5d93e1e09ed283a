// The all-reduce algorithms an experiment may name (devices.allreduce, --allreduce), as a
// registry: the name, the algorithm, a one-line description. parse_algorithm, the experiment
// reader and the window's Devices panel read it. Constant data; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "core/distribution/collectives/collectives.h"

namespace fitbench {

struct CollectiveAlgorithmInfo {
  std::string_view name;  // "ring"
  CollectiveAlgorithm algorithm;
  std::string_view description;
};

// Every algorithm, the default (ring) first.
std::span<const CollectiveAlgorithmInfo> collective_algorithms();
const CollectiveAlgorithmInfo* find_collective_algorithm(std::string_view name);
// "\"ring\" or \"naive\"": the names quoted, for messages.
std::string collective_algorithm_choices();

}  // namespace fitbench
