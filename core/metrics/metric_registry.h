// The metrics compile() may name, as a registry: Keras's name, class name and aliases, the name
// the window lists, which way it improves, what targets it needs, and a one-line description.
// make_metric, the callbacks' "auto" mode and the window's metrics list read it. Constant data;
// thread-safe.
#pragma once

#include <span>
#include <string_view>

namespace fitbench {

// The targets a metric can be computed on.
enum class MetricTargets {
  kAny,
  kSparse,         // one integer class label per sample (sparse_categorical_accuracy)
  kColumnPerUnit,  // one target column per output unit: not sparse labels (precision, recall)
};

struct MetricInfo {
  std::string_view name;        // Keras's: "mean_squared_error"
  std::string_view class_name;  // "MeanSquaredError"; "" when Keras's class is another metric
  std::span<const std::string_view> aliases;  // "mse", "MSE"
  std::string_view listed;  // the name the window offers ("mse"; Keras logs it under that name)
  std::string_view description;
  bool improves_upward = true;  // Keras's metric._direction "up" (accuracies) or "down" (errors)
  MetricTargets targets = MetricTargets::kAny;
  bool any_case = false;  // the name and aliases match in any case ("ACC"), as Keras's accuracy
};

// Every metric, in the order the window lists them.
std::span<const MetricInfo> metric_classes();
// The entry whose name, class name or alias is `identifier`, or null.
const MetricInfo* find_metric(std::string_view identifier);

}  // namespace fitbench
