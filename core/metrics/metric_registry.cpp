#include "core/metrics/metric_registry.h"

#include <array>

namespace fitbench {
namespace {

// keras/src/metrics/__init__.py and keras/src/trainers/compile_utils.py get_metric.
constexpr std::array<std::string_view, 1> kAcc{"acc"};
constexpr std::array<std::string_view, 2> kMseMetric{"mse", "MSE"};
constexpr std::array<std::string_view, 2> kMaeMetric{"mae", "MAE"};

constexpr std::array<MetricInfo, 11> kMetrics{{
    {"accuracy", "", kAcc, "accuracy",
     "Binary, sparse categorical or categorical accuracy, chosen from the loss and output width.",
     true, MetricTargets::kAny, true},
    {"binary_accuracy",
     "BinaryAccuracy",
     {},
     "binary_accuracy",
     "How often the output rounded at 0.5 equals the label.",
     true},
    {"categorical_accuracy",
     "CategoricalAccuracy",
     {},
     "categorical_accuracy",
     "How often the largest output is the one-hot label's class.",
     true},
    {"sparse_categorical_accuracy",
     "SparseCategoricalAccuracy",
     {},
     "sparse_categorical_accuracy",
     "How often the largest output is the integer label's class.",
     true,
     MetricTargets::kSparse},
    {"top_k_categorical_accuracy",
     "TopKCategoricalAccuracy",
     {},
     "top_k_categorical_accuracy",
     "How often the one-hot label's class is among the 5 largest outputs.",
     true,
     MetricTargets::kColumnPerUnit},
    {"sparse_top_k_categorical_accuracy",
     "SparseTopKCategoricalAccuracy",
     {},
     "sparse_top_k_categorical_accuracy",
     "How often the integer label's class is among the 5 largest outputs.",
     true,
     MetricTargets::kSparse},
    {"mean_squared_error", "MeanSquaredError", kMseMetric, "mse", "The mean of the squared errors.",
     false},
    {"mean_absolute_error", "MeanAbsoluteError", kMaeMetric, "mae",
     "The mean of the absolute errors.", false},
    {"precision",
     "Precision",
     {},
     "precision",
     "Of the outputs above 0.5, the fraction whose label is 1.",
     true,
     MetricTargets::kColumnPerUnit},
    {"recall",
     "Recall",
     {},
     "recall",
     "Of the labels 1, the fraction whose output is above 0.5.",
     true,
     MetricTargets::kColumnPerUnit},
    {"auc",
     "AUC",
     {},
     "auc",
     "Area under the ROC curve: how well the outputs rank labels 1 above labels 0.",
     true,
     MetricTargets::kColumnPerUnit},
}};

constexpr char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool same(std::string_view a, std::string_view b, bool any_case) {
  if (!any_case) return a == b;
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (lower(a[i]) != lower(b[i])) return false;
  return true;
}

}  // namespace

std::span<const MetricInfo> metric_classes() { return kMetrics; }

const MetricInfo* find_metric(std::string_view identifier) {
  if (identifier.empty()) return nullptr;
  for (const MetricInfo& m : kMetrics) {
    if (same(identifier, m.name, m.any_case) || identifier == m.class_name) return &m;
    for (std::string_view alias : m.aliases)
      if (same(identifier, alias, m.any_case)) return &m;
  }
  return nullptr;
}

}  // namespace fitbench
