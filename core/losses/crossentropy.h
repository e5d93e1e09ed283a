// Keras 3's crossentropy losses on the JAX backend (keras/src/backend/jax/nn.py): binary,
// categorical and sparse categorical, from probabilities (clipped to [1e-7, 1 - 1e-7]) or from
// logits. Immutable after construction; sum() and sum_and_gradient() never allocate and are
// thread-safe.
#pragma once

#include <string>

#include "core/losses/loss.h"

namespace fitbench::losses {

// Per sample: the mean over units of -(t log p + (1 - t) log(1 - p)), p clipped; from logits the
// stable form t softplus(-z) + (1 - t) softplus(z).
class BinaryCrossentropy final : public Loss {
 public:
  explicit BinaryCrossentropy(bool from_logits) : from_logits_(from_logits) {}

  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "binary_crossentropy"; }

 private:
  bool from_logits_;
};

// Per sample: -sum over classes of t log q, where q is y_pred divided by its row sum and clipped;
// from logits q is the softmax, computed as a log-softmax.
class CategoricalCrossentropy final : public Loss {
 public:
  explicit CategoricalCrossentropy(bool from_logits) : from_logits_(from_logits) {}

  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "categorical_crossentropy"; }

 private:
  bool from_logits_;
};

// As CategoricalCrossentropy with a one-hot target built from an (n, 1) column of class indices
// stored as floats (truncated to integers, as Keras's int32 cast does). An index outside
// [0, units) throws InputError("data", ...) naming the row in the block.
class SparseCategoricalCrossentropy final : public Loss {
 public:
  explicit SparseCategoricalCrossentropy(bool from_logits) : from_logits_(from_logits) {}

  double sum(ConstMatrixRef y_pred, ConstMatrixRef y_true) const override;
  double sum_and_gradient(ConstMatrixRef y_pred, ConstMatrixRef y_true, float scale,
                          MatrixRef grad) const override;
  std::string name() const override { return "sparse_categorical_crossentropy"; }

 private:
  bool from_logits_;
};

}  // namespace fitbench::losses
