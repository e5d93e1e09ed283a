#include "core/distribution/spec/strategies.h"

#include <array>

namespace fitbench {
namespace {

constexpr std::array<StrategyInfo, 3> kStrategies{{
    {"", "none", "Single device", "fit() runs on one device, as without keras.distribution.",
     false},
    {kDataParallel, "data_parallel", "DataParallel",
     "Every device holds a full replica and trains on a shard of each batch; gradients are "
     "all-reduced.",
     false},
    {kModelParallel, "model_parallel", "ModelParallel",
     "Variables are split over a batch x model device mesh by a layout map; each batch is split "
     "along the batch axis.",
     true},
}};

}  // namespace

std::span<const StrategyInfo> strategies() { return kStrategies; }

const StrategyInfo* find_strategy_by_class(std::string_view class_name) {
  for (const StrategyInfo& s : kStrategies)
    if (s.class_name == class_name) return &s;
  return nullptr;
}

const StrategyInfo* find_strategy_by_option(std::string_view option_name) {
  for (const StrategyInfo& s : kStrategies)
    if (s.option_name == option_name) return &s;
  return nullptr;
}

std::string strategy_option_names() {
  std::string out;
  for (size_t i = 0; i < kStrategies.size(); ++i) {
    if (i > 0) out += i + 1 == kStrategies.size() ? " or " : ", ";
    out += kStrategies[i].option_name;
  }
  return out;
}

}  // namespace fitbench
