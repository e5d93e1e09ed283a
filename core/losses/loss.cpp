#include "core/losses/loss.h"

#include <array>
#include <cmath>
#include <sstream>
#include <utility>

#include "core/base/error.h"
#include "core/losses/crossentropy.h"
#include "core/losses/loss_names.h"
#include "core/losses/regression_losses.h"

namespace fitbench {
namespace {

// Identifier -> canonical name. Keras 3 accepts a loss's function name, its class name and the
// aliases bce/BCE, mse/MSE, mae/MAE (keras/src/losses/__init__.py); "cce" is accepted as well.
constexpr std::array<std::pair<const char*, const char*>, 19> kIdentifiers = {{
    {"binary_crossentropy", "binary_crossentropy"},
    {"BinaryCrossentropy", "binary_crossentropy"},
    {"bce", "binary_crossentropy"},
    {"BCE", "binary_crossentropy"},
    {"categorical_crossentropy", "categorical_crossentropy"},
    {"CategoricalCrossentropy", "categorical_crossentropy"},
    {"cce", "categorical_crossentropy"},
    {"sparse_categorical_crossentropy", "sparse_categorical_crossentropy"},
    {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"},
    {"mean_squared_error", "mean_squared_error"},
    {"MeanSquaredError", "mean_squared_error"},
    {"mse", "mean_squared_error"},
    {"MSE", "mean_squared_error"},
    {"mean_absolute_error", "mean_absolute_error"},
    {"MeanAbsoluteError", "mean_absolute_error"},
    {"mae", "mean_absolute_error"},
    {"MAE", "mean_absolute_error"},
    {"huber", "huber"},
    {"Huber", "huber"},
}};

bool is_crossentropy(const std::string& canonical) {
  return canonical == "binary_crossentropy" || canonical == "categorical_crossentropy" ||
         canonical == "sparse_categorical_crossentropy";
}

}  // namespace

std::optional<std::string> canonical_loss_name(const std::string& identifier) {
  for (const auto& [id, canonical] : kIdentifiers) {
    if (identifier == id) return std::string(canonical);
  }
  return std::nullopt;
}

std::unique_ptr<Loss> make_loss(const LossSpec& spec) {
  const std::optional<std::string> canonical = canonical_loss_name(spec.name);
  if (!canonical) {
    throw InputError("compile.loss",
                     "unknown loss \"" + spec.name +
                         "\"; expected binary_crossentropy, categorical_crossentropy, "
                         "sparse_categorical_crossentropy, mean_squared_error, "
                         "mean_absolute_error or huber (or a Keras alias such as \"mse\")");
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
