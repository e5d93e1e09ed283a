// A model variable: its Keras path ("sequential/dense/kernel"), Keras shape ({4, 1}; a bias is
// {1}), value as a matrix (a bias is one row), trainability and regularizer. Owned by the model;
// replicas of a distributed model hold their own copies of `value`.
#pragma once

#include <string>

#include "core/base/tensor.h"
#include "core/nn/layer_spec.h"

namespace fitbench {

struct Variable {
  std::string path;
  Shape shape;
  Matrix value;
  bool trainable = true;
  RegularizerSpec regularizer{};

  int64_t size() const { return value.size(); }
};

}  // namespace fitbench
