#include "core/metrics/metric.h"

#include <cassert>
#include <cctype>
#include <map>
#include <optional>

#include "core/base/error.h"
#include "core/losses/loss_names.h"
#include "core/metrics/accuracy_metrics.h"
#include "core/metrics/confusion_metrics.h"
#include "core/metrics/regression_metrics.h"

namespace fitbench {
namespace {

std::string lowercase(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool is_one_of(const std::string& name, std::initializer_list<const char*> names) {
  for (const char* n : names) {
    if (name == n) return true;
  }
  return false;
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
  const std::optional<std::string> loss_name = canonical_loss_name(loss.name);
  const bool sparse_targets = loss_name && *loss_name == "sparse_categorical_crossentropy";
  const int64_t target_columns = sparse_targets ? 1 : output_units;

  // compile_utils.get_metric: "accuracy"/"acc" in any case picks the accuracy from the shapes and
  // keeps the identifier as the log key; every other string keeps its identifier too.
  const std::string lower = lowercase(name);
  if (lower == "accuracy" || lower == "acc") {
    if (output_units == 1) return std::make_unique<metrics::BinaryAccuracy>(key);
    if (target_columns == 1) return std::make_unique<metrics::SparseCategoricalAccuracy>(key);
    return std::make_unique<metrics::CategoricalAccuracy>(key);
  }
  if (is_one_of(name, {"binary_accuracy", "BinaryAccuracy"})) {
    return std::make_unique<metrics::BinaryAccuracy>(key);
  }
  if (is_one_of(name, {"categorical_accuracy", "CategoricalAccuracy"})) {
    return std::make_unique<metrics::CategoricalAccuracy>(key);
  }
  if (is_one_of(name, {"sparse_categorical_accuracy", "SparseCategoricalAccuracy"})) {
    if (target_columns != 1) {
      throw InputError(place, name +
                                  " needs one integer class label per sample (the targets of "
                                  "sparse_categorical_crossentropy), but the targets have " +
                                  std::to_string(target_columns) + " columns");
    }
    return std::make_unique<metrics::SparseCategoricalAccuracy>(key);
  }
  if (is_one_of(name, {"mean_squared_error", "MeanSquaredError", "mse", "MSE"})) {
    return std::make_unique<metrics::MeanSquaredError>(key);
  }
  if (is_one_of(name, {"mean_absolute_error", "MeanAbsoluteError", "mae", "MAE"})) {
    return std::make_unique<metrics::MeanAbsoluteError>(key);
  }
  const bool precision = is_one_of(name, {"precision", "Precision"});
  if (precision || is_one_of(name, {"recall", "Recall"})) {
    if (target_columns != output_units) {
      throw InputError(place, name + " needs one target column per output unit, but the " +
                                  std::to_string(output_units) +
                                  " outputs are trained on sparse class labels");
    }
    if (precision) return std::make_unique<metrics::Precision>(key);
    return std::make_unique<metrics::Recall>(key);
  }
  throw InputError(place, "unknown metric \"" + name +
                              "\"; expected accuracy, acc, binary_accuracy, "
                              "categorical_accuracy, sparse_categorical_accuracy, "
                              "mean_squared_error, mse, mean_absolute_error, mae, precision or "
                              "recall");
}

std::optional<bool> metric_improves_upward(const std::string& name) {
  const std::string lower = lowercase(name);
  if (lower == "accuracy" || lower == "acc" ||
      is_one_of(name, {"binary_accuracy", "BinaryAccuracy", "categorical_accuracy",
                       "CategoricalAccuracy", "sparse_categorical_accuracy",
                       "SparseCategoricalAccuracy", "precision", "Precision", "recall", "Recall"}))
    return true;
  if (is_one_of(name, {"mean_squared_error", "MeanSquaredError", "mse", "MSE",
                       "mean_absolute_error", "MeanAbsoluteError", "mae", "MAE"}))
    return false;
  return std::nullopt;
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
