// A loss by Keras's name with its arguments. Value type.
#pragma once

#include <string>

namespace fitbench {

struct LossSpec {
  // binary_crossentropy, categorical_crossentropy, sparse_categorical_crossentropy,
  // mean_squared_error, mean_absolute_error, huber (aliases such as "mse" are resolved by core/io).
  std::string name = "mean_squared_error";
  bool from_logits = false;  // the crossentropies
  double delta = 1.0;        // huber
};

}  // namespace fitbench
