// Tests of experiment files (core/io/experiment.h): a real Keras 3 to_json() document parses, every
// field survives a write/read round trip, every error names its exact place, relative paths are
// resolved against the file's folder, and every example in resources/examples reads.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>
#include <optional>

#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/io/history_file.h"
#include "core/io/json_file.h"
#include "core/io/keras_json.h"
#include "tests/core/input_error.h"

using namespace fitbench;
using OrderedJson = nlohmann::ordered_json;

namespace {

using test::error_of;

// A JSON value as compact text, for readable QCOMPARE failures.
QString text(const OrderedJson& value) { return QString::fromStdString(value.dump()); }

void write_text(const std::filesystem::path& file, const std::string& text) {
  std::filesystem::create_directories(file.parent_path());
  std::ofstream(file, std::ios::binary) << text;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Printed by Keras 3.8 (JAX backend) for
//   model = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1,
//   activation="sigmoid")]) model.compile(optimizer=keras.optimizers.SGD(learning_rate=0.2),
//   loss="binary_crossentropy",
//                 metrics=["accuracy"])
//   print(model.to_json())
// (one line in Keras's output; wrapped here).
const char* kKerasToJson = R"({"module": "keras", "class_name": "Sequential", "config": {"name":
"sequential", "trainable": true, "dtype": {"module": "keras", "class_name": "DTypePolicy", "config":
{"name": "float32"}, "registered_name": null}, "layers": [{"module": "keras.layers", "class_name":
"InputLayer", "config": {"batch_shape": [null, 4], "dtype": "float32", "sparse": false, "ragged":
false, "name": "input_layer", "optional": false}, "registered_name": null}, {"module":
"keras.layers", "class_name": "Dense", "config": {"name": "dense", "trainable": true, "dtype":
{"module": "keras", "class_name": "DTypePolicy", "config": {"name": "float32"}, "registered_name":
null}, "units": 1, "activation": "sigmoid", "use_bias": true, "kernel_initializer": {"module":
"keras.initializers", "class_name": "GlorotUniform", "config": {"seed": null}, "registered_name":
null}, "bias_initializer": {"module": "keras.initializers", "class_name": "Zeros", "config": {},
"registered_name": null}, "kernel_regularizer": null, "bias_regularizer": null, "kernel_constraint":
null, "bias_constraint": null, "quantization_config": null}, "registered_name": null,
"build_config": {"input_shape": [null, 4]}}], "build_input_shape": [null, 4]}, "registered_name":
null, "build_config": {"input_shape": [null, 4]}, "compile_config": {"optimizer": {"module":
"keras.optimizers", "class_name": "SGD", "config": {"name": "SGD", "learning_rate":
0.20000000298023224, "weight_decay": null, "clipnorm": null, "global_clipnorm": null, "clipvalue":
null, "use_ema": false, "ema_momentum": 0.99, "ema_overwrite_frequency": null, "loss_scale_factor":
null, "gradient_accumulation_steps": null, "momentum": 0.0, "nesterov": false}, "registered_name":
null}, "loss": "binary_crossentropy", "loss_weights": null, "metrics": ["accuracy"],
"weighted_metrics": null, "run_eagerly": false, "steps_per_execution": 1, "jit_compile": true}})";

// A valid experiment that the error rows modify in one place each.
const char* kBase = R"({
  "name": "base",
  "seed": 7,
  "devices": {"type": "cpu", "count": 2},
  "distribution": {"class_name": "ModelParallel",
                   "mesh": {"shape": [2, 1], "axis_names": ["batch", "model"]},
                   "layout_map": {"dense.*kernel": [null, "model"]}, "batch_dim_name": "batch"},
  "data": {"generator": "circle", "samples": 100, "noise": 0.1, "seed": 3},
  "model": {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 2], "name": "input_layer"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 4, "activation": "relu"}},
    {"class_name": "Dense", "config": {"name": "dense_1", "units": 1, "activation": "sigmoid"}}]}},
  "compile": {"optimizer": "adam", "loss": "binary_crossentropy", "metrics": ["accuracy"]},
  "fit": {"epochs": 2, "batch_size": 8,
          "callbacks": [{"class_name": "EarlyStopping", "config": {"patience": 2}}]}
})";

// --- field-by-field comparison (the spec structs have no operator==) ---

void compare_schedule(const std::optional<ScheduleSpec>& a, const std::optional<ScheduleSpec>& b) {
  QCOMPARE(a.has_value(), b.has_value());
  if (!a) return;
  QCOMPARE(a->class_name, b->class_name);
  QCOMPARE(a->initial_learning_rate, b->initial_learning_rate);
  QCOMPARE(a->decay_steps, b->decay_steps);
  QCOMPARE(a->decay_rate, b->decay_rate);
  QCOMPARE(a->staircase, b->staircase);
  QCOMPARE(a->alpha, b->alpha);
  QCOMPARE(a->warmup_target, b->warmup_target);
  QCOMPARE(a->warmup_steps, b->warmup_steps);
  QCOMPARE(a->boundaries, b->boundaries);
  QCOMPARE(a->values, b->values);
}

void compare_initializer(const InitializerSpec& a, const InitializerSpec& b) {
  QCOMPARE(a.name, b.name);
  QCOMPARE(a.mean, b.mean);
  QCOMPARE(a.stddev, b.stddev);
  QCOMPARE(a.minval, b.minval);
  QCOMPARE(a.maxval, b.maxval);
  QCOMPARE(a.seed, b.seed);
}

void compare_model(const ModelSpec& a, const ModelSpec& b) {
  QCOMPARE(a.name, b.name);
  QCOMPARE(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const LayerSpec& x = a.layers[i];
    const LayerSpec& y = b.layers[i];
    QCOMPARE(x.class_name, y.class_name);
    QCOMPARE(x.name, y.name);
    QCOMPARE(x.trainable, y.trainable);
    QCOMPARE(x.shape, y.shape);
    QCOMPARE(x.units, y.units);
    QCOMPARE(x.use_bias, y.use_bias);
    compare_initializer(x.kernel_initializer, y.kernel_initializer);
    if (QTest::currentTestFailed()) return;
    compare_initializer(x.bias_initializer, y.bias_initializer);
    if (QTest::currentTestFailed()) return;
    QCOMPARE(x.kernel_regularizer.l1, y.kernel_regularizer.l1);
    QCOMPARE(x.kernel_regularizer.l2, y.kernel_regularizer.l2);
    QCOMPARE(x.bias_regularizer.l1, y.bias_regularizer.l1);
    QCOMPARE(x.bias_regularizer.l2, y.bias_regularizer.l2);
    QCOMPARE(x.activation, y.activation);
    QCOMPARE(x.rate, y.rate);
    QCOMPARE(x.seed, y.seed);
    QCOMPARE(x.target_shape, y.target_shape);
    QCOMPARE(x.filters, y.filters);
    QCOMPARE(x.kernel_size, y.kernel_size);
    QCOMPARE(x.strides, y.strides);
    QCOMPARE(x.padding, y.padding);
    QCOMPARE(x.pool_size, y.pool_size);
    QCOMPARE(x.scale, y.scale);
    QCOMPARE(x.offset, y.offset);
    QCOMPARE(x.axis, y.axis);
    QCOMPARE(x.epsilon, y.epsilon);
    QCOMPARE(x.scale_gamma, y.scale_gamma);
    QCOMPARE(x.center, y.center);
    QCOMPARE(x.momentum, y.momentum);
    compare_initializer(x.moving_mean_initializer, y.moving_mean_initializer);
    compare_initializer(x.moving_variance_initializer, y.moving_variance_initializer);
    for (const auto member : {&LayerSpec::gamma_initializer, &LayerSpec::beta_initializer}) {
      compare_initializer(x.*member, y.*member);
      if (QTest::currentTestFailed()) return;
    }
    for (const auto member : {&LayerSpec::gamma_regularizer, &LayerSpec::beta_regularizer}) {
      QCOMPARE((x.*member).l1, (y.*member).l1);
      QCOMPARE((x.*member).l2, (y.*member).l2);
    }
  }
}

void compare_compile(const CompileOptions& a, const CompileOptions& b) {
  const OptimizerSpec& x = a.optimizer;
  const OptimizerSpec& y = b.optimizer;
  QCOMPARE(x.class_name, y.class_name);
  QCOMPARE(x.learning_rate, y.learning_rate);
  compare_schedule(x.schedule, y.schedule);
  if (QTest::currentTestFailed()) return;
  QCOMPARE(x.momentum, y.momentum);
  QCOMPARE(x.nesterov, y.nesterov);
  QCOMPARE(x.beta_1, y.beta_1);
  QCOMPARE(x.beta_2, y.beta_2);
  QCOMPARE(x.epsilon, y.epsilon);
  QCOMPARE(x.amsgrad, y.amsgrad);
  QCOMPARE(x.weight_decay, y.weight_decay);
  QCOMPARE(x.rho, y.rho);
  QCOMPARE(x.centered, y.centered);
  QCOMPARE(x.initial_accumulator_value, y.initial_accumulator_value);
  QCOMPARE(x.clipnorm, y.clipnorm);
  QCOMPARE(x.clipvalue, y.clipvalue);
  QCOMPARE(x.global_clipnorm, y.global_clipnorm);
  QCOMPARE(a.loss.name, b.loss.name);
  QCOMPARE(a.loss.from_logits, b.loss.from_logits);
  QCOMPARE(a.loss.delta, b.loss.delta);
  QCOMPARE(a.metrics, b.metrics);
  QCOMPARE(a.all_metric_names(), b.all_metric_names());
}

void compare_fit(const FitOptions& a, const FitOptions& b) {
  QCOMPARE(a.epochs, b.epochs);
  QCOMPARE(a.batch_size, b.batch_size);
  QCOMPARE(a.validation_split, b.validation_split);
  QCOMPARE(a.shuffle, b.shuffle);
  QCOMPARE(a.verbose, b.verbose);
  QCOMPARE(a.initial_epoch, b.initial_epoch);
  QCOMPARE(a.callbacks.size(), b.callbacks.size());
  for (size_t i = 0; i < a.callbacks.size(); ++i) {
    const CallbackSpec& x = a.callbacks[i];
    const CallbackSpec& y = b.callbacks[i];
    QCOMPARE(x.class_name, y.class_name);
    QCOMPARE(x.monitor, y.monitor);
    QCOMPARE(x.mode, y.mode);
    QCOMPARE(x.verbose, y.verbose);
    QCOMPARE(x.min_delta, y.min_delta);
    QCOMPARE(x.min_delta_set, y.min_delta_set);
    QCOMPARE(x.patience, y.patience);
    QCOMPARE(x.patience_set, y.patience_set);
    QCOMPARE(x.restore_best_weights, y.restore_best_weights);
    QCOMPARE(x.start_from_epoch, y.start_from_epoch);
    QCOMPARE(x.baseline, y.baseline);
    QCOMPARE(x.filepath, y.filepath);
    QCOMPARE(x.save_best_only, y.save_best_only);
    QCOMPARE(x.separator, y.separator);
    QCOMPARE(x.append, y.append);
    QCOMPARE(x.factor, y.factor);
    QCOMPARE(x.cooldown, y.cooldown);
    QCOMPARE(x.min_lr, y.min_lr);
    compare_schedule(x.schedule, y.schedule);
    if (QTest::currentTestFailed()) return;
  }
}

void compare_experiment(const ExperimentSpec& a, const ExperimentSpec& b) {
  QCOMPARE(a.name, b.name);
  QCOMPARE(a.description, b.description);
  QCOMPARE(a.seed, b.seed);
  QCOMPARE(a.devices.type, b.devices.type);
  QCOMPARE(a.devices.count, b.devices.count);
  QCOMPARE(a.devices.speed, b.devices.speed);
  QCOMPARE(a.devices.link_latency_us, b.devices.link_latency_us);
  QCOMPARE(a.devices.link_gbps, b.devices.link_gbps);
  QCOMPARE(a.devices.allreduce, b.devices.allreduce);
  QCOMPARE(a.devices.batch_norm_statistics, b.devices.batch_norm_statistics);
  QCOMPARE(a.distribution.class_name, b.distribution.class_name);
  QCOMPARE(a.distribution.mesh_shape, b.distribution.mesh_shape);
  QCOMPARE(a.distribution.axis_names, b.distribution.axis_names);
  QCOMPARE(a.distribution.layout_map, b.distribution.layout_map);
  QCOMPARE(a.distribution.batch_dim_name, b.distribution.batch_dim_name);
  QCOMPARE(a.data.generator, b.data.generator);
  QCOMPARE(a.data.samples, b.data.samples);
  QCOMPARE(a.data.noise, b.data.noise);
  QCOMPARE(a.data.seed, b.data.seed);
  QCOMPARE(a.data.features, b.data.features);
  QCOMPARE(a.data.classes, b.data.classes);
  QCOMPARE(a.data.csv, b.data.csv);
  QCOMPARE(a.data.target, b.data.target);
  QCOMPARE(a.data.features_columns, b.data.features_columns);
  QCOMPARE(a.data.delimiter, b.data.delimiter);
  QCOMPARE(a.data.standardize, b.data.standardize);
  compare_model(a.model, b.model);
  if (QTest::currentTestFailed()) return;
  compare_compile(a.compile, b.compile);
  if (QTest::currentTestFailed()) return;
  compare_fit(a.fit, b.fit);
  if (QTest::currentTestFailed()) return;
  QCOMPARE(a.initial_weights, b.initial_weights);
}

CallbackSpec callback(const std::string& class_name, const std::string& monitor = "val_loss",
                      const std::string& mode = "auto") {
  CallbackSpec cb;
  cb.class_name = class_name;
  cb.monitor = monitor;
  cb.mode = mode;
  return cb;
}

LayerSpec dense(const std::string& name, int64_t units, const std::string& activation) {
  LayerSpec l;
  l.class_name = "Dense";
  l.name = name;
  l.units = units;
  l.activation = activation;
  return l;
}

// Every field away from its default somewhere. `sorted_layouts` keeps the layout map in key
// order, which survives the std::map-based nlohmann::json of experiment_to_json.
ExperimentSpec rich_spec(bool sorted_layouts) {
  ExperimentSpec s;
  s.name = "Round trip";
  s.description = "Some *Markdown*,\nwith a newline and \"quotes\".";
  s.seed = 12345678901234567ULL;
  s.devices = {.type = "gpu",
               .count = 3,
               .speed = {1.0, 0.5, 0.25},
               .link_latency_us = 50.0,
               .link_gbps = 2.5,
               .allreduce = "naive",
               .batch_norm_statistics = "per_device"};
  s.distribution.class_name = "ModelParallel";
  s.distribution.mesh_shape = {2, 2};
  s.distribution.axis_names = {"batch", "model"};
  s.distribution.layout_map = {{"dense/bias", {"model"}}, {"dense/kernel", {"", "model"}}};
  if (!sorted_layouts) s.distribution.layout_map.push_back({"a.*", {"batch", ""}});
  s.distribution.batch_dim_name = "batch";
  s.data.generator.clear();
  s.data.csv = "/data/points.csv";
  s.data.target = {"label_a", "label_b"};
  s.data.features_columns = {"x1", "x0"};
  s.data.delimiter = ';';
  s.data.standardize = true;

  s.model.name = "net";
  LayerSpec input;
  input.class_name = "InputLayer";
  input.name = "in";
  input.shape = {3};
  LayerSpec d1 = dense("d1", 5, "leaky_relu");
  d1.trainable = false;
  d1.use_bias = false;
  d1.kernel_initializer.name = "random_normal";
  d1.kernel_initializer.mean = 0.5;
  d1.kernel_initializer.stddev = 0.25;
  d1.kernel_initializer.seed = 42;
  d1.bias_initializer.name = "ones";
  d1.kernel_regularizer = {.l1 = 0.001, .l2 = 0.002};
  d1.bias_regularizer = {.l2 = 0.5};
  LayerSpec act;
  act.class_name = "Activation";
  act.activation = "silu";
  LayerSpec drop;
  drop.class_name = "Dropout";
  drop.name = "drop";
  drop.rate = 0.25;
  drop.seed = 9;
  LayerSpec d2 = dense("", 2, "softmax");
  d2.kernel_initializer.name = "random_uniform";
  d2.kernel_initializer.minval = -0.1;
  d2.kernel_initializer.maxval = 0.2;
  d2.bias_initializer.name = "he_normal";
  d2.bias_initializer.seed = 5;
  d2.bias_regularizer = {.l1 = 0.25};
  s.model.layers = {input, d1, act, drop, d2};

  s.compile.optimizer.class_name = "AdamW";
  ScheduleSpec cosine;
  cosine.class_name = "CosineDecay";
  cosine.initial_learning_rate = 0.1;
  cosine.decay_steps = 1000;
  cosine.alpha = 0.1;
  cosine.warmup_target = 0.2;
  cosine.warmup_steps = 100;
  s.compile.optimizer.schedule = cosine;
  s.compile.optimizer.beta_1 = 0.8;
  s.compile.optimizer.beta_2 = 0.99;
  s.compile.optimizer.epsilon = 1e-6;
  s.compile.optimizer.amsgrad = true;
  s.compile.optimizer.weight_decay = 0.01;
  s.compile.optimizer.global_clipnorm = 1.5;
  s.compile.loss = {.name = "categorical_crossentropy", .from_logits = true};
  s.compile.metrics = {"accuracy", "precision", "mse"};
  s.compile.metric_names = {"", "p", ""};  // Precision(name="p"): written as its object

  s.fit.epochs = 7;
  s.fit.batch_size = 12;
  s.fit.validation_split = 0.25;
  s.fit.shuffle = false;
  s.fit.verbose = 0;
  s.fit.initial_epoch = 2;
  CallbackSpec early = callback("EarlyStopping", "val_accuracy", "max");
  early.min_delta = 0.01;
  early.min_delta_set = 0.01;
  early.patience = 3;
  early.patience_set = 3;
  early.restore_best_weights = true;
  early.verbose = 1;
  early.start_from_epoch = 1;
  early.baseline = 0.5;
  CallbackSpec checkpoint = callback("ModelCheckpoint", "val_loss", "min");
  checkpoint.filepath = "best.json";
  checkpoint.save_best_only = true;
  CallbackSpec csv = callback("CSVLogger");
  csv.filepath = "log.csv";
  csv.separator = ";";
  csv.append = true;
  CallbackSpec plateau = callback("ReduceLROnPlateau", "loss", "min");
  plateau.min_delta = 0.001;
  plateau.min_delta_set = 0.001;
  plateau.patience = 4;
  plateau.patience_set = 4;
  plateau.factor = 0.5;
  plateau.cooldown = 2;
  plateau.min_lr = 1e-5;
  CallbackSpec exponential = callback("LearningRateScheduler");
  exponential.schedule.emplace();
  exponential.schedule->class_name = "ExponentialDecay";
  exponential.schedule->initial_learning_rate = 0.1;
  exponential.schedule->decay_steps = 10;
  exponential.schedule->decay_rate = 0.5;
  exponential.schedule->staircase = true;
  CallbackSpec piecewise = callback("LearningRateScheduler");
  piecewise.schedule.emplace();
  piecewise.schedule->class_name = "PiecewiseConstantDecay";
  piecewise.schedule->boundaries = {5, 10};
  piecewise.schedule->values = {0.1, 0.01, 0.001};
  CallbackSpec nan = callback("TerminateOnNaN");
  s.fit.callbacks = {early, checkpoint, csv, plateau, exponential, piecewise, nan};
  s.initial_weights = "/models/start.json";
  return s;
}

// The other optimizers, losses and a generator data set.
ExperimentSpec simple_spec(const std::string& optimizer) {
  ExperimentSpec s;
  s.name = "simple " + optimizer;
  s.data.generator = "blobs";
  s.data.samples = 90;
  s.data.noise = 0.5;
  s.data.seed = 4;
  s.data.features = 3;
  s.data.classes = 4;
  s.distribution.class_name = "DataParallel";
  LayerSpec input;
  input.class_name = "InputLayer";
  input.shape = {3};
  s.model.layers = {input, dense("", 4, "linear")};
  OptimizerSpec& o = s.compile.optimizer;
  o.class_name = optimizer;
  o.learning_rate = 0.125;
  if (optimizer == "SGD") {
    o.momentum = 0.9;
    o.nesterov = true;
    o.clipnorm = 2.0;
    s.compile.loss = {.name = "huber", .delta = 2.5};
  } else if (optimizer == "RMSprop") {
    o.rho = 0.8;
    o.momentum = 0.5;
    o.centered = true;
    o.epsilon = 1e-5;
    o.clipvalue = 0.5;
    s.compile.loss = {.name = "sparse_categorical_crossentropy", .from_logits = true};
  } else if (optimizer == "Adagrad") {
    o.initial_accumulator_value = 0.2;
    o.epsilon = 1e-4;
    o.weight_decay = 0.001;
    s.compile.loss = {.name = "mean_absolute_error"};
  } else {
    o.learning_rate.reset();
    s.compile.loss = {.name = "binary_crossentropy"};
  }
  return s;
}

ExperimentSpec make_spec(int which) {
  switch (which) {
    case 0:
      return rich_spec(true);
    case 1:
      return simple_spec("SGD");
    case 2:
      return simple_spec("RMSprop");
    case 3: {
      // An image-shaped input, Reshape and Flatten (the blobs' 3 features as (1, 3)).
      ExperimentSpec s = simple_spec("Adagrad");
      s.model.layers.front().shape = {1, 3};
      LayerSpec reshape;
      reshape.class_name = "Reshape";
      reshape.name = "to_columns";
      reshape.target_shape = {-1, 1};
      LayerSpec flatten;
      flatten.class_name = "Flatten";
      // A LayerNormalization with every field away from Keras's defaults, over the columns' one
      // channel by its index.
      LayerSpec norm;
      norm.class_name = "LayerNormalization";
      norm.axis = {2};
      norm.epsilon = 0.01;
      norm.scale_gamma = false;
      norm.gamma_initializer.name = "random_normal";
      norm.gamma_initializer.stddev = 0.5;
      norm.gamma_initializer.seed = 3;
      norm.beta_initializer.name = "ones";
      norm.gamma_regularizer.l2 = 0.01;
      norm.beta_regularizer.l1 = 0.02;
      // And a BatchNormalization likewise.
      LayerSpec batch = norm;
      batch.class_name = "BatchNormalization";
      batch.axis = {-1};
      batch.momentum = 0.8;
      batch.moving_mean_initializer.name = "random_uniform";
      batch.moving_mean_initializer.maxval = 0.5;
      batch.moving_variance_initializer.name = "ones";
      s.model.layers.insert(s.model.layers.begin() + 1, {reshape, norm, batch, flatten});
      return s;
    }
    default:
      return simple_spec("Adam");
  }
}

}  // namespace

class TestExperimentIo : public QObject {
  Q_OBJECT

 private slots:
  void keras_to_json_parses();
  void round_trip_through_json_data();
  void round_trip_through_json();
  void round_trip_through_file_keeps_layout_order();
  void written_file_is_keras_shaped();
  void keras_forms_data();
  void keras_forms();
  void errors_data();
  void errors();
  void invalid_json_names_line_and_column();
  void duplicate_keys_name_their_path();
  void deep_nesting_and_huge_keys_are_refused();
  void history_csv_writes_python_floats();
  void missing_file();
  void relative_paths_are_resolved();
  void examples_read_data();
  void examples_read();
  void seed_example_matches_the_reference_script();
};

void TestExperimentIo::keras_to_json_parses() {
  const OrderedJson keras = OrderedJson::parse(kKerasToJson);
  const ModelSpec model = parse_model_config(keras, "model");
  QCOMPARE(model.name, std::string("sequential"));
  QCOMPARE(model.layers.size(), size_t{2});
  QCOMPARE(model.layers[0].class_name, std::string("InputLayer"));
  QCOMPARE(model.layers[0].name, std::string("input_layer"));
  QCOMPARE(model.layers[0].shape, std::vector<int64_t>{4});
  const LayerSpec& d = model.layers[1];
  QCOMPARE(d.class_name, std::string("Dense"));
  QCOMPARE(d.name, std::string("dense"));
  QCOMPARE(d.units, int64_t{1});
  QCOMPARE(d.activation, std::string("sigmoid"));
  QVERIFY(d.use_bias);
  QVERIFY(d.trainable);
  QCOMPARE(d.kernel_initializer.name, std::string("glorot_uniform"));
  QVERIFY(!d.kernel_initializer.seed);
  QCOMPARE(d.bias_initializer.name, std::string("zeros"));
  QVERIFY(!d.kernel_regularizer.active());

  // As an experiment's model without a compile section, its compile_config is used.
  OrderedJson doc = OrderedJson::parse(kBase);
  doc["model"] = keras;
  doc.erase("compile");
  doc["data"] = {{"generator", "seed"}, {"samples", 64}};
  doc.erase("distribution");
  const ExperimentSpec spec = parse_experiment(doc, "keras.json", {});
  QCOMPARE(spec.compile.optimizer.class_name, std::string("SGD"));
  QCOMPARE(spec.compile.optimizer.learning_rate, std::optional<double>(0.20000000298023224));
  QCOMPARE(spec.compile.optimizer.momentum, 0.0);
  QCOMPARE(spec.compile.loss.name, std::string("binary_crossentropy"));
  QCOMPARE(spec.compile.metrics, std::vector<std::string>{"accuracy"});
}

void TestExperimentIo::round_trip_through_json_data() {
  QTest::addColumn<int>("which");
  QTest::newRow("csv, ModelParallel, AdamW, every callback") << 0;
  QTest::newRow("SGD, huber") << 1;
  QTest::newRow("RMSprop, sparse from logits") << 2;
  QTest::newRow("Adagrad, mae, Reshape and Flatten") << 3;
  QTest::newRow("Adam with its default learning rate") << 4;
}

void TestExperimentIo::round_trip_through_json() {
  QFETCH(int, which);
  const ExperimentSpec spec = make_spec(which);
  const nlohmann::json doc = experiment_to_json(spec);
  compare_experiment(parse_experiment(doc, "", {}), spec);
  if (QTest::currentTestFailed()) return;
  // The model and compile sections alone.
  compare_model(parse_model_config(model_config_to_json(spec.model), "model"), spec.model);
  if (QTest::currentTestFailed()) return;
  compare_compile(parse_compile(compile_to_json(spec.compile), "compile"), spec.compile);
}

void TestExperimentIo::round_trip_through_file_keeps_layout_order() {
  QTemporaryDir dir;
  const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "exp.json";
  const ExperimentSpec spec = rich_spec(false);
  QCOMPARE(spec.distribution.layout_map.back().first, std::string("a.*"));
  write_experiment(spec, file);
  compare_experiment(read_experiment(file), spec);
  // Overwriting leaves no temporary file behind.
  write_experiment(make_spec(1), file);
  compare_experiment(read_experiment(file), make_spec(1));
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);
}

void TestExperimentIo::written_file_is_keras_shaped() {
  QTemporaryDir dir;
  const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "exp.json";
  write_experiment(make_spec(1), file);
  std::ifstream in(file);
  const std::string written((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  QVERIFY(written.rfind("{\n  \"name\": \"simple SGD\",\n", 0) == 0);  // 2-space indent
  const OrderedJson doc = OrderedJson::parse(written);
  std::vector<std::string> keys;
  for (auto it = doc.begin(); it != doc.end(); ++it) keys.push_back(it.key());
  QCOMPARE(keys,
           (std::vector<std::string>{"name", "distribution", "data", "model", "compile", "fit"}));
  const OrderedJson& model = doc["model"];
  QCOMPARE(text(model["class_name"]), text(OrderedJson("Sequential")));
  QCOMPARE(text(model["config"]["layers"][0]["class_name"]), text(OrderedJson("InputLayer")));
  QCOMPARE(text(model["config"]["layers"][0]["config"]["batch_shape"]),
           text(OrderedJson::parse("[null, 3]")));
  const OrderedJson& dense = model["config"]["layers"][1];
  QCOMPARE(text(dense["module"]), text(OrderedJson("keras.layers")));
  QCOMPARE(
      text(dense["config"]["kernel_initializer"]),
      text(OrderedJson::parse(R"({"module": "keras.initializers", "class_name": "GlorotUniform",
                                  "config": {"seed": null}})")));
  QCOMPARE(text(doc["compile"]["optimizer"]["class_name"]), text(OrderedJson("SGD")));
  QCOMPARE(text(doc["compile"]["optimizer"]["config"]["learning_rate"]), text(OrderedJson(0.125)));
  QCOMPARE(text(doc["compile"]["loss"]["class_name"]), text(OrderedJson("Huber")));
}

void TestExperimentIo::keras_forms_data() {
  QTest::addColumn<QString>("pointer");
  QTest::addColumn<QString>("value");
  QTest::addColumn<QString>("check");
  QTest::addColumn<QString>("expected");
  const auto row = [](const char* name, const char* pointer, const char* value, const char* check,
                      const char* expected) {
    QTest::newRow(name) << pointer << value << check << expected;
  };
  const char* k = "/model/config/layers/1/config/kernel_initializer";
  row("initializer string", k, R"("he_normal")", "kernel_initializer", "he_normal");
  row("initializer class string", k, R"("LecunUniform")", "kernel_initializer", "lecun_uniform");
  row("initializer alias", k, R"("normal")", "kernel_initializer", "random_normal");
  row("RandomNormal dict", k,
      R"({"class_name": "RandomNormal", "config": {"mean": 1.5, "stddev": 0.5, "seed": 3}})",
      "kernel_initializer", "random_normal 1.5 0.5 3");
  row("RandomUniform dict", k,
      R"({"module": "keras.initializers", "class_name": "RandomUniform",
          "config": {"minval": -2, "maxval": 2, "seed": null}, "registered_name": null})",
      "kernel_initializer", "random_uniform -2 2 -");
  const char* r = "/model/config/layers/1/config/kernel_regularizer";
  row("regularizer l2 string", r, R"("l2")", "kernel_regularizer", "0 0.01");
  row("regularizer L1 dict", r, R"({"class_name": "L1", "config": {"l1": 0.5}})",
      "kernel_regularizer", "0.5 0");
  row("regularizer L1L2 dict", r,
      R"({"module": "keras.regularizers", "class_name": "L1L2", "config": {"l1": 0.25, "l2": 0.125}})",
      "kernel_regularizer", "0.25 0.125");
  row("regularizer L2 without config", r, R"({"class_name": "L2"})", "kernel_regularizer",
      "0 0.01");
  row("swish is silu", "/model/config/layers/1/config/activation", R"("swish")", "activation",
      "silu");
  row("null activation is linear", "/model/config/layers/1/config/activation", "null", "activation",
      "linear");
  row("input_shape on the first Dense", "/model/config/layers",
      R"([{"class_name": "Dense", "config": {"units": 2, "input_shape": [5]}}])", "input",
      "5 layers=2");
  row("Keras 2 batch_input_shape", "/model/config/layers",
      R"([{"class_name": "Dense", "config": {"units": 2, "batch_input_shape": [null, 6]}}])",
      "input", "6 layers=2");
  row("build_input_shape only", "/model/config",
      R"({"layers": [{"class_name": "Dense", "config": {"units": 2}}], "build_input_shape": [null, 7]})",
      "input", "7 layers=2");
  row("bare get_config()", "/model",
      R"({"name": "bare", "layers": [{"class_name": "InputLayer", "config": {"shape": [8]}},
          {"class_name": "Dense", "config": {"units": 1}}]})",
      "input", "8 layers=2");
  row("optimizer any case", "/compile/optimizer", R"("RmsProp")", "optimizer", "RMSprop -");
  row("optimizer dict", "/compile/optimizer",
      R"({"module": "keras.optimizers", "class_name": "Adagrad", "config": {"name": "adagrad",
          "learning_rate": 0.5, "use_ema": false, "ema_momentum": 0.99, "loss_scale_factor": null}})",
      "optimizer", "Adagrad 0.5");
  row("default optimizer is rmsprop", "/compile/optimizer", "null", "optimizer", "RMSprop -");
  row("schedule as learning_rate", "/compile/optimizer",
      R"({"class_name": "SGD", "config": {"learning_rate": {"module": "keras.optimizers.schedules",
          "class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1,
          "decay_steps": 100, "decay_rate": 0.9, "staircase": false, "name": "ExponentialDecay"},
          "registered_name": null}}})",
      "optimizer", "SGD schedule ExponentialDecay 0.1 100 0.9");
  row("loss bce", "/compile/loss", R"("bce")", "loss", "binary_crossentropy 0 1");
  row("loss mse", "/compile/loss", R"("mse")", "loss", "mean_squared_error 0 1");
  row("loss mean_squared_error", "/compile/loss", R"("mean_squared_error")", "loss",
      "mean_squared_error 0 1");
  row("loss mae", "/compile/loss", R"("mae")", "loss", "mean_absolute_error 0 1");
  row("loss huber", "/compile/loss", R"("huber")", "loss", "huber 0 1");
  row("loss categorical", "/compile/loss", R"("categorical_crossentropy")", "loss",
      "categorical_crossentropy 0 1");
  row("loss class string", "/compile/loss", R"("SparseCategoricalCrossentropy")", "loss",
      "sparse_categorical_crossentropy 0 1");
  row("loss dict from_logits", "/compile/loss",
      R"({"module": "keras.losses", "class_name": "BinaryCrossentropy", "config": {"name":
          "binary_crossentropy", "reduction": "sum_over_batch_size", "from_logits": true,
          "label_smoothing": 0.0, "axis": -1, "dtype": null}, "registered_name": null})",
      "loss", "binary_crossentropy 1 1");
  row("loss Huber delta", "/compile/loss", R"({"class_name": "Huber", "config": {"delta": 0.5}})",
      "loss", "huber 0 0.5");
  row("metric dicts", "/compile/metrics",
      R"(["acc", {"class_name": "Precision", "config": {"name": "precision", "thresholds": null}},
          {"module": "keras.metrics", "class_name": "BinaryAccuracy",
           "config": {"name": "binary_accuracy", "dtype": "float32", "threshold": 0.5}}])",
      "metrics", "acc precision binary_accuracy");
  row("metric objects' own names", "/compile/metrics",
      R"([{"class_name": "Precision", "config": {"name": "p"}},
          {"class_name": "Recall", "config": {"name": "recall_1"}}, "mae"])",
      "metrics", "precision=p recall=recall_1 mae");
  row("AUC object as Keras writes it", "/compile/metrics",
      R"([{"module": "keras.metrics", "class_name": "AUC", "config": {"name": "area",
           "dtype": "float32", "num_thresholds": 200, "curve": "ROC",
           "summation_method": "interpolation", "multi_label": false, "num_labels": null,
           "label_weights": null, "from_logits": false}, "registered_name": null}])",
      "metrics", "auc=area");
  row("verbose auto", "/fit/verbose", R"("auto")", "fit", "verbose=1 batch=8");
  row("batch_size null", "/fit/batch_size", "null", "fit", "verbose=1 batch=32");
  row("EarlyStopping without patience", "/fit/callbacks/0/config",
      R"({"monitor": "val_accuracy", "mode": "max", "verbose": 1})", "callback",
      "EarlyStopping val_accuracy max patience=- min_delta=-");
  row("ReduceLROnPlateau with both", "/fit/callbacks/0",
      R"({"class_name": "ReduceLROnPlateau", "config": {"patience": 5, "min_delta": 0.5}})",
      "callback", "ReduceLROnPlateau val_loss auto patience=5 min_delta=0.5");
}

// Applies one change to the base document and renders the field it checks as text.
void TestExperimentIo::keras_forms() {
  QFETCH(QString, pointer);
  QFETCH(QString, value);
  QFETCH(QString, check);
  QFETCH(QString, expected);
  OrderedJson doc = OrderedJson::parse(kBase);
  doc[OrderedJson::json_pointer(pointer.toStdString())] = OrderedJson::parse(value.toStdString());
  ExperimentSpec s;
  try {
    s = parse_experiment(doc, "", {});
  } catch (const InputError& e) {
    QFAIL(e.what());
  }
  const auto num = [](double v) { return QString::number(v); };
  const auto opt = [&](const auto& v) { return v ? num(static_cast<double>(*v)) : QString("-"); };
  QString got;
  const std::string c = check.toStdString();
  if (c == "kernel_initializer") {
    const InitializerSpec& i = s.model.layers[1].kernel_initializer;
    got = QString::fromStdString(i.name);
    if (i.name == "random_normal" && value.contains("mean")) {
      got += " " + num(i.mean) + " " + num(i.stddev) + " " + opt(i.seed);
    }
    if (i.name == "random_uniform" && value.contains("minval")) {
      got += " " + num(i.minval) + " " + num(i.maxval) + " " + opt(i.seed);
    }
  } else if (c == "kernel_regularizer") {
    got = num(s.model.layers[1].kernel_regularizer.l1) + " " +
          num(s.model.layers[1].kernel_regularizer.l2);
  } else if (c == "activation") {
    got = QString::fromStdString(s.model.layers[1].activation);
  } else if (c == "input") {
    QCOMPARE(s.model.layers[0].class_name, std::string("InputLayer"));
    got = QString::number(s.model.layers[0].shape.at(0)) +
          " layers=" + QString::number(s.model.layers.size());
  } else if (c == "optimizer") {
    const OptimizerSpec& o = s.compile.optimizer;
    got = QString::fromStdString(o.class_name) + " ";
    if (o.schedule) {
      got += "schedule " + QString::fromStdString(o.schedule->class_name) + " " +
             num(o.schedule->initial_learning_rate) + " " + num(o.schedule->decay_steps) + " " +
             num(o.schedule->decay_rate);
    } else {
      got += opt(o.learning_rate);
    }
  } else if (c == "loss") {
    got = QString::fromStdString(s.compile.loss.name) + " " + num(s.compile.loss.from_logits) +
          " " + num(s.compile.loss.delta);
  } else if (c == "metrics") {
    QStringList names;
    for (size_t i = 0; i < s.compile.metrics.size(); ++i) {
      names << QString::fromStdString(s.compile.metrics[i]);
      // An object's own name, as Keras logs it, after the identifier.
      if (s.compile.metric_name(i) != s.compile.metrics[i])
        names.back() += "=" + QString::fromStdString(s.compile.metric_name(i));
    }
    got = names.join(' ');
  } else if (c == "fit") {
    got = "verbose=" + num(s.fit.verbose) + " batch=" + num(s.fit.batch_size);
  } else if (c == "callback") {
    const CallbackSpec& cb = s.fit.callbacks.at(0);
    got = QString::fromStdString(cb.class_name + " " + cb.monitor + " " + cb.mode) +
          " patience=" + opt(cb.patience_set) + " min_delta=" + opt(cb.min_delta_set);
  }
  QCOMPARE(got, expected);
}

void TestExperimentIo::errors_data() {
  QTest::addColumn<QString>("pointer");
  QTest::addColumn<QString>("value");  // "" removes the key
  QTest::addColumn<QString>("place");
  QTest::addColumn<QString>("message");
  int count = 0;
  const auto row = [&count](const char* pointer, const char* value, const char* place,
                            const char* message) {
    QTest::addRow("%d %s", ++count, place)
        << pointer << value << QString("exp.json: ") + place << message;
  };
  row("/model/config/layers/1/config/unitz", "4", "model.config.layers[1].config.unitz",
      "unknown key; expected one of: name, trainable, dtype, units, activation, use_bias, "
      "kernel_initializer, bias_initializer, kernel_regularizer, bias_regularizer, "
      "activity_regularizer, kernel_constraint, bias_constraint, lora_rank, lora_alpha, "
      "quantization_config, input_shape, batch_shape, batch_input_shape");
  row("/model/config/layers/-", R"({"class_name": "LSTM", "config": {"units": 8}})",
      "model.config.layers[3].class_name",
      "\"LSTM\" is not supported by fitbench; expected one of: InputLayer, Dense, Conv2D, "
      "MaxPooling2D, AveragePooling2D, Activation, Dropout, Flatten, Reshape, Rescaling, "
      "GlobalAveragePooling2D, LayerNormalization, BatchNormalization");
  row("/model/config/layers/-",
      R"({"class_name": "MaxPooling2D", "config": {"pool_size": [2, 2], "strides": [2]}})",
      "model.config.layers[3].config.strides",
      "must be a positive integer or a list of two, such as [3, 3], got an array");
  row("/model/config/layers/-",
      R"({"class_name": "AveragePooling2D", "config": {"data_format": "channels_first"}})",
      "model.config.layers[3].config.data_format",
      "\"channels_first\" is not supported by fitbench (only \"channels_last\" is)");
  row("/model/config/layers/-", R"({"class_name": "Conv2D", "config": {"kernel_size": 3}})",
      "model.config.layers[3].config.filters", "is required (the number of output channels)");
  row("/model/config/layers/-",
      R"({"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": [3, 3, 3]}})",
      "model.config.layers[3].config.kernel_size",
      "must be a positive integer or a list of two, such as [3, 3], got an array");
  row("/model/config/layers/-",
      R"({"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": [3, 0]}})",
      "model.config.layers[3].config.kernel_size[1]", "must be a positive integer, got 0");
  row("/model/config/layers/-",
      R"({"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "padding": "full"}})",
      "model.config.layers[3].config.padding", "must be \"valid\" or \"same\", got \"full\"");
  row("/model/config/layers/-",
      R"({"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3,
                                               "dilation_rate": [2, 2]}})",
      "model.config.layers[3].config.dilation_rate",
      "[2,2] is not supported by fitbench (only [1, 1] is)");
  row("/model/config/layers/-",
      R"({"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "groups": 2}})",
      "model.config.layers[3].config.groups", "2 is not supported by fitbench (only 1 is)");
  row("/model/config/layers/-",
      R"({"class_name": "Flatten", "config": {"data_format": "channels_first"}})",
      "model.config.layers[3].config.data_format",
      "\"channels_first\" is not supported by fitbench (only \"channels_last\" is)");
  row("/model/config/layers/-", R"({"class_name": "Reshape", "config": {"target_shape": 7}})",
      "model.config.layers[3].config.target_shape",
      "must be a list of one to eight dimensions such as [7, 112] or [-1, 28], got 7");
  row("/model/config/layers/-", R"({"class_name": "Reshape", "config": {"target_shape": [7, -2]}})",
      "model.config.layers[3].config.target_shape[1]",
      "must be a positive integer or -1 (inferred), got -2");
  row("/model/config/layers/-",
      R"({"class_name": "GlobalAveragePooling2D", "config": {"keepdims": true}})",
      "model.config.layers[3].config.keepdims",
      "true is not supported by fitbench (only false is)");
  row("/model/config/layers/-", R"({"class_name": "Rescaling", "config": {"offset": 1}})",
      "model.config.layers[3].config.scale",
      "is required (the factor each value is multiplied by)");
  row("/model/config/layers/-", R"({"class_name": "Rescaling", "config": {"scale": 1e39}})",
      "model.config.layers[3].config.scale", "must be a number a float32 holds, got 1e+39");
  row("/model/config/layers/-",
      R"({"class_name": "Rescaling", "config": {"scale": 1, "offset": [0.5]}})",
      "model.config.layers[3].config.offset", "must be a number a float32 holds, got an array");
  row("/model/config/layers/-",
      R"({"class_name": "LayerNormalization", "config": {"axis": [1, 2]}})",
      "model.config.layers[3].config.axis", "fitbench normalizes over one axis, the last (-1)");
  row("/model/config/layers/-",
      R"({"class_name": "LayerNormalization", "config": {"axis": "last"}})",
      "model.config.layers[3].config.axis",
      "must be an axis such as -1, or a list of one such as [-1], got \"last\"");
  row("/model/config/layers/-", R"({"class_name": "LayerNormalization", "config": {"epsilon": 0}})",
      "model.config.layers[3].config.epsilon", "must be a number in (0, 1], got 0");
  row("/model/config/layers/-",
      R"({"class_name": "LayerNormalization", "config": {"rms_scaling": true}})",
      "model.config.layers[3].config.rms_scaling",
      "true is not supported by fitbench (only false is)");
  row("/model/config/layers/-",
      R"({"class_name": "LayerNormalization", "config": {"gamma_initializer": "magic"}})",
      "model.config.layers[3].config.gamma_initializer",
      "\"magic\" is not supported by fitbench; expected one of: GlorotUniform, GlorotNormal, "
      "HeUniform, HeNormal, LecunUniform, LecunNormal, RandomNormal, RandomUniform, Zeros, Ones");
  row("/model/config/layers/-",
      R"({"class_name": "BatchNormalization", "config": {"momentum": 1.5}})",
      "model.config.layers[3].config.momentum", "must be a number in [0, 1], got 1.5");
  row("/model/config/layers/-",
      R"({"class_name": "BatchNormalization", "config": {"synchronized": true}})",
      "model.config.layers[3].config.synchronized",
      "true is not supported by fitbench (only false is)");
  row("/model/config/layers/-",
      R"({"class_name": "BatchNormalization", "config": {"renorm": true}})",
      "model.config.layers[3].config.renorm", "true is not supported by fitbench (only false is)");
  row("/model/config/layers/-", R"({"class_name": "Reshape", "config": {}})",
      "model.config.layers[3].config.target_shape",
      "is required (the shape of one sample after the layer)");
  row("/model/config/layers/1/config/units", R"("four")", "model.config.layers[1].config.units",
      "must be a positive integer, got \"four\"");
  row("/model/config/layers/2/config/units", "-3", "model.config.layers[2].config.units",
      "must be a positive integer, got -3");
  row("/model/config/layers/1", R"({"class_name": "Dropout", "config": {"rate": 1.0}})",
      "model.config.layers[1].config.rate", "must be a number in [0, 1), got 1.0");
  row("/model/config/layers/1/config/dtype",
      R"({"module": "keras", "class_name": "DTypePolicy", "config": {"name": "mixed_float16"},
          "registered_name": null})",
      "model.config.layers[1].config.dtype.config.name",
      "\"mixed_float16\" is not supported by fitbench (only float32 is)");
  row("/model/config/layers/1/config/kernel_constraint",
      R"({"class_name": "MaxNorm", "config": {"max_value": 2}})",
      "model.config.layers[1].config.kernel_constraint",
      "{\"class_name\": \"MaxNorm\", ...} is not supported by fitbench (only null is)");
  row("/model/config/layers/1/config/activation", R"("relu6")",
      "model.config.layers[1].config.activation",
      "\"relu6\" is not supported by fitbench; expected one of: linear, relu, sigmoid, tanh, "
      "softmax, elu, selu, gelu, leaky_relu, softplus, silu, swish");
  row("/model/config/layers/1/config/kernel_initializer", R"("orthogonal")",
      "model.config.layers[1].config.kernel_initializer",
      "\"orthogonal\" is not supported by fitbench; expected one of: GlorotUniform, GlorotNormal, "
      "HeUniform, HeNormal, LecunUniform, LecunNormal, RandomNormal, RandomUniform, Zeros, Ones");
  row("/model/config/layers/1/config/kernel_initializer",
      R"({"class_name": "RandomUniform", "config": {"minval": 1, "maxval": 0}})",
      "model.config.layers[1].config.kernel_initializer.config.maxval",
      "must be a number >= minval, got 0.0");
  row("/model/config/layers/1/config/name", R"("dense\tone")", "model.config.layers[1].config.name",
      "must be a non-empty name without '/' or control characters, got \"dense\\tone\"");
  row("/model/config/layers/2/config/name", R"("dense")", "model.config.layers[2].config.name",
      "\"dense\" is already the name of layers[1]; layer names must be unique");
  row("/model/config/layers/2",
      R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 4]}})",
      "model.config.layers[2].class_name", "an InputLayer can only be the first layer");
  row("/model/config/layers/1/module", R"("my_package.layers")", "model.config.layers[1].module",
      "\"my_package.layers\" is not supported by fitbench (only Keras's own classes are; custom "
      "objects cannot be loaded)");
  row("/model/config/build_input_shape", "[null, 3]", "model.config.build_input_shape",
      "the shape (None, 3) does not match the input shape (None, 2) given by "
      "model.config.layers[0].config");
  row("/model/class_name", R"("Functional")", "model.class_name",
      "\"Functional\" is not supported by fitbench (only Sequential models are)");
  row("/model", R"("dense")", "model",
      "must be a Keras model config ({\"class_name\": \"Sequential\", ...}), got \"dense\"");
  row("/epochs", "3", "epochs",
      "unknown key; expected one of: name, description, seed, devices, distribution, data, "
      "model, compile, fit, initial_weights, sweep");
  row("/model", "", "model", "is required (a Keras Sequential model config)");
  row("/data", "", "data", "is required (where the training data comes from)");
  row("/compile", "", "compile", "is required (the optimizer, loss and metrics)");
  row("/compile/loss", "", "compile.loss",
      "is required (the loss to minimize, e.g. \"binary_crossentropy\")");
  row("/seed", "-1", "seed", "must be null or a non-negative integer, got -1");
  row("/data/generator", R"("circles")", "data.generator",
      "\"circles\" is not supported by fitbench; expected one of: seed, seed_legacy, circle, xor, "
      "gaussian, spiral, moons, blobs, plane, sine");
  row("/data/features", "3", "data.features",
      "is not used by the \"circle\" generator (only seed, seed_legacy and blobs take it)");
  row("/data/csv", R"("points.csv")", "data.csv", "cannot be combined with \"generator\"");
  // A NUL would cut a file name short (reading cls.csv for "cls.csv\u0000.txt"): refused.
  row("/data", R"({"csv": "cls.csv\u0000.txt", "target": "y"})", "data.csv",
      "holds a NUL character (\\u0000), which no file name can hold: \"cls.csv\\u0000.txt\"");
  row("/initial_weights", R"("w.json\u0000")", "initial_weights",
      "holds a NUL character (\\u0000), which no file name can hold: \"w.json\\u0000\"");
  row("/fit/callbacks", R"([{"class_name": "CSVLogger", "config": {"filename": "\u0000"}}])",
      "fit.callbacks[0].config.filename",
      "holds a NUL character (\\u0000), which no file name can hold: \"\\u0000\"");
  row("/fit/callbacks",
      R"([{"class_name": "ModelCheckpoint", "config": {"filepath": "m\u0000.json"}}])",
      "fit.callbacks[0].config.filepath",
      "holds a NUL character (\\u0000), which no file name can hold: \"m\\u0000.json\"");
  // A long key is shortened, never the sentence after it.
  const std::string long_key = "/data/" + std::string(100000, 'k');
  row(long_key.c_str(), "1", "data.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...(a key of 100000 bytes)",
      "unknown key; expected one of: generator, samples, noise, seed, standardize");
  // A key with a control character is shown whole, in JSON's escapes.
  row("/data/a\nb", "1", "data[\"a\\nb\"]",
      "unknown key; expected one of: generator, samples, noise, seed, standardize");
  row("/devices/count", "0", "devices.count",
      "must be a whole number of devices from 1 to 64, got 0");
  row("/devices/count", "1000", "devices.count",
      "must be a whole number of devices from 1 to 64, got 1000");
  row("/devices/link_gbps", "1e-12", "devices.link_gbps",
      "must be 0 (unlimited) or a bandwidth in GB/s from 0.01 to 10000, got 1e-12");
  row("/devices/batch_norm_statistics", R"("local")", "devices.batch_norm_statistics",
      "must be \"global\" or \"per_device\", got \"local\"");
  row("/devices/link_latency_us", "1e12", "devices.link_latency_us",
      "must be a number of microseconds from 0 to 100000 (100 ms), got 1000000000000.0");
  row("/distribution/class_name", R"("FSDP")", "distribution.class_name",
      "\"FSDP\" is not supported by fitbench; expected one of: DataParallel, ModelParallel");
  row("/distribution/mesh/axis_names", R"(["batch"])", "distribution.mesh.axis_names",
      "must be a list of 2 axis names, one per entry of shape, got 1");
  row("/fit/epochs", "1073741825", "fit.epochs",
      "must be a positive integer up to 1073741824, got 1073741825");
  row("/distribution/mesh/shape/0", "4294967298", "distribution.mesh.shape[0]",
      "must be at most 64 devices (the most fitbench simulates), got 4294967298");
  row("/distribution/layout_map/dense.*kernel/1", R"("modle")",
      "distribution.layout_map[\"dense.*kernel\"][1]",
      "must be null or one of the mesh's axes (batch, model), got \"modle\"");
  row("/compile/optimizer", R"("adamax")", "compile.optimizer",
      "\"adamax\" is not supported by fitbench; expected one of: SGD, Adam, AdamW, RMSprop, "
      "Adagrad");
  row("/compile/optimizer", R"({"class_name": "SGD", "config": {"learning_rate": 0.1, "lr": 0.1}})",
      "compile.optimizer.config.lr",
      "unknown key; expected one of: name, learning_rate, weight_decay, clipnorm, "
      "global_clipnorm, clipvalue, use_ema, ema_momentum, ema_overwrite_frequency, "
      "loss_scale_factor, gradient_accumulation_steps, momentum, nesterov");
  row("/compile/optimizer", R"({"class_name": "SGD", "config": {"learning_rate": 1e39}})",
      "compile.optimizer.config.learning_rate",
      "must be a positive number within float32's range or a learning-rate schedule, got 1e+39");
  row("/compile/optimizer", R"({"class_name": "Adam", "config": {"epsilon": 0}})",
      "compile.optimizer.config.epsilon", "must be a positive number, got 0");
  row("/compile/optimizer", R"({"class_name": "Adam", "config": {"use_ema": true}})",
      "compile.optimizer.config.use_ema", "true is not supported by fitbench (only false is)");
  row("/compile/optimizer",
      R"({"class_name": "SGD", "config": {"clipnorm": 1.0, "clipvalue": 0.5}})",
      "compile.optimizer.config.clipvalue",
      "cannot be combined with clipnorm (only one of clipnorm, clipvalue and global_clipnorm can "
      "be set)");
  row("/compile/metrics", R"([{"class_name": "Accuracy", "config": {}}])",
      "compile.metrics[0].class_name",
      "keras.metrics.Accuracy (predictions exactly equal to the labels) is not supported by "
      "fitbench; use \"accuracy\", which Keras resolves to binary, categorical or sparse "
      "categorical accuracy from the shapes");
  row("/compile/metrics", R"([{"class_name": "AUC", "config": {"curve": "PR"}}])",
      "compile.metrics[0].config.curve", "\"PR\" is not supported by fitbench (only \"ROC\" is)");
  row("/compile/metrics", R"([{"class_name": "AUC", "config": {"num_thresholds": 50}}])",
      "compile.metrics[0].config.num_thresholds", "50 is not supported by fitbench (only 200 is)");
  row("/compile/loss", R"("hinge")", "compile.loss",
      "\"hinge\" is not supported by fitbench; expected one of: binary_crossentropy, "
      "categorical_crossentropy, sparse_categorical_crossentropy, mean_squared_error, "
      "mean_absolute_error, huber");
  row("/compile/loss",
      R"({"class_name": "BinaryCrossentropy", "config": {"label_smoothing": 0.1}})",
      "compile.loss.config.label_smoothing", "0.1 is not supported by fitbench (only 0 is)");
  row("/fit/verbose", "3", "fit.verbose", "must be 0, 1, 2 or \"auto\", got 3");
  row("/fit/validation_split", "1", "fit.validation_split", "must be a number in [0, 1), got 1");
  row("/fit/callbacks/0", R"({"class_name": "TerminateOnNaN", "config": {"monitor": "loss"}})",
      "fit.callbacks[0].config.monitor", "unknown key; this object takes no keys");
  row("/fit/callbacks/0/class_name", R"("TensorBoard")", "fit.callbacks[0].class_name",
      "\"TensorBoard\" is not supported by fitbench; expected one of: EarlyStopping, "
      "ModelCheckpoint, CSVLogger, ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN");
}

void TestExperimentIo::errors() {
  QFETCH(QString, pointer);
  QFETCH(QString, value);
  QFETCH(QString, place);
  QFETCH(QString, message);
  OrderedJson doc = OrderedJson::parse(kBase);
  const OrderedJson::json_pointer ptr(pointer.toStdString());
  if (value.isEmpty()) {
    doc[ptr.parent_pointer()].erase(ptr.back());
  } else {
    doc[ptr] = OrderedJson::parse(value.toStdString());
  }
  const auto error = error_of([&] { parse_experiment(doc, "exp.json", {}); });
  QVERIFY(error.has_value());
  QCOMPARE(QString::fromStdString(error->place()), place);
  QCOMPARE(QString::fromStdString(error->message()), message);
}

void TestExperimentIo::invalid_json_names_line_and_column() {
  QTemporaryDir dir;
  const std::filesystem::path file =
      std::filesystem::path(dir.path().toStdString()) / "broken.json";
  // The second comma on line 3 is at column 13 (counted by hand: 2 spaces, "seed" in quotes is
  // columns 3-8, ':' 9, ' ' 10, '7' 11, ',' 12).
  write_text(file, "{\n  \"name\": \"x\",\n  \"seed\": 7,,\n}\n");
  const auto error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QCOMPARE(error->place(), file.string() + ": line 3, column 13");
  QCOMPARE(error->message(), std::string("is not valid JSON: syntax error while parsing object key "
                                         "- unexpected ','; expected string literal"));
  // A number too large for a double is placed at its first character too (nlohmann's DOM parser
  // gives no position for it; its SAX parser does): on line 2, a space, "seed" in quotes is
  // columns 2-7, ":" 8, two spaces, "1" 11.
  write_text(file, "{\"name\": \"x\",\n \"seed\":  1e400}");
  const auto overflow = error_of([&] { read_experiment(file); });
  QVERIFY(overflow.has_value());
  QCOMPARE(overflow->place(), file.string() + ": line 2, column 11");
  QCOMPARE(overflow->message(), std::string("is not valid JSON: number overflow parsing '1e400'"));
}

void TestExperimentIo::duplicate_keys_name_their_path() {
  // JSON parsers keep the last of two equal keys silently; an experiment's values must not
  // depend on which one a reader keeps.
  QTemporaryDir dir;
  const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "d.json";
  const std::pair<const char*, const char*> cases[] = {
      {R"({"seed": 7, "name": "x", "seed": 8})", "seed"},
      {R"({"model": {"config": {"layers": [{"class_name": "InputLayer"},
          {"class_name": "Dense", "config": {"units": 1, "units": 2}}]}}})",
       "model.config.layers[1].config.units"},
      {R"({"fit": {"callbacks": [[1, 2], {"a": {}, "a": 1}]}})", "fit.callbacks[1].a"},
      {R"([{"k": 1}, {"k": 2, "k": 3}])", "[1].k"},
      {R"({"distribution": {"layout_map": {"h.*bias": [null], "h.*bias": ["model"]}}})",
       "distribution.layout_map[\"h.*bias\"]"},
  };
  for (const auto& [text, place] : cases) {
    write_text(file, text);
    const auto error = error_of([&] { fitbench::json_io::read_json_file(file); });
    QVERIFY2(error.has_value(), text);
    QCOMPARE(error->place(), file.string() + ": " + place);
    QCOMPARE(error->message(), std::string("is given twice in one object; give each key once"));
  }
  // The same key in two objects is fine.
  write_text(file, R"({"a": {"k": 1}, "b": {"k": 1}, "c": [{"k": 1}, {"k": 2}]})");
  QVERIFY(!error_of([&] { fitbench::json_io::read_json_file(file); }).has_value());
}

// Inputs that would overflow the stack (deep JSON nesting copied recursively; a regex compiled
// recursively) are refused with a sentence instead.
void TestExperimentIo::deep_nesting_and_huge_keys_are_refused() {
  QTemporaryDir dir;
  const std::filesystem::path file = std::filesystem::path(dir.path().toStdString()) / "n.json";
  const std::string seed = read_text(FITBENCH_SOURCE_DIR "/resources/examples/seed.json");
  const auto with = [&](const std::string& from, const std::string& to) {
    std::string text = seed;
    const size_t at = text.find(from);
    if (at == std::string::npos) return std::string();
    return text.replace(at, from.size(), to);
  };
  write_text(file, with("\"seed\": 7,",
                        "\"seed\": " + std::string(200000, '[') + std::string(200000, ']') + ","));
  auto error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QVERIFY2(error->message().find("more than 256 levels deep") != std::string::npos, error->what());
  QVERIFY2(error->place().rfind(file.string() + ": seed[0][0]", 0) == 0, error->what());
  // 100 levels are a value of the wrong type, as any other.
  write_text(file, with("\"seed\": 7,",
                        "\"seed\": " + std::string(100, '[') + std::string(100, ']') + ","));
  error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QVERIFY2(error->message().find("got an array") != std::string::npos, error->what());

  const std::string mp =
      read_text(FITBENCH_SOURCE_DIR "/resources/examples/model_parallel_2x2.json");
  const std::string anchor = "\"layout_map\": {";
  const size_t at = mp.find(anchor);
  QVERIFY(at != std::string::npos);
  const auto keyed = [&](const std::string& key) {
    std::string text = mp;
    return text.insert(at + anchor.size(), "\"" + key + "\": [null, \"model\"], ");
  };
  write_text(file, keyed(std::string(70000, 'x')));
  error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QCOMPARE(error->place(),
           file.string() + ": distribution.layout_map[\"" + std::string(60, 'x') + "...\"]");
  QCOMPARE(error->message(),
           std::string("is 70000 bytes long; a layout key is at most 1000 bytes"));
  write_text(file, keyed("(a{1000}){1000}"));
  error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QVERIFY2(error->message().find("too large or too complex") != std::string::npos &&
               error->message().find("_GLIBCXX") == std::string::npos,
           error->what());
}

// The History as CSV writes each value as Python's repr would (CSVLogger): the shortest text
// that reads back the same, and nan / inf / -inf whatever the NaN's sign bit; as JSON, its keys
// in Keras's order.
void TestExperimentIo::history_csv_writes_python_floats() {
  History h;
  h.epoch = {0, 1, 2};
  h.history["accuracy"] = {1.0, 0.0, 0.0001};  // Python: 1.0 and 0.0, not 1 and 0
  h.history["loss"] = {0.1, -std::numeric_limits<double>::quiet_NaN(), 1e-05};
  h.history["val_loss"] = {std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(), 1e16};
  QCOMPARE(QString::fromStdString(history_text(h, true)),
           QStringLiteral("epoch,accuracy,loss,val_loss\n0,1.0,0.1,inf\n1,0.0,nan,-inf\n"
                          "2,0.0001,1e-05,1e+16\n"));
  // As JSON, in the order of Keras's History: training keys, validation keys, learning_rate.
  h.history["learning_rate"] = {0.1, 0.1, 0.1};
  h.history["val_accuracy"] = {0.5, 0.5, 0.5};
  const std::string json = history_text(h, false);
  std::vector<size_t> at;
  for (const char* key :
       {"\"accuracy\"", "\"loss\"", "\"val_accuracy\"", "\"val_loss\"", "\"learning_rate\""})
    at.push_back(json.find(key));
  QVERIFY2(std::is_sorted(at.begin(), at.end()) && at.front() != std::string::npos, json.c_str());
}

void TestExperimentIo::missing_file() {
  const std::filesystem::path file = "/nonexistent/folder/exp.json";
  const auto error = error_of([&] { read_experiment(file); });
  QVERIFY(error.has_value());
  QCOMPARE(error->place(), file.string());
  QCOMPARE(error->message(), std::string("cannot be read: No such file or directory"));
}

void TestExperimentIo::relative_paths_are_resolved() {
  QTemporaryDir dir;
  const std::filesystem::path root = std::filesystem::path(dir.path().toStdString());
  OrderedJson doc = OrderedJson::parse(kBase);
  doc["data"] = OrderedJson::parse(R"({"csv": "data/points.csv", "target": "label"})");
  doc["initial_weights"] = "../models/start.json";
  write_text(root / "exps" / "exp.json", doc.dump());
  const ExperimentSpec spec = read_experiment(root / "exps" / "exp.json");
  QCOMPARE(spec.data.csv, (root / "exps" / "data" / "points.csv").string());
  QCOMPARE(spec.initial_weights, (root / "models" / "start.json").string());
  QCOMPARE(spec.data.target, std::vector<std::string>{"label"});
  QCOMPARE(spec.data.generator, std::string());
  // Written as stored (now absolute).
  QCOMPARE(experiment_to_json(spec)["data"]["csv"].get<std::string>(), spec.data.csv);
  // Without a base folder, and for absolute paths, the path is kept as written.
  QCOMPARE(parse_experiment(doc, "", {}).data.csv, std::string("data/points.csv"));
  doc["data"]["csv"] = "/abs/points.csv";
  QCOMPARE(parse_experiment(doc, "", root).data.csv, std::string("/abs/points.csv"));
}

void TestExperimentIo::examples_read_data() {
  QTest::addColumn<QString>("file");
  const QDir examples(QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples"));
  const QStringList files = examples.entryList({"*.json"}, QDir::Files, QDir::Name);
  QVERIFY(files.size() >= 5);
  for (const QString& name : files) QTest::newRow(qPrintable(name)) << examples.filePath(name);
}

void TestExperimentIo::examples_read() {
  QFETCH(QString, file);
  ExperimentSpec spec;
  try {
    spec = read_experiment(file.toStdString());
  } catch (const InputError& e) {
    QFAIL(e.what());
  }
  QVERIFY(!spec.name.empty());
  QVERIFY(!spec.description.empty());
  compare_experiment(parse_experiment(experiment_to_json(spec), "", {}), spec);
}

void TestExperimentIo::seed_example_matches_the_reference_script() {
  const ExperimentSpec s = read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/seed.json");
  QCOMPARE(s.name, std::string("Seed: one Dense unit on 4 features"));
  QCOMPARE(s.seed, std::optional<uint64_t>(7));
  QVERIFY(!s.devices.count);
  QCOMPARE(s.distribution.class_name, std::string("DataParallel"));
  QCOMPARE(s.data.generator, std::string("seed"));
  QCOMPARE(s.data.samples, int64_t{128});
  QCOMPARE(s.data.features, int64_t{4});
  QCOMPARE(s.data.seed, uint64_t{7});
  QCOMPARE(s.model.layers.size(), size_t{2});
  QCOMPARE(s.model.layers[0].shape, std::vector<int64_t>{4});
  QCOMPARE(s.model.layers[1].units, int64_t{1});
  QCOMPARE(s.model.layers[1].activation, std::string("sigmoid"));
  QCOMPARE(s.compile.optimizer.class_name, std::string("SGD"));
  QCOMPARE(s.compile.optimizer.learning_rate, std::optional<double>(0.2));
  QCOMPARE(s.compile.loss.name, std::string("binary_crossentropy"));
  QCOMPARE(s.compile.metrics, std::vector<std::string>{"accuracy"});
  QCOMPARE(s.fit.epochs, 4);
  QCOMPARE(s.fit.batch_size, 16);
  QCOMPARE(s.fit.verbose, 2);
  QVERIFY(s.fit.shuffle);
}

QTEST_GUILESS_MAIN(TestExperimentIo)
#include "tst_experiment_io.moc"
