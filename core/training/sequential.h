// keras.Sequential: a stack of layers with its variables, compile() state (optimizer, loss,
// metrics), fit(), evaluate(), predict(), summary() and weight access. A Sequential is used by
// one thread at a time (the thread that calls fit() owns it until fit() returns); fit() may be
// stopped or paused from another thread through a TrainingControl.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/losses/loss.h"
#include "core/metrics/metric.h"
#include "core/nn/network.h"
#include "core/nn/variable.h"
#include "core/optimizers/optimizer.h"
#include "core/training/callback.h"
#include "core/training/fit_options.h"
#include "core/training/history.h"
#include "core/training/model_state.h"
#include "core/training/step_executor.h"
#include "core/training/training_control.h"

namespace fitbench {

// Where fit()/evaluate()/predict() print and what else they are given.
struct RunOptions {
  std::ostream* out = nullptr;         // progress text; null: std::cout
  std::ostream* warnings = nullptr;    // Keras's UserWarnings (Sequential::warn); null: std::cerr
  bool interactive = false;            // out is a terminal: verbose=1 draws the live bar
  std::vector<Callback*> callbacks;    // in addition to those of FitOptions (not owned)
  TrainingControl* control = nullptr;  // stop / pause from another thread
  ModelWriter write_model;        // how ModelCheckpoint saves (write_model_file); none: refused
  std::function<double()> clock;  // seconds; null: steady clock (tests inject one)
  // Validation data (Keras's validation_data); takes precedence over validation_split.
  const Matrix* validation_x = nullptr;
  const Matrix* validation_y = nullptr;
};

// Makes the executor fit() uses; the default is LocalExecutor. Distribution installs its own.
using ExecutorFactory = std::function<std::unique_ptr<StepExecutor>(const ExecutorContext&)>;

class Sequential {
 public:
  explicit Sequential(const ModelSpec& spec);
  ~Sequential();
  Sequential(const Sequential&) = delete;
  Sequential& operator=(const Sequential&) = delete;

  const ModelSpec& spec() const { return spec_; }
  const Network& network() const { return network_; }
  const std::string& name() const { return network_.name(); }

  // Creates the variables for `input_units` features and initializes them, drawing seeds from
  // the global sequence (set_random_seed). Called by fit() on first use when not built.
  void build(int64_t input_units);
  // The same for samples of `input_shape` (the data's, e.g. (28, 28)); see Network::build.
  void build(const Shape& input_shape);
  bool built() const { return network_.built(); }

  void compile(const CompileOptions& options);
  bool compiled() const { return loss_ != nullptr; }
  const CompileOptions& compile_options() const { return compile_options_; }

  History fit(const Matrix& x, const Matrix& y, const FitOptions& options,
              const RunOptions& run = {});
  // Loss and metrics over (x, y); keys as in fit's logs.
  Logs evaluate(const Matrix& x, const Matrix& y, int batch_size = 32, int verbose = 0,
                const RunOptions& run = {});
  Matrix predict(const Matrix& x, int batch_size = 32, int verbose = 0, const RunOptions& run = {});

  // Keras's summary() text.
  std::string summary() const;

  std::vector<Variable>& variables() { return variables_; }
  const std::vector<Variable>& variables() const { return variables_; }
  int64_t count_params(bool trainable) const;
  // Weights by Keras path, and setting them back (shapes must match; errors name the path).
  std::vector<NamedWeight> get_weights() const;
  void set_weights(const std::vector<NamedWeight>& weights, const std::string& source);
  // The optimizer's variables as Keras saves them, once it has been built (by fit() or
  // set_optimizer_state); the name is left for the file writer.
  std::optional<OptimizerState> optimizer_state() const;
  // Restores a saved optimizer state into the compiled, built model: builds the optimizer for the
  // trainable variables and checks the saved slots against them in number and shape (InputError
  // at `source`). Training then continues from it, as Keras does after load_model.
  void set_optimizer_state(const OptimizerState& state, const std::string& source);
  // The model as a model file: config, compile options, weights, data_info and optimizer state.
  ModelFile model_file() const {
    return {spec(), compile_options(), get_weights(), data_info, optimizer_state()};
  }
  // What the model trains on (set by prepare_run), written into its model files.
  std::optional<ModelData> data_info;

  Optimizer* optimizer() { return optimizer_.get(); }
  const std::vector<std::unique_ptr<Metric>>& metrics() const { return metrics_; }

  // What each device's buffers held at the end of the last fit() (StepExecutor::device_memory):
  // what the capacity plan predicts (core/run/capacity.h). Empty before any fit().
  const std::vector<DeviceMemory>& fit_device_memory() const { return fit_device_memory_; }
  // Set by callbacks (EarlyStopping, TerminateOnNaN) to end fit() after the current batch.
  bool stop_training = false;
  // Why the last fit() stopped early: "" (it ran every epoch or was stopped by a
  // TrainingControl), "early_stopping", or "invalid_loss" (TerminateOnNaN).
  std::string stop_reason;
  // The epoch (0-based) whose weights EarlyStopping's restore_best_weights put back at the end
  // of the last fit(), or none.
  std::optional<int> restored_epoch;
  // A UserWarning of the running fit(), as Keras's Python warnings print it, once per message
  // and fit() (e.g. EarlyStopping watching a metric the logs do not have).
  void warn(const std::string& message);
  // Where the running fit() prints (RunOptions::out, else std::cout): callbacks' messages such
  // as TerminateOnNaN's, which Keras prints with its progress.
  std::ostream& output();

  void set_executor_factory(ExecutorFactory factory) { executor_factory_ = std::move(factory); }

 private:
  ExecutorContext executor_context();
  void ensure_ready(const Matrix& x, const Matrix& y, const char* what);
  // Throws InputError at `place` when `rows` rows of activations and gradients would hold more
  // than Network::kMaxModelFloats floats (the variables were checked at build()).
  void check_workspace(Index rows, const char* place) const;
  // The compiled metrics of compile_options_, each named by its log key (metric_log_keys).
  void make_metrics();
  // Builds the optimizer for the trainable variables, once.
  void build_optimizer();
  Logs totals_to_logs(const StepTotals& totals, const std::string& prefix) const;
  Logs run_test(StepExecutor& exec, const Matrix& x, const Matrix& y, int batch_size,
                const std::vector<Callback*>& callbacks, bool inside_fit);

  ModelSpec spec_;
  Network network_;
  std::vector<DeviceMemory> fit_device_memory_;
  std::ostream* out_ = nullptr;       // the running fit()'s RunOptions::out
  std::ostream* warnings_ = nullptr;  // the running fit()'s RunOptions::warnings
  std::vector<std::string> warned_;   // the messages warn() printed in this fit()
  std::vector<Variable> variables_;
  CompileOptions compile_options_;
  std::unique_ptr<Loss> loss_;
  std::vector<std::unique_ptr<Metric>> metrics_;
  std::unique_ptr<Optimizer> optimizer_;
  bool optimizer_built_ = false;
  uint64_t dropout_seed_ = 0;
  uint64_t train_step_ = 0;
  ExecutorFactory executor_factory_;
};

}  // namespace fitbench
