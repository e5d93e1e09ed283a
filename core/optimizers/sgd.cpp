#include "core/optimizers/sgd.h"

namespace fitbench {

SGD::SGD(const OptimizerSpec& spec)
    : OptimizerBase(spec, 0.01),
      momentum_(static_cast<float>(spec.momentum)),
      nesterov_(spec.nesterov) {}

void SGD::build_slots(std::span<Matrix* const> variables) {
  if (momentum_ == 0.0f) return;
  for (size_t i = 0; i < variables.size(); ++i) momentums_.push_back(new_slot(i, *variables[i]));
}

// keras/src/optimizers/sgd.py: m = m * momentum - g * lr; w += m (Nesterov: w += m * momentum -
// g * lr); without momentum w -= g * lr.
void SGD::update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step,
                 Index begin, Index end) {
  const float lr = step.learning_rate;
  const float mu = momentum_;
  for_each_block(begin, end, [&](Index o, Index n) {
    ArrayMap w = block(variable, o, n);
    const ConstArrayMap g = block(gradient, o, n);
    decay_block(w, step);
    if (momentums_.empty()) {
      w -= g * lr;
      return;
    }
    ArrayMap m = slot_block(momentums_[index], index, o, n);
    m = m * mu - g * lr;
    if (nesterov_)
      w += m * mu - g * lr;
    else
      w += m;
  });
}

std::vector<const std::vector<Matrix>*> SGD::slots() const { return {&momentums_}; }

}  // namespace fitbench
