#include "core/training/sequential.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/nn/initializers.h"
#include "core/python/keras_random.h"
#include "core/python/random.h"
#include "core/training/callbacks.h"
#include "core/training/progbar_logger.h"

namespace fitbench {
namespace {

// Records epoch logs into a History (keras.callbacks.History).
class HistoryRecorder : public Callback {
 public:
  explicit HistoryRecorder(History& h) : h_(h) {}
  void on_epoch_end(int epoch, Logs& logs) override {
    h_.epoch.push_back(epoch);
    for (const auto& [k, v] : logs) h_.history[k].push_back(v);
  }

 private:
  History& h_;
};

struct CallbackList {
  std::vector<Callback*> list;
  void set(Sequential* m, const CallbackParams& p) {
    for (auto* c : list) {
      c->set_model(m);
      c->set_params(p);
    }
  }
};

std::function<double()> steady_clock_or(const std::function<double()>& clock) {
  if (clock) return clock;
  return [] {
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
  };
}

}  // namespace

double History::last(const std::string& key) const {
  auto it = history.find(key);
  if (it == history.end() || it->second.empty()) return std::nan("");
  return it->second.back();
}

Sequential::Sequential(const ModelSpec& spec) : spec_(spec), network_(spec) {
  executor_factory_ = [](const ExecutorContext& ctx) {
    return std::make_unique<LocalExecutor>(ctx);
  };
  if (network_.declared_input_units()) build(*network_.declared_input_units());
}

Sequential::~Sequential() = default;

void Sequential::build(int64_t input_units) { build(Shape{input_units}); }

void Sequential::build(const Shape& input_shape) {
  network_.build(input_shape);
  // Keras draws a default seed (make_default_seed) for each unseeded random initializer when a
  // layer is constructed (Dense: kernel, then bias, used or not) and one for each Dropout's seed
  // generator, in layer order; the initial weights come from JAX's generator keyed by them.
  std::vector<uint32_t> seeds;
  const auto draw = [](const InitializerSpec& init) -> uint32_t {
    if (!is_random_initializer(init)) return 0;
    return init.seed ? static_cast<uint32_t>(*init.seed) : make_default_seed();
  };
  for (const auto& layer : network_.layers()) {
    const LayerSpec& ls = layer->spec();
    if (ls.class_name == "Dense" || ls.class_name == "Conv2D") {
      const uint32_t kernel_seed = draw(ls.kernel_initializer);
      const uint32_t bias_seed = draw(ls.bias_initializer);
      seeds.push_back(kernel_seed);
      if (ls.use_bias) seeds.push_back(bias_seed);
    } else if (ls.class_name == "LayerNormalization") {
      // Its constructor reads beta_initializer before gamma_initializer; the variables are gamma,
      // then beta.
      const uint32_t beta_seed = draw(ls.beta_initializer);
      const uint32_t gamma_seed = draw(ls.gamma_initializer);
      if (ls.scale_gamma) seeds.push_back(gamma_seed);
      if (ls.center) seeds.push_back(beta_seed);
    } else if (ls.class_name == "BatchNormalization") {
      // Its constructor reads beta's, gamma's, moving_mean's and moving_variance's
      // initializers in that order; the variables are gamma, beta and the moving statistics.
      const uint32_t beta_seed = draw(ls.beta_initializer);
      const uint32_t gamma_seed = draw(ls.gamma_initializer);
      const uint32_t mean_seed = draw(ls.moving_mean_initializer);
      const uint32_t variance_seed = draw(ls.moving_variance_initializer);
      if (ls.scale_gamma) seeds.push_back(gamma_seed);
      if (ls.center) seeds.push_back(beta_seed);
      seeds.push_back(mean_seed);
      seeds.push_back(variance_seed);
    } else if (ls.class_name == "Dropout" && ls.rate > 0.0 && !ls.seed) {
      make_default_seed();
    }
  }
  variables_.clear();
  const auto& nvs = network_.variables();
  if (seeds.size() != nvs.size())
    throw std::logic_error("Sequential::build: one initializer seed per variable expected");
  for (size_t i = 0; i < nvs.size(); ++i) {
    const NetworkVariable& nv = nvs[i];
    Variable v;
    v.path = nv.path;
    v.shape = nv.shape;
    v.trainable = nv.trainable;
    v.regularizer = nv.regularizer;
    v.value.resize(matrix_rows(nv.shape), matrix_cols(nv.shape));
    initialize(nv.initializer, nv.shape, seeds[i], v.value);
    variables_.push_back(std::move(v));
  }
  optimizer_built_ = false;
}

void Sequential::compile(const CompileOptions& options) {
  loss_ = make_loss(options.loss);
  optimizer_ = make_optimizer(options.optimizer, "compile.optimizer");
  optimizer_built_ = false;
  compile_options_ = options;
  metrics_.clear();
  dropout_seed_ = next_seed();
  if (built()) make_metrics();
}

void Sequential::make_metrics() {
  metrics_.clear();
  const std::vector<std::string>& names = compile_options_.metrics;
  const std::vector<std::string> keys = metric_log_keys(compile_options_.all_metric_names());
  for (size_t i = 0; i < names.size(); ++i)
    metrics_.push_back(make_metric(names[i], compile_options_.loss, network_.output_units(),
                                   "compile.metrics[" + std::to_string(i) + "]", keys[i]));
}

void Sequential::ensure_ready(const Matrix& x, const Matrix& y, const char* what) {
  if (!compiled())
    throw InputError("compile", std::string("the model must be compiled before ") + what);
  if (!built()) build(x.cols());
  if (x.cols() != network_.input_units())
    throw InputError("data", "the data has " + counted(x.cols(), "feature column") +
                                 " but the model expects " +
                                 std::to_string(network_.input_units()));
  if (metrics_.size() != compile_options_.metrics.size()) make_metrics();
  if (y.rows() != x.rows())
    throw InputError("data", "x has " + std::to_string(x.rows()) + " rows but y has " +
                                 std::to_string(y.rows()));
  const int64_t units = network_.output_units();
  const bool sparse = compile_options_.loss.name == "sparse_categorical_crossentropy";
  if (sparse ? y.cols() != 1 : y.cols() != units) {
    throw InputError(
        "model",
        "the last layer has " + counted(units, "unit") + " but the targets have " +
            counted(y.cols(), "column") +
            (sparse ? "; sparse_categorical_crossentropy expects one column of class indices"
                    : "; with " + compile_options_.loss.name +
                          " the last layer needs one unit per target column"));
  }
  build_optimizer();
}

void Sequential::build_optimizer() {
  if (optimizer_built_) return;
  auto values = variable_values(variables_);
  std::vector<Matrix*> trainable;
  for (size_t i = 0; i < variables_.size(); ++i)
    if (variables_[i].trainable) trainable.push_back(values[i]);
  optimizer_->build(trainable);
  optimizer_built_ = true;
}

ExecutorContext Sequential::executor_context() {
  ExecutorContext ctx;
  ctx.graph.network = &network_;
  ctx.graph.loss = loss_.get();
  for (const auto& m : metrics_) ctx.graph.metrics.push_back(m.get());
  ctx.variables = &variables_;
  ctx.optimizer = optimizer_.get();
  ctx.dropout_seed = dropout_seed_;
  return ctx;
}

namespace {
// Keras's metrics are float32 variables, read into Python floats: the logs, the History and the
// files made from them hold float32 values (0.4261484146118164, not 0.42614840206871046).
double as_float32(double v) { return static_cast<double>(static_cast<float>(v)); }
}  // namespace

Logs Sequential::totals_to_logs(const StepTotals& totals, const std::string& prefix) const {
  Logs logs;
  const double n = totals.samples > 0 ? totals.samples : 1.0;
  logs[prefix + "loss"] = as_float32((totals.loss_sum + totals.reg_weighted) / n);
  const double* state = totals.metric_states.data();
  for (const auto& m : metrics_) {
    logs[prefix + m->name()] = as_float32(m->result(state));
    state += m->state_size();
  }
  return logs;
}

Logs Sequential::run_test(StepExecutor& exec, const Matrix& x, const Matrix& y, int batch_size,
                          const std::vector<Callback*>& callbacks, bool inside_fit) {
  StepTotals totals;
  totals.reset(executor_context().graph.metric_state_size());
  const Index n = x.rows();
  const Index b = std::max<Index>(1, batch_size);
  Logs empty;
  for (auto* c : callbacks) c->on_test_begin(empty);
  int batch = 0;
  for (Index start = 0; start < n; start += b, ++batch) {
    const Index rows = std::min(b, n - start);
    exec.test_step(x.middleRows(start, rows), y.middleRows(start, rows), totals);
    if (!inside_fit || !callbacks.empty()) {
      const Logs logs = totals_to_logs(totals, "");
      for (auto* c : callbacks) c->on_test_batch_end(batch, logs);
    }
  }
  Logs logs = totals_to_logs(totals, "");
  for (auto* c : callbacks) c->on_test_end(logs);
  return logs;
}

History Sequential::fit(const Matrix& x_all, const Matrix& y_all, const FitOptions& o,
                        const RunOptions& run) {
  if (o.epochs < 1) throw InputError("fit.epochs", "must be a positive integer");
  if (o.batch_size < 1) throw InputError("fit.batch_size", "must be a positive integer");
  if (o.initial_epoch < 0 || o.initial_epoch >= o.epochs)
    throw InputError("fit.initial_epoch",
                     "must be from 0 to epochs - 1 = " + std::to_string(o.epochs - 1) + ", got " +
                         std::to_string(o.initial_epoch) +
                         (o.initial_epoch >= o.epochs
                              ? ": epochs is the epoch to end at, not how many more to train "
                                "(Keras would train nothing and return an empty History)"
                              : ""));
  if (!(o.validation_split >= 0.0 && o.validation_split < 1.0))
    throw InputError("fit.validation_split", "must be in [0, 1)");
  if (o.verbose < 0 || o.verbose > 2) throw InputError("fit.verbose", "must be 0, 1 or 2");
  if (x_all.rows() < 1) throw InputError("data", "there are no samples to train on");
  ensure_ready(x_all, y_all, "fit()");

  // Validation data: explicit, else the last fraction of the samples (before shuffling).
  Index n_train = x_all.rows();
  Matrix split_vx, split_vy;
  const Matrix* vx = run.validation_x;
  const Matrix* vy = run.validation_y;
  if (vx && vy) {
    if (vx->cols() != x_all.cols() || vy->cols() != y_all.cols() || vx->rows() != vy->rows())
      throw InputError("validation_data", "must have the same columns as the training data");
  } else if (o.validation_split > 0.0) {
    n_train = validation_split_at(x_all.rows(), o.validation_split);
    split_vx = x_all.bottomRows(x_all.rows() - n_train);
    split_vy = y_all.bottomRows(y_all.rows() - n_train);
    vx = &split_vx;
    vy = &split_vy;
  }
  const auto x = x_all.topRows(n_train);
  const auto y = y_all.topRows(n_train);

  const auto clock = steady_clock_or(run.clock);
  History history;
  history.params_verbose = o.verbose;
  history.params_epochs = o.epochs;
  const Index batch = std::min<Index>(o.batch_size, n_train);
  const int steps = static_cast<int>((n_train + batch - 1) / batch);
  history.params_steps = steps;

  // Callbacks in Keras's order: the user's, then History, then the progress printer.
  CallbackContext callback_context;
  callback_context.metric_names = compile_options_.all_metric_names();
  callback_context.metric_identifiers = compile_options_.metrics;
  callback_context.validation = vx && vy && vx->rows() > 0;
  callback_context.rate_is_schedule = optimizer_->has_schedule();
  callback_context.write_model = run.write_model;
  std::vector<std::unique_ptr<Callback>> owned =
      make_callbacks(o.callbacks, clock, callback_context);
  HistoryRecorder recorder(history);
  ProgbarLogger progbar(run.out ? *run.out : std::cout, run.interactive, clock);
  // The run's streams, for callbacks (output(), warn()), until this fit() returns or throws.
  struct RunStreams {
    Sequential& model;
    RunStreams(Sequential& m, const RunOptions& run) : model(m) {
      model.out_ = run.out;
      model.warnings_ = run.warnings;
      model.warned_.clear();
    }
    ~RunStreams() { model.out_ = model.warnings_ = nullptr; }
  } streams(*this, run);
  CallbackList cbs;
  for (auto& c : owned) cbs.list.push_back(c.get());
  for (auto* c : run.callbacks) cbs.list.push_back(c);
  cbs.list.push_back(&recorder);
  if (o.verbose > 0) cbs.list.push_back(&progbar);
  cbs.set(this, CallbackParams{o.epochs, steps, o.verbose});

  // The most rows a step or a validation step takes. Their activations and gradients must fit
  // too (the variables did, at build()).
  const Index rows = std::max<Index>(batch, vx ? std::min<Index>(o.batch_size, vx->rows()) : 0);
  check_workspace(rows, "fit.batch_size");
  auto exec = executor_factory_(executor_context());
  exec->prepare(rows);

  // Shuffled batches are gathered into these buffers; unshuffled ones are views.
  std::vector<int64_t> perm(static_cast<size_t>(n_train));
  Matrix xb(batch, x.cols()), yb(batch, y.cols());
  StepTotals totals;
  const size_t state_size = executor_context().graph.metric_state_size();
  Logs logs, empty;

  stop_training = false;
  stop_reason.clear();
  restored_epoch.reset();
  for (auto* c : cbs.list) c->on_train_begin(empty);
  Logs epoch_logs;
  for (int epoch = o.initial_epoch; epoch < o.epochs; ++epoch) {
    totals.reset(state_size);
    for (auto* c : cbs.list) c->on_epoch_begin(epoch, empty);
    exec->pull_from_model();
    // Keras 3's array adapter visits epoch e of this fit() (counted from 0, whatever
    // initial_epoch is) in the order np.random.default_rng(e).permutation(n).
    if (o.shuffle) numpy_permutation(static_cast<uint64_t>(epoch - o.initial_epoch), n_train, perm);
    for (int step = 0; step < steps; ++step) {
      if (run.control && !run.control->wait_for_next_batch()) {
        stop_training = true;
        break;
      }
      for (auto* c : cbs.list) c->on_train_batch_begin(step, empty);
      const Index start = static_cast<Index>(step) * batch;
      const Index rows = std::min<Index>(batch, n_train - start);
      if (o.shuffle) {
        const std::span<const int64_t> index(perm.data() + start, static_cast<size_t>(rows));
        exec->train_step_rows(x, y, index, xb, yb, train_step_++, totals);
      } else {
        exec->train_step(x.middleRows(start, rows), y.middleRows(start, rows), train_step_++,
                         totals);
      }
      if (const StepTrace* trace = exec->labelled_step_trace(epoch, step))
        for (auto* c : cbs.list) c->on_step_trace(*trace);
      // Running means since the epoch began, as Keras's metrics report them per batch. The map's
      // nodes exist after the first batch, so this assigns values without allocating.
      const double n = totals.samples;
      logs["loss"] = as_float32((totals.loss_sum + totals.reg_weighted) / n);
      const double* state = totals.metric_states.data();
      for (const auto& m : metrics_) {
        logs[m->name()] = as_float32(m->result(state));
        state += m->state_size();
      }
      for (auto* c : cbs.list) c->on_train_batch_end(step, logs);
      if (stop_training) break;
    }
    exec->push_to_model();
    epoch_logs = totals_to_logs(totals, "");
    if (vx && vy && vx->rows() > 0) {
      const Logs val = run_test(*exec, *vx, *vy, o.batch_size, cbs.list, true);
      for (const auto& [k, v] : val) epoch_logs["val_" + k] = v;
    }
    for (auto* c : cbs.list) c->on_epoch_end(epoch, epoch_logs);
    if (stop_training) break;
  }
  for (auto* c : cbs.list) c->on_train_end(epoch_logs);
  exec->push_to_model();
  fit_device_memory_ = exec->device_memory();
  return history;
}

void Sequential::check_workspace(Index rows, const char* place) const {
  const double workspace =
      static_cast<double>(rows) * static_cast<double>(network_.workspace_floats_per_row());
  if (workspace <= static_cast<double>(Network::kMaxModelFloats)) return;
  char amount[32];
  std::snprintf(amount, sizeof amount, "%.3g", workspace);
  throw InputError(place, "is too large for this model: " + std::to_string(rows) +
                              " rows of its activations and gradients would hold " + amount +
                              " floats; fitbench holds at most " +
                              std::to_string(Network::kMaxModelFloats) +
                              " (1 GiB); use a smaller batch_size");
}

std::ostream& Sequential::output() { return out_ ? *out_ : std::cout; }

void Sequential::warn(const std::string& message) {
  if (std::find(warned_.begin(), warned_.end(), message) != warned_.end()) return;
  warned_.push_back(message);
  std::ostream& out = warnings_ ? *warnings_ : std::cerr;
  out << "UserWarning: " << printable_message(message) << "\n";  // it may quote a file's names
  out.flush();
}

Logs Sequential::evaluate(const Matrix& x, const Matrix& y, int batch_size, int verbose,
                          const RunOptions& run) {
  if (batch_size < 1) throw InputError("batch_size", "must be a positive integer");
  ensure_ready(x, y, "evaluate()");
  const auto clock = steady_clock_or(run.clock);
  const Index b = std::min<Index>(batch_size, std::max<Index>(1, x.rows()));
  check_workspace(b, "batch_size");
  const int steps = static_cast<int>((x.rows() + b - 1) / b);
  ProgbarLogger progbar(run.out ? *run.out : std::cout, run.interactive, clock);
  CallbackList cbs;
  for (auto* c : run.callbacks) cbs.list.push_back(c);
  if (verbose > 0) cbs.list.push_back(&progbar);
  cbs.set(this, CallbackParams{1, steps, verbose});
  auto exec = executor_factory_(executor_context());
  exec->prepare(b);
  exec->pull_from_model();
  return run_test(*exec, x, y, static_cast<int>(b), cbs.list, false);
}

Matrix Sequential::predict(const Matrix& x, int batch_size, int verbose, const RunOptions& run) {
  if (batch_size < 1) throw InputError("batch_size", "must be a positive integer");
  if (!built()) build(x.cols());
  if (x.cols() != network_.input_units())
    throw InputError("data", "the data has " + counted(x.cols(), "feature column") +
                                 " but the model expects " +
                                 std::to_string(network_.input_units()));
  const auto clock = steady_clock_or(run.clock);
  const Index b = std::min<Index>(batch_size, std::max<Index>(1, x.rows()));
  check_workspace(b, "batch_size");
  const int steps = static_cast<int>((x.rows() + b - 1) / b);
  ProgbarLogger progbar(run.out ? *run.out : std::cout, run.interactive, clock);
  CallbackList cbs;
  for (auto* c : run.callbacks) cbs.list.push_back(c);
  if (verbose > 0) cbs.list.push_back(&progbar);
  cbs.set(this, CallbackParams{1, steps, verbose});
  ExecutorContext ctx = executor_context();
  auto exec = executor_factory_(ctx);
  exec->prepare(b);
  exec->pull_from_model();
  Matrix out(x.rows(), network_.output_units());
  Logs empty;
  for (auto* c : cbs.list) c->on_predict_begin(empty);
  int batch = 0;
  for (Index start = 0; start < x.rows(); start += b, ++batch) {
    const Index rows = std::min(b, x.rows() - start);
    exec->predict_step(x.middleRows(start, rows), out.middleRows(start, rows));
    for (auto* c : cbs.list) c->on_predict_batch_end(batch, empty);
  }
  for (auto* c : cbs.list) c->on_predict_end(empty);
  return out;
}

int64_t Sequential::count_params(bool trainable) const {
  int64_t n = 0;
  for (const auto& v : variables_)
    if (v.trainable == trainable) n += v.size();
  return n;
}

std::vector<NamedWeight> Sequential::get_weights() const {
  std::vector<NamedWeight> out;
  for (const auto& v : variables_)
    out.push_back({v.path, v.shape, std::vector<float>(v.value.data(), v.value.data() + v.size())});
  return out;
}

std::optional<OptimizerState> Sequential::optimizer_state() const {
  if (!optimizer_ || !optimizer_built_) return std::nullopt;
  std::vector<const Variable*> trainable;
  for (const auto& v : variables_)
    if (v.trainable) trainable.push_back(&v);
  OptimizerState state;
  state.iterations = optimizer_->iterations();
  if (!optimizer_->has_schedule())
    state.learning_rate = static_cast<float>(optimizer_->learning_rate());
  for (const Optimizer::SlotVariable& slot : optimizer_->keras_slots()) {
    const Variable& v = *trainable.at(slot.variable);
    state.slot_variables.push_back(
        {v.path + " " + slot.kind, v.shape,
         std::vector<float>(slot.value->data(), slot.value->data() + slot.value->size())});
  }
  return state;
}

void Sequential::set_optimizer_state(const OptimizerState& state, const std::string& source) {
  if (!compiled() || !built())
    throw InputError(source, "the model must be compiled and built before its optimizer state");
  build_optimizer();
  std::vector<const Variable*> trainable;
  for (const auto& v : variables_)
    if (v.trainable) trainable.push_back(&v);
  const auto order = optimizer_->keras_slots();
  const std::string what = optimizer_->name() + " optimizer of this model";
  if (state.slot_variables.size() != order.size()) {
    throw InputError(source, "holds " +
                                 counted(static_cast<long long>(state.slot_variables.size()),
                                         "optimizer slot variable") +
                                 " but the " + what + " has " + std::to_string(order.size()) +
                                 " (was it saved with another optimizer or its options?)");
  }
  if (state.iterations < 0) throw InputError(source, "the optimizer's iteration count is negative");
  std::vector<Matrix> values;
  values.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    const Matrix& slot = *order[i].value;
    const NamedWeight& saved = state.slot_variables[i];
    if (static_cast<Index>(saved.values.size()) != slot.size()) {
      throw InputError(source, "optimizer slot " + std::to_string(i) + " (" +
                                   trainable.at(order[i].variable)->path + " " + order[i].kind +
                                   ") has " + std::to_string(saved.values.size()) +
                                   " values but needs " + std::to_string(slot.size()));
    }
    values.emplace_back(slot.rows(), slot.cols());
    std::copy(saved.values.begin(), saved.values.end(), values.back().data());
  }
  optimizer_->set_state(state.iterations, values);
  if (state.learning_rate && !optimizer_->has_schedule())
    optimizer_->set_learning_rate(*state.learning_rate);
}

void Sequential::set_weights(const std::vector<NamedWeight>& weights, const std::string& source) {
  if (!built())
    throw InputError(source, "the model has no input shape yet; add an InputLayer to its config");
  for (auto& v : variables_) {
    auto it = std::find_if(weights.begin(), weights.end(),
                           [&](const NamedWeight& w) { return w.path == v.path; });
    if (it == weights.end())
      throw InputError(source, "has no weights for variable \"" + v.path + "\"");
    if (it->shape != v.shape || static_cast<int64_t>(it->values.size()) != v.size()) {
      const auto text = [](const Shape& shape) {
        std::string out = "[";
        for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
        return out + "]";
      };
      throw InputError(source + ": weights[" + std::to_string(it - weights.begin()) + "].shape",
                       "is " + text(it->shape) + ", but this model's \"" + v.path +
                           "\" has shape " + text(v.shape) +
                           " (the model file was saved from another model)");
    }
    std::copy(it->values.begin(), it->values.end(), v.value.data());
  }
  for (const auto& w : weights) {
    if (std::none_of(variables_.begin(), variables_.end(),
                     [&](const Variable& v) { return v.path == w.path; }))
      throw InputError(source, "has weights \"" + w.path + "\" that the model does not have");
  }
}

}  // namespace fitbench
