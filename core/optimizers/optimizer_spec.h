// Plain descriptions of an optimizer and its learning-rate schedule, with Keras 3's argument names
// and defaults. Value types, no behaviour.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// keras.optimizers.schedules.*
struct ScheduleSpec {
  std::string class_name;  // "ExponentialDecay", "CosineDecay", "PiecewiseConstantDecay"
  double initial_learning_rate = 0.01;
  // ExponentialDecay: lr * decay_rate ^ (step / decay_steps), floored when staircase.
  double decay_steps = 1.0;
  double decay_rate = 0.96;
  bool staircase = false;
  // CosineDecay: decays from initial (or warmup_target after warmup_steps) to alpha * that.
  double alpha = 0.0;
  std::optional<double> warmup_target;
  double warmup_steps = 0.0;
  // PiecewiseConstantDecay: values[i] while step <= boundaries[i]; values.size() == boundaries+1.
  std::vector<double> boundaries;
  std::vector<double> values;
};

struct OptimizerSpec {
  std::string class_name = "SGD";  // "SGD", "Adam", "AdamW", "RMSprop", "Adagrad"
  // Constant learning rate; ignored when `schedule` is set. Unset: the optimizer's Keras default
  // (SGD 0.01, the others 0.001).
  std::optional<double> learning_rate;
  std::optional<ScheduleSpec> schedule;
  double momentum = 0.0;                   // SGD, RMSprop
  bool nesterov = false;                   // SGD
  double beta_1 = 0.9;                     // Adam, AdamW
  double beta_2 = 0.999;                   // Adam, AdamW
  double epsilon = 1e-7;                   // Adam, AdamW, RMSprop, Adagrad
  bool amsgrad = false;                    // Adam, AdamW
  std::optional<double> weight_decay;      // AdamW default 0.004; others: none
  double rho = 0.9;                        // RMSprop
  bool centered = false;                   // RMSprop
  double initial_accumulator_value = 0.1;  // Adagrad
  std::optional<double> clipnorm;          // per-variable norm clip
  std::optional<double> clipvalue;         // elementwise clip
  std::optional<double> global_clipnorm;   // clip by the norm of all gradients together
};

}  // namespace fitbench
