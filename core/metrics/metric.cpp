#include "core/metrics/metric.h"

#include <cassert>
#include <cctype>
#include <map>
#include <optional>

#include "core/base/error.h"
#include "core/field_info.h"
#include "core/losses/loss_names.h"
#include "core/losses/loss_registry.h"
#include "core/metrics/accuracy_metrics.h"
#include "core/metrics/confusion_metrics.h"
#include "core/metrics/metric_registry.h"
#include "core/metrics/regression_metrics.h"

namespace fitbench {
namespace {

bool is_lower_case(std::string_view s) {
  for (char c : s)
    if (c >= 'A' && c <= 'Z') return false;
  return true;
}

// "accuracy, acc, binary_accuracy, ..., recall or auc": every name and lower-case alias.
std::string metric_choices() {
  std::vector<std::string_view> names;
  for (const MetricInfo& m : metric_classes()) {
    names.push_back(m.name);
    for (std::string_view alias : m.aliases)
      if (is_lower_case(alias)) names.push_back(alias);
  }
  return join_names(
      names, [](std::string_view n) { return n; }, " or ");
}

}  // namespace

std::unique_ptr<Metric> make_metric(const std::string& name, const LossSpec& loss,
                                    int64_t output_units, const std::string& place,
                                    const std::string& key_or_empty) {
  assert(output_units >= 1);
  const std::string& key = key_or_empty.empty() ? name : key_or_empty;
  // fitbench's targets have one column per output unit, except for the sparse crossentropy's
  // (n, 1) class indices; Keras decides from these shapes (keras/src/trainers/compile_utils.py
  // is_binary_or_sparse_categorical).
  const LossInfo* loss_info = find_loss(loss.name);
  const bool sparse_targets = loss_info != nullptr && loss_info->targets == LossTargets::kSparse;
  const int64_t target_columns = sparse_targets ? 1 : output_units;

  // compile_utils.get_metric: "accuracy"/"acc" in any case picks the accuracy from the shapes and
  // keeps the identifier as the log key; every other string keeps its identifier too.
  const MetricInfo* info = find_metric(name);
  if (info == nullptr)
    throw InputError(place, "unknown metric \"" + name + "\"; expected " + metric_choices());
  if (info->targets == MetricTargets::kSparse && target_columns != 1) {
    throw InputError(place, name +
                                " needs one integer class label per sample (the targets of "
                                "sparse_categorical_crossentropy), but the targets have " +
                                std::to_string(target_columns) + " columns");
  }
  if (info->targets == MetricTargets::kColumnPerUnit && target_columns != output_units) {
    throw InputError(place, name + " needs one target column per output unit, but the " +
                                std::to_string(output_units) +
                                " outputs are trained on sparse class labels");
  }
  const std::string_view n = info->name;
  if (n == "accuracy") {
    if (output_units == 1) return std::make_unique<metrics::BinaryAccuracy>(key);
    if (target_columns == 1) return std::make_unique<metrics::SparseCategoricalAccuracy>(key);
    return std::make_unique<metrics::CategoricalAccuracy>(key);
  }
  if (n == "binary_accuracy") return std::make_unique<metrics::BinaryAccuracy>(key);
  if (n == "categorical_accuracy") return std::make_unique<metrics::CategoricalAccuracy>(key);
  if (n == "sparse_categorical_accuracy")
    return std::make_unique<metrics::SparseCategoricalAccuracy>(key);
  if (n == "top_k_categorical_accuracy")
    return std::make_unique<metrics::TopKCategoricalAccuracy>(key);
  if (n == "sparse_top_k_categorical_accuracy")
    return std::make_unique<metrics::SparseTopKCategoricalAccuracy>(key);
  if (n == "mean_squared_error") return std::make_unique<metrics::MeanSquaredError>(key);
  if (n == "mean_absolute_error") return std::make_unique<metrics::MeanAbsoluteError>(key);
  if (n == "precision") return std::make_unique<metrics::Precision>(key);
  if (n == "recall") return std::make_unique<metrics::Recall>(key);
  assert(n == "auc");
  return std::make_unique<metrics::Auc>(key);
}

std::optional<bool> metric_improves_upward(const std::string& name) {
  const MetricInfo* info = find_metric(name);
  if (info == nullptr) return std::nullopt;
  return info->improves_upward;
}

std::vector<std::string> metric_log_keys(const std::vector<std::string>& names) {
  std::vector<std::string> keys;
  std::map<std::string, int> uses;
  for (const std::string& name : names) {
    const int n = uses[name]++;
    keys.push_back(n == 0 ? name : name + "_" + std::to_string(n));
  }
  return keys;
}

}  // namespace fitbench
