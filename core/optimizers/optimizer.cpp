#include "core/optimizers/optimizer.h"

#include <cctype>
#include <cmath>
#include <optional>
#include <sstream>
#include <utility>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/optimizers/adagrad.h"
#include "core/optimizers/adam.h"
#include "core/optimizers/learning_rate_schedule.h"
#include "core/optimizers/optimizer_registry.h"
#include "core/optimizers/rmsprop.h"
#include "core/optimizers/sgd.h"

namespace fitbench {
namespace {

// Checks `ok`; otherwise throws InputError(place.field, "must be <what>, got <value>").
void require(bool ok, const std::string& place, const char* field, const char* what, double got) {
  if (!ok)
    throw InputError(place + "." + field,
                     std::string("must be ") + what + ", got " + format_general(got));
}

void require_unit_interval(double x, const std::string& place, const char* field) {
  require(x >= 0.0 && x <= 1.0, place, field, "in [0, 1]", x);
}
void require_beta(double x, const std::string& place, const char* field) {
  require(x >= 0.0 && x < 1.0, place, field, "in [0, 1)", x);
}
void require_epsilon(double x, const std::string& place) {
  require(std::isfinite(x) && x > 0.0, place, "epsilon", "a positive number", x);
}

// base_optimizer.py __init__: at most one of clipnorm, clipvalue and global_clipnorm; the
// clipping thresholds and the weight decay must be positive / non-negative numbers.
void validate_common(const OptimizerSpec& spec, const std::string& place) {
  if (spec.learning_rate && !spec.schedule)
    require(std::isfinite(*spec.learning_rate) && *spec.learning_rate >= 0.0, place,
            "learning_rate", "a non-negative number", *spec.learning_rate);
  if (spec.schedule) validate_schedule(*spec.schedule, place + ".learning_rate");
  if (spec.weight_decay)
    require(std::isfinite(*spec.weight_decay) && *spec.weight_decay >= 0.0, place, "weight_decay",
            "a non-negative number", *spec.weight_decay);
  const std::pair<const char*, const std::optional<double>*> clips[] = {
      {"clipnorm", &spec.clipnorm},
      {"clipvalue", &spec.clipvalue},
      {"global_clipnorm", &spec.global_clipnorm}};
  const char* first = nullptr;
  for (const auto& [field, value] : clips) {
    if (!value->has_value()) continue;
    require(std::isfinite(**value) && **value > 0.0, place, field, "a positive number", **value);
    if (first)
      throw InputError(place + "." + field,
                       std::string("cannot be set together with ") + first +
                           "; only one of clipnorm, clipvalue and global_clipnorm can be set");
    first = field;
  }
}

}  // namespace

std::unique_ptr<Optimizer> make_optimizer(const OptimizerSpec& spec, const std::string& place) {
  const OptimizerInfo* info = find_optimizer(spec.class_name);
  if (info == nullptr)
    throw InputError(
        place + ".class_name",
        "unknown optimizer \"" + spec.class_name + "\"; expected one of " +
            join_names(optimizers(), [](const OptimizerInfo& o) { return o.class_name; }));
  const std::string_view name = info->class_name;
  validate_common(spec, place);
  if (name == "SGD") {
    require_unit_interval(spec.momentum, place, "momentum");
    return std::make_unique<SGD>(spec);
  }
  if (name == "Adam" || name == "AdamW") {
    require_beta(spec.beta_1, place, "beta_1");
    require_beta(spec.beta_2, place, "beta_2");
    require_epsilon(spec.epsilon, place);
    if (name == "Adam") return std::make_unique<Adam>(spec);
    return std::make_unique<AdamW>(spec);
  }
  if (name == "RMSprop") {
    require_beta(spec.rho, place, "rho");
    require_unit_interval(spec.momentum, place, "momentum");
    require_epsilon(spec.epsilon, place);
    return std::make_unique<RMSprop>(spec);
  }
  require(std::isfinite(spec.initial_accumulator_value) && spec.initial_accumulator_value >= 0.0,
          place, "initial_accumulator_value", "a non-negative number",
          spec.initial_accumulator_value);
  require_epsilon(spec.epsilon, place);
  return std::make_unique<Adagrad>(spec);
}

}  // namespace fitbench
