// The models the benchmark programs train: the seed (Input(4) -> Dense(1, sigmoid), SGD(0.2),
// binary crossentropy) and the MLP (Input(784) -> Dense(512, relu) -> Dense(512, relu) ->
// Dense(10, softmax), Adam, sparse categorical crossentropy), both with accuracy, and the layer
// helpers they are written with. Header-only; plain values.
#pragma once

#include <string>

#include "core/training/sequential.h"

namespace fitbench::bench {

inline LayerSpec dense(int64_t units, const std::string& activation) {
  return dense_layer(units, activation);
}
inline LayerSpec input(int64_t units) { return input_layer(units); }

inline ModelSpec seed_spec() {
  ModelSpec s;
  s.layers = {input(4), dense(1, "sigmoid")};
  return s;
}

inline CompileOptions seed_compile() {
  CompileOptions c;
  c.optimizer.class_name = "SGD";
  c.optimizer.learning_rate = 0.2;
  c.loss.name = "binary_crossentropy";
  c.metrics = {"accuracy"};
  return c;
}

inline ModelSpec mlp_spec() {
  ModelSpec s;
  s.layers = {input(784), dense(512, "relu"), dense(512, "relu"), dense(10, "softmax")};
  return s;
}

inline CompileOptions mlp_compile() {
  CompileOptions c;
  c.optimizer.class_name = "Adam";
  c.loss.name = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  return c;
}

}  // namespace fitbench::bench
