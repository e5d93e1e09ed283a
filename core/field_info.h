// One config field of something an experiment may name (a layer's units, an optimizer's beta_1):
// Keras's argument name, its type, default, range and a one-line description. The registries
// (core/nn/layer_registry.h, core/optimizers/optimizer_registry.h, ...) hold constant tables of
// them; the window builds its editors from them. Constant data; thread-safe.
#pragma once

#include <limits>
#include <span>
#include <string>
#include <string_view>

namespace fitbench {

enum class FieldType {
  kInt,          // an integer in [lo, hi]
  kFloat,        // a number in [lo, hi]
  kBool,         // true or false (`number` 1 or 0)
  kString,       // free text
  kChoice,       // one of the names of the registry `choices` names ("activation", ...)
  kSeed,         // null or a non-negative integer
  kInitializer,  // an initializer (core/nn/initializer_registry.h) with its own fields
  kRegularizer,  // keras.regularizers.L1L2 factors (l1, l2)
  kShape,        // a list of positive integers
  kSchedule,     // a learning-rate schedule (core/optimizers/optimizer_registry.h)
};

struct FieldInfo {
  std::string_view key;  // Keras's argument name: "units", "beta_1"
  FieldType type = FieldType::kFloat;
  double number = 0.0;           // the default of kInt, kFloat and kBool (1 = true)
  std::string_view text = {};    // the default of kString, kChoice, kInitializer; "" = none
  std::string_view description;  // one line
  double lo = -std::numeric_limits<double>::max();  // kInt, kFloat: the smallest value
  double hi = std::numeric_limits<double>::max();   // kInt, kFloat: the largest value
  std::string_view choices = {};                    // kChoice: "activation", "initializer", ...
  bool optional = false;        // may be null (no value): then `number` is only a suggestion
  std::string_view start = {};  // what a new one made in the window starts at, when not the
                                // default ("8" units, "relu"); "" = the default
};

// The field named `key`, or null.
constexpr const FieldInfo* find_field(std::span<const FieldInfo> fields, std::string_view key) {
  for (const FieldInfo& f : fields)
    if (f.key == key) return &f;
  return nullptr;
}

// "a, b, c" (or "a, b or c" with `last` " or "): names for messages.
template <typename Range, typename Name>
std::string join_names(const Range& items, Name name, std::string_view last = ", ") {
  std::string out;
  size_t i = 0;
  const size_t n = std::size(items);
  for (const auto& item : items) {
    if (i > 0) out += i + 1 == n ? last : std::string_view(", ");
    out += name(item);
    ++i;
  }
  return out;
}

}  // namespace fitbench
