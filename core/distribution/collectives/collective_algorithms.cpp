#include "core/distribution/collectives/collective_algorithms.h"

#include <array>

#include "core/field_info.h"

namespace fitbench {
namespace {

constexpr std::array<CollectiveAlgorithmInfo, 2> kAlgorithms{{
    {"ring", CollectiveAlgorithm::kRing,
     "Reduce-scatter then all-gather in N chunks, each device talking to its neighbours."},
    {"naive", CollectiveAlgorithm::kNaive,
     "Everything goes through device 0: reduce to it, then broadcast."},
}};

}  // namespace

std::span<const CollectiveAlgorithmInfo> collective_algorithms() { return kAlgorithms; }

const CollectiveAlgorithmInfo* find_collective_algorithm(std::string_view name) {
  for (const CollectiveAlgorithmInfo& a : kAlgorithms)
    if (a.name == name) return &a;
  return nullptr;
}

std::string collective_algorithm_choices() {
  return join_names(
      kAlgorithms,
      [](const CollectiveAlgorithmInfo& a) { return "\"" + std::string(a.name) + "\""; }, " or ");
}

}  // namespace fitbench
