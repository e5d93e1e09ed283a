#include "core/optimizers/adam.h"

#include <cmath>

namespace fitbench {
namespace {

OptimizerSpec with_default_weight_decay(OptimizerSpec spec) {
  if (!spec.weight_decay) spec.weight_decay = 0.004;
  return spec;
}

}  // namespace

Adam::Adam(const OptimizerSpec& spec) : Adam(spec, false) {}

Adam::Adam(const OptimizerSpec& spec, bool decoupled_weight_decay)
    : OptimizerBase(decoupled_weight_decay ? with_default_weight_decay(spec) : spec, 0.001),
      beta_1_(spec.beta_1),
      beta_2_(spec.beta_2),
      epsilon_(static_cast<float>(spec.epsilon)),
      amsgrad_(spec.amsgrad) {}

void Adam::build_slots(std::span<Matrix* const> variables) {
  for (size_t i = 0; i < variables.size(); ++i) {
    momentums_.push_back(new_slot(i, *variables[i]));
    velocities_.push_back(new_slot(i, *variables[i]));
    if (amsgrad_) velocity_hats_.push_back(new_slot(i, *variables[i]));
  }
}

// keras/src/optimizers/adam.py (Kingma & Ba 2014): t = iterations + 1,
// alpha = lr * sqrt(1 - beta_2^t) / (1 - beta_1^t), m += (g - m) * (1 - beta_1),
// v += (g^2 - v) * (1 - beta_2), [AMSGrad: v_hat = max(v_hat, v)], w -= m * alpha / (sqrt(v) +
// eps).
void Adam::update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step,
                  Index begin, Index end) {
  const double t = static_cast<double>(step.local_step);
  const float alpha =
      static_cast<float>(static_cast<double>(step.learning_rate) *
                         std::sqrt(1.0 - std::pow(beta_2_, t)) / (1.0 - std::pow(beta_1_, t)));
  const float one_minus_beta_1 = static_cast<float>(1.0 - beta_1_);
  const float one_minus_beta_2 = static_cast<float>(1.0 - beta_2_);
  const float eps = epsilon_;
  for_each_block(begin, end, [&](Index o, Index n) {
    ArrayMap w = block(variable, o, n);
    const ConstArrayMap g = block(gradient, o, n);
    ArrayMap m = slot_block(momentums_[index], index, o, n);
    ArrayMap v = slot_block(velocities_[index], index, o, n);
    decay_block(w, step);
    m += (g - m) * one_minus_beta_1;
    v += (g.square() - v) * one_minus_beta_2;
    if (amsgrad_) {
      ArrayMap v_hat = slot_block(velocity_hats_[index], index, o, n);
      v_hat = v_hat.max(v);
      w -= m * alpha / (v_hat.sqrt() + eps);
    } else {
      w -= m * alpha / (v.sqrt() + eps);
    }
  });
}

std::vector<const std::vector<Matrix>*> Adam::slots() const {
  return {&momentums_, &velocities_, &velocity_hats_};
}

}  // namespace fitbench
