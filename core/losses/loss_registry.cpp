#include "core/losses/loss_registry.h"

#include <array>

namespace fitbench {
namespace {

constexpr FieldInfo kFromLogits{
    .key = "from_logits",
    .type = FieldType::kBool,
    .number = 0,
    .description = "The model outputs raw scores; the loss applies sigmoid or softmax itself."};
constexpr std::array<FieldInfo, 1> kCrossentropyFields{kFromLogits};
constexpr std::array<FieldInfo, 1> kHuberFields{{
    {.key = "delta",
     .number = 1.0,
     .description = "Errors smaller than delta are squared, larger ones count linearly.",
     .lo = 1e-9,
     .hi = 1e6},
}};

constexpr std::array<std::string_view, 2> kBce{"bce", "BCE"};
// "cce" is fitbench's own short name, accepted since its first release.
constexpr std::array<std::string_view, 1> kCce{"cce"};
constexpr std::array<std::string_view, 2> kMse{"mse", "MSE"};
constexpr std::array<std::string_view, 2> kMae{"mae", "MAE"};

constexpr std::array<LossInfo, 6> kLosses{{
    {"binary_crossentropy", "BinaryCrossentropy", kBce,
     "Crossentropy of independent yes/no labels, one per output unit.", kCrossentropyFields,
     LossTargets::kBinary, "sigmoid"},
    {"categorical_crossentropy", "CategoricalCrossentropy", kCce,
     "Crossentropy of one-hot class labels.", kCrossentropyFields, LossTargets::kOneHot, "softmax"},
    {"sparse_categorical_crossentropy",
     "SparseCategoricalCrossentropy",
     {},
     "Crossentropy of integer class labels.",
     kCrossentropyFields,
     LossTargets::kSparse,
     "softmax"},
    {"mean_squared_error",
     "MeanSquaredError",
     kMse,
     "The mean of the squared errors.",
     {},
     LossTargets::kValues,
     ""},
    {"mean_absolute_error",
     "MeanAbsoluteError",
     kMae,
     "The mean of the absolute errors.",
     {},
     LossTargets::kValues,
     ""},
    {"huber",
     "Huber",
     {},
     "Squared error for small errors, absolute error for large ones.",
     kHuberFields,
     LossTargets::kValues,
     ""},
}};

}  // namespace

std::span<const LossInfo> loss_classes() { return kLosses; }

const LossInfo* find_loss(std::string_view identifier) {
  for (const LossInfo& l : kLosses) {
    if (identifier == l.name || identifier == l.class_name) return &l;
    for (std::string_view alias : l.aliases)
      if (identifier == alias) return &l;
  }
  return nullptr;
}

}  // namespace fitbench
