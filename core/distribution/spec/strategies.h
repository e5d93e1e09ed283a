// The distribution strategies an experiment may name, as a registry: Keras's class name, the
// command line's option name, and a one-line description. The CLI's --strategy, the window's
// Strategy menu and the run plan all read it, so a strategy is named in one place.
// Constant data; thread-safe.
#pragma once

#include <span>
#include <string>
#include <string_view>

namespace fitbench {

struct StrategyInfo {
  std::string_view class_name;   // Keras's: "DataParallel" ("" for no distribution)
  std::string_view option_name;  // the command line's: "data_parallel" ("none")
  std::string_view label;        // what a menu shows: "DataParallel", "Single device"
  std::string_view description;  // one line
  bool has_mesh = false;         // takes a device mesh and a layout map
};

// Every strategy, no distribution first.
std::span<const StrategyInfo> strategies();

// The strategy with this class name or option name, or null.
const StrategyInfo* find_strategy_by_class(std::string_view class_name);
const StrategyInfo* find_strategy_by_option(std::string_view option_name);

// "none, data_parallel or model_parallel": the option names for messages.
std::string strategy_option_names();

inline constexpr std::string_view kDataParallel = "DataParallel";
inline constexpr std::string_view kModelParallel = "ModelParallel";

}  // namespace fitbench
