#include "core/losses/loss.h"

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "core/base/error.h"
#include "core/losses/crossentropy.h"
#include "core/losses/loss_names.h"
#include "core/losses/loss_registry.h"
#include "core/losses/regression_losses.h"

namespace fitbench {
namespace {

bool is_crossentropy(const std::string& canonical) {
  const LossInfo* info = find_loss(canonical);
  return info != nullptr && find_field(info->fields, "from_logits") != nullptr;
}

}  // namespace

std::optional<std::string> canonical_loss_name(const std::string& identifier) {
  const LossInfo* info = find_loss(identifier);
  if (info == nullptr) return std::nullopt;
  return std::string(info->name);
}

std::unique_ptr<Loss> make_loss(const LossSpec& spec) {
  const std::optional<std::string> canonical = canonical_loss_name(spec.name);
  if (!canonical) {
    throw InputError("compile.loss",
                     "unknown loss \"" + spec.name + "\"; expected " +
                         join_names(
                             loss_classes(), [](const LossInfo& l) { return l.name; }, " or ") +
                         " (or a Keras alias such as \"mse\")");
  }
  if (spec.from_logits && !is_crossentropy(*canonical)) {
    throw InputError("compile.loss", *canonical + " has no from_logits argument");
  }
  if (*canonical == "binary_crossentropy") {
    return std::make_unique<losses::BinaryCrossentropy>(spec.from_logits);
  }
  if (*canonical == "categorical_crossentropy") {
    return std::make_unique<losses::CategoricalCrossentropy>(spec.from_logits);
  }
  if (*canonical == "sparse_categorical_crossentropy") {
    return std::make_unique<losses::SparseCategoricalCrossentropy>(spec.from_logits);
  }
  if (*canonical == "mean_squared_error") return std::make_unique<losses::MeanSquaredError>();
  if (*canonical == "mean_absolute_error") return std::make_unique<losses::MeanAbsoluteError>();
  if (!(std::isfinite(spec.delta) && spec.delta > 0.0)) {
    std::ostringstream out;
    out << "huber's delta must be a positive number, got " << spec.delta;
    throw InputError("compile.loss", out.str());
  }
  return std::make_unique<losses::Huber>(spec.delta);
}

}  // namespace fitbench
