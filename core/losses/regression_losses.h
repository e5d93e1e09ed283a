// Keras 3's regression losses (keras/src/losses/losses.py): mean squared error, mean absolute
// error and Huber, each the mean over the last axis of an elementwise function of
// e = y_pred - y_true. Immutable after construction; sum() and sum_and_gradient() never allocate
// and are thread-safe.
#pragma once

#include <string>

#include "core/losses/loss.h"

namespace fitbench::losses {

// Per sample: mean over units of e^2.
class MeanSquaredError final : public Loss {
 public:
  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "mean_squared_error"; }
};

// Per sample: mean over units of |e|. At e == 0 the derivative is -1 (JAX differentiates
// |y_true - y_pred| as +1 at zero, and d(y_true - y_pred)/d(y_pred) = -1).
class MeanAbsoluteError final : public Loss {
 public:
  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "mean_absolute_error"; }
};

// Per sample: mean over units of e^2 / 2 where |e| <= delta, else delta |e| - delta^2 / 2.
// delta is rounded to float32, as Keras converts it to y_pred's dtype.
class Huber final : public Loss {
 public:
  explicit Huber(double delta) : delta_(static_cast<float>(delta)) {}

  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "huber"; }

 private:
  double delta_;
};

}  // namespace fitbench::losses
