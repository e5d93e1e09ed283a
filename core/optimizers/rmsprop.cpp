#include "core/optimizers/rmsprop.h"

namespace fitbench {

RMSprop::RMSprop(const OptimizerSpec& spec)
    : OptimizerBase(spec, 0.001),
      rho_(static_cast<float>(spec.rho)),
      one_minus_rho_(static_cast<float>(1.0 - spec.rho)),
      momentum_(static_cast<float>(spec.momentum)),
      epsilon_(static_cast<float>(spec.epsilon)),
      centered_(spec.centered) {}

void RMSprop::build_slots(std::span<Matrix* const> variables) {
  for (size_t i = 0; i < variables.size(); ++i) {
    velocities_.push_back(new_slot(i, *variables[i]));
    if (momentum_ > 0.0f) momentums_.push_back(new_slot(i, *variables[i]));
    if (centered_) average_gradients_.push_back(new_slot(i, *variables[i]));
  }
}

// keras/src/optimizers/rmsprop.py (Hinton 2012): v = rho * v + (1 - rho) * g^2; centered:
// a = rho * a + (1 - rho) * g and the denominator is v - a^2 + eps, else v + eps;
// increment = lr * g / sqrt(denominator); momentum: m = momentum * m + increment, w -= m;
// otherwise w -= increment.
void RMSprop::update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step,
                     Index begin, Index end) {
  const float lr = step.learning_rate;
  const float rho = rho_;
  const float one_minus_rho = one_minus_rho_;
  const float mu = momentum_;
  const float eps = epsilon_;
  const bool use_momentum = !momentums_.empty();
  for_each_block(begin, end, [&](Index o, Index n) {
    ArrayMap w = block(variable, o, n);
    const ConstArrayMap g = block(gradient, o, n);
    ArrayMap v = slot_block(velocities_[index], index, o, n);
    decay_block(w, step);
    v = rho * v + one_minus_rho * g.square();
    if (centered_) {
      ArrayMap a = slot_block(average_gradients_[index], index, o, n);
      a = rho * a + one_minus_rho * g;
      if (use_momentum) {
        ArrayMap m = slot_block(momentums_[index], index, o, n);
        m = mu * m + lr * g / (v - a.square() + eps).sqrt();
        w -= m;
      } else {
        w -= lr * g / (v - a.square() + eps).sqrt();
      }
    } else if (use_momentum) {
      ArrayMap m = slot_block(momentums_[index], index, o, n);
      m = mu * m + lr * g / (v + eps).sqrt();
      w -= m;
    } else {
      w -= lr * g / (v + eps).sqrt();
    }
  });
}

std::vector<const std::vector<Matrix>*> RMSprop::slots() const {
  return {&velocities_, &momentums_, &average_gradients_};
}

}  // namespace fitbench
