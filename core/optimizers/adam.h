// Adam (with the AMSGrad variant) and AdamW, Keras 3's keras.optimizers.Adam / AdamW: AdamW is
// Adam with decoupled weight decay on by default. Owns first/second-moment slots (and the running
// maximum for AMSGrad); not thread-safe (one instance per replica).
#pragma once

#include "core/optimizers/optimizer_base.h"

namespace fitbench {

class Adam : public OptimizerBase {
 public:
  // `spec` has passed make_optimizer's validation.
  explicit Adam(const OptimizerSpec& spec);

  std::string name() const override { return "Adam"; }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<Adam>(*this); }

 protected:
  Adam(const OptimizerSpec& spec, bool decoupled_weight_decay);

 private:
  void build_slots(std::span<Matrix* const> variables) override;
  void update(size_t index, Matrix& variable, const Matrix& gradient, const Step& step, Index begin,
              Index end) override;
  std::vector<const std::vector<Matrix>*> slots() const override;
  std::vector<std::string> slot_kinds() const override {
    return {"momentum", "velocity", "velocity_hat"};
  }
  size_t kinds_made_together() const override { return 2; }

  double beta_1_;
  double beta_2_;
  float epsilon_;
  bool amsgrad_;
  std::vector<Matrix> momentums_;      // first moment m
  std::vector<Matrix> velocities_;     // second moment v
  std::vector<Matrix> velocity_hats_;  // running max of v; empty unless amsgrad_
};

// keras/src/optimizers/adamw.py (Loshchilov & Hutter 2019): weight_decay defaults to 0.004.
class AdamW final : public Adam {
 public:
  explicit AdamW(const OptimizerSpec& spec) : Adam(spec, true) {}

  std::string name() const override { return "AdamW"; }
  std::unique_ptr<Optimizer> clone() const override { return std::make_unique<AdamW>(*this); }
};

}  // namespace fitbench
