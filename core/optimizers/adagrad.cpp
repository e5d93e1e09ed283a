#include "core/optimizers/adagrad.h"

namespace fitbench {

Adagrad::Adagrad(const OptimizerSpec& spec)
    : OptimizerBase(spec, 0.001),
      initial_accumulator_value_(static_cast<float>(spec.initial_accumulator_value)),
      epsilon_(static_cast<float>(spec.epsilon)) {}

void Adagrad::build_slots(std::span<Matrix* const> variables) {
  for (size_t i = 0; i < variables.size(); ++i)
    accumulators_.push_back(new_slot(i, *variables[i], initial_accumulator_value_));
}

// keras/src/optimizers/adagrad.py (Duchi et al. 2011): acc += g^2; w -= lr * g / sqrt(acc + eps).
void Adagrad::update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step,
                     Index begin, Index end) {
  const float lr = step.learning_rate;
  const float eps = epsilon_;
  for_each_block(begin, end, [&](Index o, Index n) {
    ArrayMap w = block(variable, o, n);
    const ConstArrayMap g = block(gradient, o, n);
    ArrayMap acc = slot_block(accumulators_[index], index, o, n);
    decay_block(w, step);
    acc += g.square();
    w -= lr * g / (acc + eps).sqrt();
  });
}

std::vector<const std::vector<Matrix>*> Adagrad::slots() const { return {&accumulators_}; }

}  // namespace fitbench
