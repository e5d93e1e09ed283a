#include "core/optimizers/optimizer_base.h"

#include <cassert>
#include <cmath>

namespace fitbench {

OptimizerBase::OptimizerBase(const OptimizerSpec& spec, double default_learning_rate)
    : learning_rate_(spec.learning_rate.value_or(default_learning_rate)),
      schedule_(spec.schedule),
      weight_decay_(spec.weight_decay),
      clipnorm_(spec.clipnorm),
      clipvalue_(spec.clipvalue),
      global_clipnorm_(spec.global_clipnorm) {}

// As Keras's build(), a second call keeps the slots made by the first.
void OptimizerBase::build(std::span<Matrix* const> variables) {
  if (built_) return;
  build_slots(variables);
  built_ = true;
}

double OptimizerBase::learning_rate() const {
  return schedule_ ? schedule_value(*schedule_, static_cast<double>(iterations_)) : learning_rate_;
}

void OptimizerBase::set_learning_rate(double lr) {
  schedule_.reset();
  learning_rate_ = lr;
}

// base_optimizer.py _clip_gradients, _clip_by_norm and clip_by_global_norm, in float32. At most
// one of the three is set (make_optimizer checks).
void OptimizerBase::clip_gradients(std::span<Matrix* const> gradients) const {
  if (clipnorm_ && *clipnorm_ > 0.0) {
    // Per variable: g * clipnorm / max(||g||, clipnorm).
    const float c = static_cast<float>(*clipnorm_);
    for (Matrix* g : gradients) {
      const float l2sum = g->squaredNorm();
      const float l2norm = l2sum > 0.0f ? std::sqrt(l2sum) : l2sum;
      const float denominator = std::max(l2norm, c);
      g->array() = g->array() * c / denominator;
    }
  } else if (global_clipnorm_ && *global_clipnorm_ > 0.0) {
    // All together: g * clip * min(1 / ||all||, 1 / clip); a non-finite norm makes every
    // gradient NaN, as in Keras.
    const float c = static_cast<float>(*global_clipnorm_);
    float squared = 0.0f;
    for (const Matrix* g : gradients) squared += g->squaredNorm();
    const float norm = std::sqrt(squared);
    const float scale = c * std::min(1.0f / norm, 1.0f / c) + (norm - norm);
    for (Matrix* g : gradients) g->array() *= scale;
  } else if (clipvalue_ && *clipvalue_ > 0.0) {
    const float v = static_cast<float>(*clipvalue_);
    for (Matrix* g : gradients) g->array() = g->array().max(-v).min(v);
  }
}

// base_optimizer.py apply / _backend_apply_gradients: clip, decay the weights, run the rule with
// the learning rate of this iteration, then count the iteration.
void OptimizerBase::apply(std::span<Matrix* const> variables, std::span<Matrix* const> gradients) {
  if (!built_) build(variables);
  assert(variables.size() == gradients.size());
  clip_gradients(gradients);
  Step step;
  step.learning_rate = static_cast<float>(learning_rate());
  step.weight_decay = static_cast<float>(weight_decay_.value_or(0.0));
  step.local_step = iterations_ + 1;
  for (size_t i = 0; i < variables.size(); ++i) {
    assert(variables[i]->rows() == gradients[i]->rows() &&
           variables[i]->cols() == gradients[i]->cols());
    update(i, *variables[i], *gradients[i], step);
  }
  ++iterations_;
}

}  // namespace fitbench
