// The losses compile() may name, as a registry: Keras's function name, class name and aliases
// (keras/src/losses/__init__.py), the config fields each takes with their defaults, what its
// targets look like and the activation its probabilities come from, and a one-line description.
// make_loss, the file reader and the window's loss menu and checks read it. Constant data;
// thread-safe.
#pragma once

#include <span>
#include <string_view>

#include "core/field_info.h"

namespace fitbench {

// What a loss's targets are.
enum class LossTargets {
  kBinary,  // one 0/1 column per output unit (binary_crossentropy)
  kOneHot,  // one-hot rows over the classes (categorical_crossentropy)
  kSparse,  // one integer class label per sample (sparse_categorical_crossentropy)
  kValues,  // real values, one column per output unit (the regression losses)
};

struct LossInfo {
  std::string_view name;                      // LossSpec::name: "mean_squared_error"
  std::string_view class_name;                // "MeanSquaredError"
  std::span<const std::string_view> aliases;  // "mse", "MSE"
  std::string_view description;
  std::span<const FieldInfo> fields;  // from_logits, delta
  LossTargets targets = LossTargets::kValues;
  std::string_view probabilities;  // the activation whose outputs it expects without
                                   // from_logits ("sigmoid", "softmax"); "" for none
};

// Every loss, in menu order.
std::span<const LossInfo> loss_classes();
// The entry whose name, class name or alias is `identifier` (case-sensitive, as in Keras), or
// null.
const LossInfo* find_loss(std::string_view identifier);

}  // namespace fitbench
