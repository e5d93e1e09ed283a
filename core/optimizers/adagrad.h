// Adagrad, Keras 3's keras.optimizers.Adagrad. Owns one accumulator slot per variable, started at
// initial_accumulator_value; not thread-safe (one instance per replica).
#pragma once

#include "core/optimizers/optimizer_base.h"

namespace fitbench {

class Adagrad final : public OptimizerBase {
 public:
  // `spec` has passed make_optimizer's validation.
  explicit Adagrad(const OptimizerSpec& spec);

  std::string name() const override { return "Adagrad"; }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<Adagrad>(*this); }

 private:
  void build_slots(std::span<Matrix* const> variables) override;
  void update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step, Index begin,
              Index end) override;
  std::vector<const std::vector<Matrix>*> slots() const override;
  std::vector<std::string> slot_kinds() const override { return {"accumulator"}; }

  float initial_accumulator_value_;
  float epsilon_;
  std::vector<Matrix> accumulators_;  // running sum of g^2
};

}  // namespace fitbench
