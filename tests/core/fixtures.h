// What the distribution tests (tst_data_parallel, tst_model_parallel, tst_trace) share: small
// models and a labelled data set, optimizer specs by name, a training run with everything it
// produced, its distance to another run, and the executor context fit() would give an executor
// (to build one directly and look inside).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/losses/loss.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

namespace fitbench::fixtures {

inline LayerSpec input(int64_t features) { return input_layer(features); }
inline LayerSpec dense(int64_t units, const std::string& activation) {
  return dense_layer(units, activation);
}

// Input(features) -> Dense(h, relu) for each of `hidden` -> Dense(1, sigmoid).
inline ModelSpec binary_mlp(int64_t features, const std::vector<int64_t>& hidden) {
  ModelSpec spec;
  spec.layers = {input(features)};
  for (int64_t h : hidden) spec.layers.push_back(dense(h, "relu"));
  spec.layers.push_back(dense(1, "sigmoid"));
  return spec;
}

// n rows of standard normal features (Rng(3)) labelled 1 where the first is positive.
inline void make_binary_data(Index n, Index features, Matrix& x, Matrix& y) {
  Rng rng(3);
  x.resize(n, features);
  y.resize(n, 1);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < features; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = x(i, 0) > 0 ? 1.0f : 0.0f;
  }
}

// Compiles m with SGD(0.1), binary cross-entropy and accuracy.
// SGD(0.1); with `clipnorm` its update needs whole-gradient norms, so DataParallel all-reduces
// and every replica updates everything (Optimizer::elementwise()).
inline void compile_binary_sgd(Sequential& m, bool clipnorm = false) {
  CompileOptions c;
  c.optimizer.class_name = "SGD";
  c.optimizer.learning_rate = 0.1;
  if (clipnorm) c.optimizer.clipnorm = 100.0;
  c.loss.name = "binary_crossentropy";
  c.metrics = {"accuracy"};
  m.compile(c);
}

// Input(features) -> Dense(8, relu, L2 1e-3) -> Dropout(0.1) -> Dense(u, tanh) for each of
// `tanh_units` -> Dense(classes, softmax): a regularizer, dropout and uneven widths for the
// equivalence tests. Unnamed, so Keras's names: dense, dense_1, ...
inline ModelSpec classifier(int64_t features, const std::vector<int64_t>& tanh_units,
                            int64_t classes) {
  ModelSpec spec;
  LayerSpec hidden = dense(8, "relu");
  hidden.kernel_regularizer = {0.0, 1e-3};
  LayerSpec drop;
  drop.class_name = "Dropout";
  drop.rate = 0.1;
  spec.layers = {input(features), hidden, drop};
  for (int64_t u : tanh_units) spec.layers.push_back(dense(u, "tanh"));
  spec.layers.push_back(dense(classes, "softmax"));
  return spec;
}

// 61 rows (6 batches of 10 and one of 1) of normal features and a sparse label in
// [0, classes): classes - 1 when x0 > 0.5, else classes - 2 when x1 > 0, ..., else 0.
inline void make_data(Matrix& x, Matrix& y, Index features, int classes) {
  Rng rng(5);
  x.resize(61, features);
  y.resize(61, 1);
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < features; ++j) x(i, j) = static_cast<float>(rng.normal());
    int label = 0;
    for (int j = 0; j + 1 < classes; ++j) {
      if (x(i, j) > (j == 0 ? 0.5f : 0.0f)) {
        label = classes - 1 - j;
        break;
      }
    }
    y(i, 0) = static_cast<float>(label);
  }
}

inline OptimizerSpec optimizer(const std::string& name, double lr, double momentum = 0.0,
                               bool nesterov = false) {
  OptimizerSpec o;
  o.class_name = name;
  o.learning_rate = lr;
  o.momentum = momentum;
  o.nesterov = nesterov;
  return o;
}

// Compiles m with `o`, sparse categorical crossentropy and, if asked, accuracy.
inline void compile(Sequential& m, const OptimizerSpec& o, bool accuracy = true) {
  CompileOptions c;
  c.optimizer = o;
  c.loss.name = "sparse_categorical_crossentropy";
  if (accuracy) c.metrics = {"accuracy"};
  m.compile(c);
}

// What a training run gives: History, final weights, and (when asked) evaluate() and predict()
// on the training data.
struct Run {
  History history;
  std::vector<NamedWeight> weights;
  Logs evaluated;
  Matrix predicted;
};

// Seeds 11, builds `spec`, compiles it with `o`, sparse categorical crossentropy and accuracy,
// lets `distribute` install a strategy (or nothing), and calls fit() `fits` times on
// make_data(features, classes), then evaluate() (batch 7) and predict() (batch 9) if asked.
inline Run train(const ModelSpec& spec, Index features, int classes, const OptimizerSpec& o,
                 const std::function<void(Sequential&)>& distribute, const FitOptions& fit,
                 int fits = 1, bool evaluate = false) {
  set_random_seed(11);
  Matrix x, y;
  make_data(x, y, features, classes);
  Sequential m(spec);
  compile(m, o);
  if (distribute) distribute(m);
  Run r;
  for (int f = 0; f < fits; ++f) r.history = m.fit(x, y, fit);
  r.weights = m.get_weights();
  if (evaluate) {
    r.evaluated = m.evaluate(x, y, 7);
    r.predicted = m.predict(x, 9);
  }
  return r;
}

// |u - v| relative to max(1, |v|).
inline double rel(double u, double v) { return std::abs(u - v) / std::max(1.0, std::abs(v)); }

// The largest rel() between a and b over weights, history, evaluation and predictions.
inline double max_rel_diff(const Run& a, const Run& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.weights.size(); ++i)
    for (size_t j = 0; j < a.weights[i].values.size(); ++j)
      worst = std::max(worst, rel(a.weights[i].values[j], b.weights[i].values[j]));
  for (const auto& [k, vals] : a.history.history)
    for (size_t e = 0; e < vals.size(); ++e)
      worst = std::max(worst, rel(vals[e], b.history.history.at(k)[e]));
  for (const auto& [k, v] : a.evaluated) worst = std::max(worst, rel(v, b.evaluated.at(k)));
  for (Index i = 0; i < a.predicted.size(); ++i)
    worst = std::max(worst, rel(a.predicted.data()[i], b.predicted.data()[i]));
  return worst;
}

// The context fit() gives an executor of a compiled and built `model`, with its loss and
// metrics, and either the model's own optimizer or (fresh_optimizer) a new one whose iterations
// are 0, as the model's would be before its first step.
struct ExecutorSetup {
  std::unique_ptr<Loss> loss;
  std::unique_ptr<Optimizer> own_optimizer;
  ExecutorContext ctx;

  ExecutorSetup(Sequential& model, bool fresh_optimizer) {
    const CompileOptions& c = model.compile_options();
    loss = make_loss(c.loss);
    ctx.graph.network = &model.network();
    ctx.graph.loss = loss.get();
    for (const auto& m : model.metrics()) ctx.graph.metrics.push_back(m.get());
    ctx.variables = &model.variables();
    if (fresh_optimizer) {
      own_optimizer = make_optimizer(c.optimizer, "compile.optimizer");
      ctx.optimizer = own_optimizer.get();
    } else {
      ctx.optimizer = model.optimizer();
    }
  }
};

}  // namespace fitbench::fixtures
