#include "core/optimizers/learning_rate_schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <sstream>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/optimizers/optimizer.h"

namespace fitbench {
namespace {

void require(bool ok, const std::string& place, const std::string& what, double got) {
  if (!ok) throw InputError(place, "must be " + what + ", got " + format_general(got));
}

// keras/src/optimizers/schedules/learning_rate_schedule.py ExponentialDecay:
// initial_learning_rate * decay_rate ^ (step / decay_steps), the exponent floored when staircase.
double exponential_decay(const ScheduleSpec& s, double step) {
  double p = step / s.decay_steps;
  if (s.staircase) p = std::floor(p);
  return s.initial_learning_rate * std::pow(s.decay_rate, p);
}

// learning_rate_schedule.py CosineDecay: a linear warmup from initial_learning_rate to
// warmup_target over warmup_steps, then target * ((1 - alpha) * 0.5 * (1 + cos(pi * t /
// decay_steps)) + alpha) with t = min(step - warmup_steps, decay_steps).
double cosine_decay(const ScheduleSpec& s, double step) {
  double from = s.initial_learning_rate;
  if (s.warmup_target) {
    step = std::min(step, s.decay_steps + s.warmup_steps);
    if (step < s.warmup_steps)
      return (*s.warmup_target - s.initial_learning_rate) * (step / s.warmup_steps) +
             s.initial_learning_rate;
    step -= s.warmup_steps;
    from = *s.warmup_target;
  } else {
    step = std::min(step, s.decay_steps);
  }
  const double cosine = 0.5 * (1.0 + std::cos(std::numbers::pi * (step / s.decay_steps)));
  return from * ((1.0 - s.alpha) * cosine + s.alpha);
}

// learning_rate_schedule.py PiecewiseConstantDecay: values[0] while step <= boundaries[0],
// values[i] while boundaries[i-1] < step <= boundaries[i], values.back() after the last boundary.
double piecewise_constant_decay(const ScheduleSpec& s, double step) {
  for (size_t i = 0; i < s.boundaries.size(); ++i)
    if (step <= s.boundaries[i]) return s.values[i];
  return s.values.back();
}

}  // namespace

void validate_schedule(const ScheduleSpec& s, const std::string& place) {
  // Keras's JSON form: {"class_name": ..., "config": {<the arguments>}}.
  const std::string name_place = place.empty() ? "class_name" : place + ".class_name";
  const std::string at = place.empty() ? "config." : place + ".config.";
  const bool exponential = s.class_name == "ExponentialDecay";
  const bool cosine = s.class_name == "CosineDecay";
  if (s.class_name == "PiecewiseConstantDecay") {
    if (s.boundaries.empty())
      throw InputError(at + "boundaries", "must list at least one step boundary");
    if (s.values.size() != s.boundaries.size() + 1)
      throw InputError(
          at + "values",
          "must have one more entry than boundaries: " +
              counted(static_cast<long long>(s.boundaries.size() + 1), "value") + " for " +
              counted(static_cast<long long>(s.boundaries.size()), "boundary", "boundaries") +
              ", got " + std::to_string(s.values.size()));
    for (size_t i = 0; i < s.boundaries.size(); ++i) {
      const std::string b = at + "boundaries[" + std::to_string(i) + "]";
      require(std::isfinite(s.boundaries[i]), b, "a finite number", s.boundaries[i]);
      if (i > 0)
        require(s.boundaries[i] > s.boundaries[i - 1], b,
                "greater than the previous boundary " + format_general(s.boundaries[i - 1]),
                s.boundaries[i]);
    }
    for (size_t i = 0; i < s.values.size(); ++i)
      require(std::isfinite(s.values[i]) && s.values[i] >= 0.0,
              at + "values[" + std::to_string(i) + "]", "a non-negative learning rate",
              s.values[i]);
    return;
  }
  if (!exponential && !cosine)
    throw InputError(name_place,
                     "unknown learning-rate schedule \"" + s.class_name +
                         "\"; expected ExponentialDecay, CosineDecay or PiecewiseConstantDecay");
  require(std::isfinite(s.initial_learning_rate) && s.initial_learning_rate >= 0.0,
          at + "initial_learning_rate", "a non-negative number", s.initial_learning_rate);
  require(std::isfinite(s.decay_steps) && s.decay_steps > 0.0, at + "decay_steps",
          "a positive number", s.decay_steps);
  if (exponential) {
    require(std::isfinite(s.decay_rate) && s.decay_rate > 0.0, at + "decay_rate",
            "a positive number", s.decay_rate);
    return;
  }
  require(s.alpha >= 0.0 && s.alpha <= 1.0, at + "alpha", "in [0, 1]", s.alpha);
  require(std::isfinite(s.warmup_steps) && s.warmup_steps >= 0.0, at + "warmup_steps",
          "a non-negative number", s.warmup_steps);
  if (s.warmup_target)
    require(std::isfinite(*s.warmup_target) && *s.warmup_target >= 0.0, at + "warmup_target",
            "a non-negative number", *s.warmup_target);
}

double schedule_value(const ScheduleSpec& schedule, double step) {
  if (schedule.class_name == "ExponentialDecay") return exponential_decay(schedule, step);
  if (schedule.class_name == "CosineDecay") return cosine_decay(schedule, step);
  const bool well_formed = schedule.class_name == "PiecewiseConstantDecay" &&
                           !schedule.boundaries.empty() &&
                           schedule.values.size() == schedule.boundaries.size() + 1;
  if (!well_formed) validate_schedule(schedule, "");  // throws: unknown class or bad lists
  return piecewise_constant_decay(schedule, step);
}

}  // namespace fitbench
