// RMSprop with optional momentum and centering, Keras 3's keras.optimizers.RMSprop. Owns the
// velocity slots (plus momentum and average-gradient slots when enabled); not thread-safe (one
// instance per replica).
#pragma once

#include "core/optimizers/optimizer_base.h"

namespace fitbench {

class RMSprop final : public OptimizerBase {
 public:
  // `spec` has passed make_optimizer's validation.
  explicit RMSprop(const OptimizerSpec& spec);

  std::string name() const override { return "RMSprop"; }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<RMSprop>(*this); }

 private:
  void build_slots(std::span<Matrix* const> variables) override;
  void update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step, Index begin,
              Index end) override;
  std::vector<const std::vector<Matrix>*> slots() const override;
  std::vector<std::string> slot_kinds() const override {
    return {"velocity", "momentum", "average_gradient"};
  }

  float rho_;
  float one_minus_rho_;
  float momentum_;
  float epsilon_;
  bool centered_;
  std::vector<Matrix> velocities_;         // moving mean of g^2
  std::vector<Matrix> momentums_;          // empty unless momentum_ > 0
  std::vector<Matrix> average_gradients_;  // moving mean of g; empty unless centered_
};

}  // namespace fitbench
