// A loss function with Keras 3's definitions (JAX backend): per-sample values reduced with
// `sum_over_batch_size`. The engine asks for the sum over a block of samples and the gradient of
// that sum times a scale, so a batch split across devices (scale = 1 / global batch size) sums to
// exactly the one-device gradient. Losses are immutable after construction and thread-safe.
#pragma once

#include <memory>
#include <string>

#include "core/base/tensor.h"
#include "core/losses/loss_spec.h"

namespace fitbench {

class Loss {
 public:
  virtual ~Loss() = default;

  // Sum over rows of the per-sample loss. y_pred: (n, units) model outputs (probabilities, or
  // logits when from_logits). y_true: (n, units), or (n, 1) class indices for the sparse loss.
  virtual double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const = 0;

  // As sum(), and writes grad = scale * d(sum)/d(y_pred) (same shape as y_pred; no allocation).
  virtual double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                                  MatrixRef grad) const = 0;

  // Keras's name, e.g. "binary_crossentropy".
  virtual std::string name() const = 0;
};

// Builds a loss; throws InputError("compile.loss", ...) for an unknown name.
std::unique_ptr<Loss> make_loss(const LossSpec& spec);

}  // namespace fitbench
