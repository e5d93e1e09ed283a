#include "core/optimizers/optimizer_registry.h"

#include <array>

namespace fitbench {
namespace {

// keras/src/optimizers/{sgd,adam,adamw,rmsprop,adagrad}.py.
constexpr double kBetaMax = 0.999999999;
constexpr OptimizerField kEpsilon{{.key = "epsilon",
                                   .number = 1e-7,
                                   .description = "Added to the denominator so that it is never "
                                                  "zero.",
                                   .lo = 0.0,
                                   .hi = 1.0},
                                  &OptimizerSpec::epsilon};
constexpr OptimizerField kMomentum{{.key = "momentum",
                                    .number = 0.0,
                                    .description = "Keeps a running velocity of past updates; 0 = "
                                                   "plain gradient steps.",
                                    .lo = 0.0,
                                    .hi = 1.0},
                                   &OptimizerSpec::momentum};

constexpr std::array<OptimizerField, 2> kSgdFields{{
    kMomentum,
    {{.key = "nesterov",
      .type = FieldType::kBool,
      .number = 0,
      .description = "Nesterov momentum."},
     nullptr,
     &OptimizerSpec::nesterov},
}};
constexpr std::array<OptimizerField, 4> kAdamFields{{
    {{.key = "beta_1",
      .number = 0.9,
      .description = "Decay rate of the running mean of gradients.",
      .lo = 0.0,
      .hi = kBetaMax},
     &OptimizerSpec::beta_1},
    {{.key = "beta_2",
      .number = 0.999,
      .description = "Decay rate of the running mean of squared gradients.",
      .lo = 0.0,
      .hi = kBetaMax},
     &OptimizerSpec::beta_2},
    kEpsilon,
    {{.key = "amsgrad",
      .type = FieldType::kBool,
      .number = 0,
      .description = "Divide by the largest squared-gradient mean seen so far."},
     nullptr,
     &OptimizerSpec::amsgrad},
}};
constexpr std::array<OptimizerField, 4> kRmspropFields{{
    {{.key = "rho",
      .number = 0.9,
      .description = "Decay rate of the running mean of squared gradients.",
      .lo = 0.0,
      .hi = kBetaMax},
     &OptimizerSpec::rho},
    kMomentum,
    kEpsilon,
    {{.key = "centered",
      .type = FieldType::kBool,
      .number = 0,
      .description = "Divide by the estimated variance of the gradients instead of their mean "
                     "square."},
     nullptr,
     &OptimizerSpec::centered},
}};
constexpr std::array<OptimizerField, 2> kAdagradFields{{
    {{.key = "initial_accumulator_value",
      .number = 0.1,
      .description = "The starting value of the sum of squared gradients.",
      .lo = 0.0,
      .hi = 1000.0},
     &OptimizerSpec::initial_accumulator_value},
    kEpsilon,
}};

// Slot variables as Keras's optimizers create them in build().
int sgd_slots(const OptimizerSpec& o) { return o.momentum > 0.0 ? 1 : 0; }
int adam_slots(const OptimizerSpec& o) { return o.amsgrad ? 3 : 2; }
int rmsprop_slots(const OptimizerSpec& o) {
  return 1 + (o.momentum > 0.0 ? 1 : 0) + (o.centered ? 1 : 0);
}
int adagrad_slots(const OptimizerSpec&) { return 1; }

constexpr std::array<OptimizerInfo, 5> kOptimizers{{
    {"SGD", "Gradient descent, with optional (Nesterov) momentum.", 0.01, 0.0, kSgdFields,
     sgd_slots},
    {"Adam", "Adaptive moments: running means of gradients and of their squares.", 0.001, 0.0,
     kAdamFields, adam_slots},
    {"AdamW", "Adam with decoupled weight decay.", 0.001, 0.004, kAdamFields, adam_slots},
    {"RMSprop", "Divides by a running mean of squared gradients.", 0.001, 0.0, kRmspropFields,
     rmsprop_slots},
    {"Adagrad", "Divides by the root of the sum of all squared gradients.", 0.001, 0.0,
     kAdagradFields, adagrad_slots},
}};

// keras/src/optimizers/base_optimizer.py __init__.
constexpr std::array<FieldInfo, 5> kCommonFields{{
    {.key = "learning_rate",
     .type = FieldType::kSchedule,
     .description = "The step size of each update, or a learning-rate schedule.",
     .lo = 0.0,
     .optional = true},
    {.key = "weight_decay",
     .description = "Each step shrinks the weights by weight_decay x "
                    "learning rate.",
     .lo = 0.0,
     .optional = true},
    {.key = "clipnorm",
     .description = "Clip each weight's gradient to this norm.",
     .lo = 0.0,
     .optional = true},
    {.key = "global_clipnorm",
     .description = "Clip all gradients together to this joint norm.",
     .lo = 0.0,
     .optional = true},
    {.key = "clipvalue",
     .description = "Clip every gradient element into [-value, value].",
     .lo = 0.0,
     .optional = true},
}};

// keras/src/optimizers/schedules/learning_rate_schedule.py.
constexpr FieldInfo kInitialRate{.key = "initial_learning_rate",
                                 .number = 0.01,
                                 .description = "The learning rate at step 0.",
                                 .lo = 0.0};
constexpr FieldInfo kDecaySteps{
    .key = "decay_steps", .number = 1.0, .description = "The decay period in steps.", .lo = 0.0};
constexpr FieldInfo kScheduleName{
    .key = "name", .type = FieldType::kString, .description = "The schedule's name."};
// In the order the file reader lists them in messages.
constexpr std::array<FieldInfo, 5> kExponentialFields{{
    kInitialRate,
    kDecaySteps,
    kScheduleName,
    {.key = "decay_rate", .number = 0.96, .description = "The factor per decay period.", .lo = 0.0},
    {.key = "staircase",
     .type = FieldType::kBool,
     .number = 0,
     .description = "Decay in whole periods (a step function)."},
}};
constexpr std::array<FieldInfo, 6> kCosineFields{{
    kInitialRate,
    kDecaySteps,
    kScheduleName,
    {.key = "alpha",
     .number = 0.0,
     .description = "The final rate as a fraction of the peak.",
     .lo = 0.0,
     .hi = 1.0},
    {.key = "warmup_target",
     .description = "The peak rate after the warm-up; null: none.",
     .lo = 0.0,
     .optional = true},
    {.key = "warmup_steps",
     .number = 0.0,
     .description = "Steps of the linear warm-up.",
     .lo = 0.0},
}};
constexpr std::array<FieldInfo, 3> kPiecewiseFields{{
    {.key = "boundaries",
     .type = FieldType::kShape,
     .description = "The steps where the value changes."},
    {.key = "values",
     .type = FieldType::kShape,
     .description = "The value before, between and after the boundaries."},
    kScheduleName,
}};

constexpr std::array<ScheduleInfo, 3> kSchedules{{
    {"ExponentialDecay", "initial_learning_rate * decay_rate ^ (step / decay_steps).",
     kExponentialFields, ScheduleShape::kExponential},
    {"CosineDecay", "A cosine from the (warmed-up) peak down to alpha times it.", kCosineFields,
     ScheduleShape::kCosine},
    {"PiecewiseConstantDecay", "Constant values between step boundaries.", kPiecewiseFields,
     ScheduleShape::kPiecewise},
}};

// `name` is `class_name` in lower case ("adam"), the alias Keras's optimizers.get() accepts.
bool is_lower_case_of(std::string_view name, std::string_view class_name) {
  if (name.size() != class_name.size()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = class_name[i];
    if (name[i] != (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c)) return false;
  }
  return true;
}

}  // namespace

std::span<const OptimizerInfo> optimizers() { return kOptimizers; }

const OptimizerInfo* find_optimizer(std::string_view name) {
  for (const OptimizerInfo& o : kOptimizers)
    if (name == o.class_name || is_lower_case_of(name, o.class_name)) return &o;
  return nullptr;
}

std::span<const FieldInfo> common_optimizer_fields() { return kCommonFields; }

std::span<const ScheduleInfo> schedules() { return kSchedules; }

const ScheduleInfo* find_schedule(std::string_view class_name) {
  for (const ScheduleInfo& s : kSchedules)
    if (s.class_name == class_name) return &s;
  return nullptr;
}

}  // namespace fitbench
