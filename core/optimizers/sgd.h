// Gradient descent with optional (Nesterov) momentum, Keras 3's keras.optimizers.SGD. Owns one
// momentum slot per variable when momentum != 0; not thread-safe (one instance per replica).
#pragma once

#include "core/optimizers/optimizer_base.h"

namespace fitbench {

class SGD final : public OptimizerBase {
 public:
  // `spec` has passed make_optimizer's validation.
  explicit SGD(const OptimizerSpec& spec);

  std::string name() const override { return "SGD"; }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<SGD>(*this); }

 private:
  void build_slots(std::span<Matrix* const> variables) override;
  void update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step, Index begin,
              Index end) override;
  std::vector<const std::vector<Matrix>*> slots() const override;
  std::vector<std::string> slot_kinds() const override { return {"momentum"}; }

  float momentum_;
  bool nesterov_;
  std::vector<Matrix> momentums_;  // velocity per variable; empty when momentum_ == 0
};

}  // namespace fitbench
