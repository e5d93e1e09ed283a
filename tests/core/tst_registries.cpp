// Tests of the registries of what an experiment may name (core/nn/layer_registry.h,
// activation_registry.h, initializer_registry.h, core/losses/loss_registry.h,
// core/metrics/metric_registry.h, core/optimizers/optimizer_registry.h,
// core/training/callback_registry.h, core/distribution/collectives/collective_algorithms.h) against
// the experiment file's readers and the builders: every registry name parses in an experiment file,
// the readers accept exactly Keras's names that fitbench had before the registries, the error
// messages list the same names in the same order, and the defaults equal the spec structs' own.
#include <QTest>
#include <functional>
#include <optional>
#include <set>

#include "core/base/error.h"
#include "core/distribution/collectives/collective_algorithms.h"
#include "core/io/keras_json.h"
#include "core/io/keras_objects.h"
#include "core/losses/loss.h"
#include "core/losses/loss_registry.h"
#include "core/metrics/metric.h"
#include "core/metrics/metric_registry.h"
#include "core/nn/activation_registry.h"
#include "core/nn/initializer_registry.h"
#include "core/nn/initializers.h"
#include "core/nn/layer_registry.h"
#include "core/optimizers/optimizer.h"
#include "core/optimizers/optimizer_registry.h"
#include "core/training/callback_registry.h"

using namespace fitbench;
using Json = nlohmann::ordered_json;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return {};
}

template <typename Range, typename Name>
std::vector<std::string> names_of(const Range& items, Name name) {
  std::vector<std::string> out;
  for (const auto& item : items) out.emplace_back(name(item));
  return out;
}

// An experiment with `model_layers` after the input and `compile`/`fit` sections.
ExperimentSpec parse_with(const Json& layers, const Json& compile, const Json& fit = Json::object(),
                          const Json& devices = Json()) {
  Json all = Json::array();
  all.push_back(
      Json::parse(R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 2]}})"));
  for (const Json& l : layers) all.push_back(l);
  Json doc = {{"name", "registry"},
              {"data", {{"generator", "circle"}, {"samples", 20}}},
              {"model", {{"class_name", "Sequential"}, {"config", {{"layers", all}}}}},
              {"compile", compile},
              {"fit", fit}};
  if (!devices.is_null()) doc["devices"] = devices;
  return parse_experiment(doc, "registry.json", {});
}

Json dense(int units = 1) {
  return {{"class_name", "Dense"}, {"config", {{"units", units}, {"activation", "sigmoid"}}}};
}

Json compile_with(const Json& optimizer, const Json& loss, const Json& metrics = Json::array()) {
  return {{"optimizer", optimizer}, {"loss", loss}, {"metrics", metrics}};
}

// A field's default as JSON.
Json default_json(const FieldInfo& f) {
  switch (f.type) {
    case FieldType::kInt:
      return static_cast<int64_t>(f.number);
    case FieldType::kBool:
      return f.number != 0.0;
    case FieldType::kString:
    case FieldType::kChoice:
    case FieldType::kInitializer:
      return std::string(f.text);
    default:
      return f.optional ? Json(nullptr) : Json(f.number);
  }
}

}  // namespace

class TestRegistries : public QObject {
  Q_OBJECT
 private slots:
  void layerClasses();
  void layerFieldsParse();
  void newLayers();
  void activations();
  void initializers_data();
  void initializers();
  void losses();
  void metrics();
  void optimizers();
  void optimizerFieldDefaults();
  void optimizerSlots_data();
  void optimizerSlots();
  void schedules();
  void callbacks();
  void collectiveAlgorithms();
};

void TestRegistries::layerClasses() {
  // Keras's class names fitbench reads, as the reader listed them before the registry.
  const std::vector<std::string> expected = {"InputLayer",
                                             "Dense",
                                             "Conv2D",
                                             "MaxPooling2D",
                                             "AveragePooling2D",
                                             "Activation",
                                             "Dropout",
                                             "Flatten",
                                             "Reshape",
                                             "Rescaling",
                                             "GlobalAveragePooling2D",
                                             "LayerNormalization",
                                             "BatchNormalization"};
  QCOMPARE(names_of(layer_classes(), [](const LayerInfo& l) { return l.class_name; }), expected);
  const std::string message = error_of([] {
    parse_with(Json::array({{{"class_name", "LSTM"}, {"config", Json::object()}}}),
               compile_with("sgd", "mse"));
  });
  QVERIFY2(message.find("; expected one of: InputLayer, Dense, Conv2D, MaxPooling2D, "
                        "AveragePooling2D, Activation, Dropout, Flatten, Reshape, "
                        "Rescaling") != std::string::npos,
           message.c_str());
  QCOMPARE(find_layer_class("InputLayer")->input, true);
  QCOMPARE(find_layer_class("Dense")->auto_name, std::string_view("dense"));
  QVERIFY(find_layer_class("dense") == nullptr);
}

void TestRegistries::layerFieldsParse() {
  // Every layer class (but the input) parses with each registry field at its default or start
  // value, and an unknown field is refused: the registry names fields the reader knows.
  const LayerSpec plain{};
  for (const LayerInfo& info : layer_classes()) {
    if (info.input) continue;
    Json config = Json::object();
    for (const FieldInfo& f : info.fields) {
      if (f.type == FieldType::kRegularizer) {
        config[std::string(f.key)] = nullptr;
      } else if (!f.start.empty()) {
        config[std::string(f.key)] =
            f.type == FieldType::kChoice ? Json(std::string(f.start)) : Json::parse(f.start);
      } else {
        config[std::string(f.key)] = default_json(f);
      }
    }
    Json layers = Json::array({{{"class_name", std::string(info.class_name)}, {"config", config}}});
    if (!info.outputs_units) layers.push_back(dense());
    const ExperimentSpec spec = parse_with(layers, compile_with("sgd", "mse"));
    QCOMPARE(spec.model.layers[1].class_name, std::string(info.class_name));
    // The defaults equal LayerSpec's in-class defaults.
    for (const FieldInfo& f : info.fields) {
      if (f.key == "use_bias") QCOMPARE(plain.use_bias, f.number != 0.0);
      if (f.key == "trainable") QCOMPARE(plain.trainable, f.number != 0.0);
      if (f.key == "activation") QCOMPARE(plain.activation, std::string(f.text));
      if (f.key == "rate") QCOMPARE(plain.rate, f.number);
      if (f.key == "units") QCOMPARE(static_cast<double>(plain.units), f.number);
      if (f.key == "kernel_initializer")
        QCOMPARE(plain.kernel_initializer.name, std::string(f.text));
      if (f.key == "bias_initializer") QCOMPARE(plain.bias_initializer.name, std::string(f.text));
    }
  }
  const std::string message = error_of([] {
    parse_with(Json::array({{{"class_name", "Dropout"}, {"config", {{"rate", 0.1}, {"units", 3}}}},
                            dense()}),
               compile_with("sgd", "mse"));
  });
  QVERIFY2(message.find("units") != std::string::npos, message.c_str());
  QVERIFY(layer_has_field("Dense", "kernel_regularizer"));
  QVERIFY(!layer_has_field("Dropout", "units"));
  QVERIFY(!layer_has_field("NoSuchLayer", "units"));
}

void TestRegistries::newLayers() {
  const LayerSpec d = new_layer(*find_layer_class("Dense"));
  QCOMPARE(d.class_name, std::string("Dense"));
  QCOMPARE(d.units, int64_t(8));
  QCOMPARE(d.activation, std::string("relu"));
  QCOMPARE(new_layer(*find_layer_class("Dropout")).rate, 0.2);
  QCOMPARE(new_layer(*find_layer_class("Activation")).activation, std::string("relu"));
  QCOMPARE(new_layer(*find_layer_class("Reshape")).target_shape, std::vector<int64_t>({-1}));
  QCOMPARE(new_layer(*find_layer_class("Flatten")).class_name, std::string("Flatten"));
}

void TestRegistries::activations() {
  const std::vector<std::string> expected = {"linear",     "relu",     "sigmoid", "tanh",
                                             "softmax",    "elu",      "selu",    "gelu",
                                             "leaky_relu", "softplus", "silu",    "swish"};
  QCOMPARE(names_of(fitbench::activations(), [](const ActivationInfo& a) { return a.name; }),
           expected);
  QCOMPARE(std::string(activation_names()),
           std::string("linear, relu, sigmoid, tanh, softmax, elu, selu, gelu, leaky_relu, "
                       "softplus, silu, swish"));
  for (const ActivationInfo& a : fitbench::activations()) {
    const Json layer = {{"class_name", "Dense"},
                        {"config", {{"units", 1}, {"activation", std::string(a.name)}}}};
    const ExperimentSpec spec = parse_with(Json::array({layer}), compile_with("sgd", "mse"));
    // Aliases are stored under the canonical name.
    QCOMPARE(spec.model.layers[1].activation, activation_name(a.value));
    QCOMPARE(a.alias, activation_name(a.value) != a.name);
    QVERIFY(!a.description.empty());
  }
  const std::string message = error_of([] { parse_activation(Json("relu6"), "a"); });
  QVERIFY2(message.find("expected one of: linear, relu, sigmoid, tanh, softmax, elu, selu, gelu, "
                        "leaky_relu, softplus, silu, swish") != std::string::npos,
           message.c_str());
}

void TestRegistries::initializers_data() {
  QTest::addColumn<QString>("id");
  QTest::addColumn<QString>("name");
  for (const InitializerInfo& i : fitbench::initializers()) {
    const QString name = QString::fromUtf8(i.name.data(), i.name.size());
    QTest::newRow(i.name.data()) << name << name;
    QTest::newRow(i.class_name.data()) << QString::fromUtf8(i.class_name.data()) << name;
    if (!i.alias.empty())
      QTest::newRow(i.alias.data()) << QString::fromUtf8(i.alias.data()) << name;
  }
}

void TestRegistries::initializers() {
  QFETCH(QString, id);
  QFETCH(QString, name);
  const InitializerInfo* info = find_initializer(id.toStdString());
  QVERIFY(info != nullptr);
  // As a string and as an object with every registry field at its default.
  QCOMPARE(parse_initializer(Json(id.toStdString()), "i").name, name.toStdString());
  Json config = Json::object();
  for (const FieldInfo& f : info->fields) config[std::string(f.key)] = default_json(f);
  const InitializerSpec spec = parse_initializer(
      Json{{"class_name", std::string(info->class_name)}, {"config", config}}, "i");
  QCOMPARE(spec.name, name.toStdString());
  validate_initializer(spec, "i");
  QCOMPARE(is_random_initializer(spec), info->random);
  // The defaults equal InitializerSpec's in-class ones.
  const InitializerSpec plain{};
  for (const FieldInfo& f : info->fields) {
    if (f.key == "mean") QCOMPARE(plain.mean, f.number);
    if (f.key == "stddev") QCOMPARE(plain.stddev, f.number);
    if (f.key == "minval") QCOMPARE(plain.minval, f.number);
    if (f.key == "maxval") QCOMPARE(plain.maxval, f.number);
  }
  // The writer writes exactly the registry's fields.
  const Json written = initializer_to_json(spec);
  QCOMPARE(written["class_name"].get<std::string>(), std::string(info->class_name));
  QCOMPARE(written["config"].size(), info->fields.size());
  // Messages list the names as before.
  const std::string message = error_of([] { validate_initializer({.name = "orthogonal"}, "i"); });
  QVERIFY2(message.find("expected one of: glorot_uniform, glorot_normal, he_uniform, he_normal, "
                        "lecun_uniform, lecun_normal, random_normal, random_uniform, zeros, "
                        "ones") != std::string::npos,
           message.c_str());
}

void TestRegistries::losses() {
  const std::vector<std::string> expected = {
      "binary_crossentropy", "categorical_crossentropy", "sparse_categorical_crossentropy",
      "mean_squared_error",  "mean_absolute_error",      "huber"};
  QCOMPARE(names_of(fitbench::loss_classes(), [](const LossInfo& l) { return l.name; }), expected);
  std::set<std::string> ids;
  for (const LossInfo& l : fitbench::loss_classes()) {
    ids.insert(std::string(l.name));
    ids.insert(std::string(l.class_name));
    for (std::string_view a : l.aliases) ids.insert(std::string(a));
    // The object form with each field at its default.
    Json config = Json::object();
    for (const FieldInfo& f : l.fields) config[std::string(f.key)] = default_json(f);
    const ExperimentSpec spec = parse_with(
        Json::array({dense()}),
        compile_with("sgd", {{"class_name", std::string(l.class_name)}, {"config", config}}));
    QCOMPARE(spec.compile.loss.name, std::string(l.name));
    QVERIFY(make_loss(spec.compile.loss) != nullptr);
    QCOMPARE(l.probabilities.empty(), l.targets == LossTargets::kValues);
  }
  // Keras's names and aliases, and fitbench's "cce".
  const std::set<std::string> keras = {"binary_crossentropy",
                                       "BinaryCrossentropy",
                                       "bce",
                                       "BCE",
                                       "categorical_crossentropy",
                                       "CategoricalCrossentropy",
                                       "cce",
                                       "sparse_categorical_crossentropy",
                                       "SparseCategoricalCrossentropy",
                                       "mean_squared_error",
                                       "MeanSquaredError",
                                       "mse",
                                       "MSE",
                                       "mean_absolute_error",
                                       "MeanAbsoluteError",
                                       "mae",
                                       "MAE",
                                       "huber",
                                       "Huber"};
  QCOMPARE(ids, keras);
  for (const std::string& id : ids) {
    const ExperimentSpec spec = parse_with(Json::array({dense()}), compile_with("sgd", id));
    QCOMPARE(spec.compile.loss.name, std::string(find_loss(id)->name));
  }
  QVERIFY(find_loss("Mse") == nullptr);
  const LossSpec plain{};
  QCOMPARE(find_field(find_loss("huber")->fields, "delta")->number, plain.delta);
  QCOMPARE(find_field(find_loss("bce")->fields, "from_logits")->number != 0.0, plain.from_logits);
  const std::string message =
      error_of([] { parse_with(Json::array({dense()}), compile_with("sgd", "kld")); });
  QVERIFY2(message.find("; expected one of: binary_crossentropy, categorical_crossentropy, "
                        "sparse_categorical_crossentropy, mean_squared_error, "
                        "mean_absolute_error, huber") != std::string::npos,
           message.c_str());
  QCOMPARE(error_of([] { make_loss({.name = "kld"}); }),
           std::string("compile.loss: unknown loss \"kld\"; expected binary_crossentropy, "
                       "categorical_crossentropy, sparse_categorical_crossentropy, "
                       "mean_squared_error, mean_absolute_error or huber (or a Keras alias such "
                       "as \"mse\")"));
}

void TestRegistries::metrics() {
  const std::vector<std::string> listed = {"accuracy",
                                           "binary_accuracy",
                                           "categorical_accuracy",
                                           "sparse_categorical_accuracy",
                                           "top_k_categorical_accuracy",
                                           "sparse_top_k_categorical_accuracy",
                                           "mse",
                                           "mae",
                                           "precision",
                                           "recall",
                                           "auc"};
  QCOMPARE(names_of(metric_classes(), [](const MetricInfo& m) { return m.listed; }), listed);
  for (const MetricInfo& m : metric_classes()) {
    std::vector<std::string> ids = {std::string(m.name)};
    if (!m.class_name.empty()) ids.emplace_back(m.class_name);
    for (std::string_view a : m.aliases) ids.emplace_back(a);
    for (const std::string& id : ids) {
      // Sparse metrics with sparse labels, the others with one column per unit.
      const bool sparse = m.targets == MetricTargets::kSparse;
      const ExperimentSpec spec = parse_with(
          Json::array({dense(sparse ? 3 : 1)}),
          compile_with("sgd", sparse ? "sparse_categorical_crossentropy" : "binary_crossentropy",
                       Json::array({id})));
      QCOMPARE(spec.compile.metrics.front(), id);
      QVERIFY(make_metric(id, spec.compile.loss, sparse ? 3 : 1, "m") != nullptr);
      QCOMPARE(metric_improves_upward(id), std::optional<bool>(m.improves_upward));
    }
    // A metric object with its own name is written back under Keras's class name ("AUC").
    const std::string class_name =
        m.class_name.empty() ? std::string("BinaryAccuracy") : std::string(m.class_name);
    const bool sparse = m.targets == MetricTargets::kSparse;
    const ExperimentSpec named = parse_with(
        Json::array({dense(sparse ? 3 : 1)}),
        compile_with(
            "sgd", sparse ? "sparse_categorical_crossentropy" : "binary_crossentropy",
            Json::array({Json{{"class_name", class_name}, {"config", Json{{"name", "named"}}}}})));
    const Json written = compile_to_ordered_json(named.compile)["metrics"][0];
    QCOMPARE(written["class_name"].get<std::string>(), class_name);
    QCOMPARE(written["config"]["name"].get<std::string>(), std::string("named"));
  }
  QCOMPARE(find_metric("ACC"), find_metric("accuracy"));
  QVERIFY(find_metric("Mse") == nullptr);
  QVERIFY(find_metric("Accuracy") != nullptr);
  QCOMPARE(
      error_of([] { make_metric("roc", LossSpec{}, 1, "m"); }),
      std::string("m: unknown metric \"roc\"; expected accuracy, acc, binary_accuracy, "
                  "categorical_accuracy, sparse_categorical_accuracy, top_k_categorical_accuracy, "
                  "sparse_top_k_categorical_accuracy, mean_squared_error, "
                  "mse, mean_absolute_error, mae, precision, recall or auc"));
}

void TestRegistries::optimizers() {
  const std::vector<std::string> expected = {"SGD", "Adam", "AdamW", "RMSprop", "Adagrad"};
  QCOMPARE(names_of(fitbench::optimizers(), [](const OptimizerInfo& o) { return o.class_name; }),
           expected);
  for (const OptimizerInfo& o : fitbench::optimizers()) {
    std::string lower(o.class_name);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    // The lower-case string form; then the object with every field at its default.
    QCOMPARE(
        parse_with(Json::array({dense()}), compile_with(lower, "mse")).compile.optimizer.class_name,
        std::string(o.class_name));
    Json config = Json::object();
    for (const OptimizerField& f : o.fields) config[std::string(f.info.key)] = default_json(f.info);
    const ExperimentSpec spec = parse_with(
        Json::array({dense()}),
        compile_with({{"class_name", std::string(o.class_name)}, {"config", config}}, "mse"));
    const OptimizerSpec& parsed = spec.compile.optimizer;
    QCOMPARE(parsed.class_name, std::string(o.class_name));
    // The optimizer's default learning rate and weight decay are the registry's.
    const auto optimizer = make_optimizer(parsed, "compile.optimizer");
    QCOMPARE(optimizer->name(), std::string(o.class_name));
    QCOMPARE(static_cast<float>(optimizer->learning_rate()), static_cast<float>(o.learning_rate));
    // The writer writes exactly the registry's fields, in its order.
    const Json written = compile_to_ordered_json(spec.compile)["optimizer"]["config"];
    std::vector<std::string> keys;
    for (auto it = written.begin(); it != written.end(); ++it)
      if (it.key() != "learning_rate") keys.push_back(it.key());
    QCOMPARE(keys, names_of(o.fields, [](const OptimizerField& f) { return f.info.key; }));
  }
  QCOMPARE(error_of([] { make_optimizer({.class_name = "Nadam"}, "o"); }),
           std::string("o.class_name: unknown optimizer \"Nadam\"; expected one of SGD, Adam, "
                       "AdamW, RMSprop, Adagrad"));
  const std::string message =
      error_of([] { parse_with(Json::array({dense()}), compile_with("nadam", "mse")); });
  QVERIFY2(
      message.find("; expected one of: SGD, Adam, AdamW, RMSprop, Adagrad") != std::string::npos,
      message.c_str());
  // A field of another optimizer is refused.
  QVERIFY(!error_of([] {
             parse_with(
                 Json::array({dense()}),
                 compile_with({{"class_name", "SGD"}, {"config", {{"beta_1", 0.9}}}}, "mse"));
           }).empty());
}

void TestRegistries::optimizerFieldDefaults() {
  // Keras's defaults are OptimizerSpec's in-class defaults.
  const OptimizerSpec plain{};
  for (const OptimizerInfo& o : fitbench::optimizers()) {
    for (const OptimizerField& f : o.fields) {
      QVERIFY((f.number != nullptr) != (f.flag != nullptr));
      if (f.number) QCOMPARE(plain.*f.number, f.info.number);
      if (f.flag) QCOMPARE(plain.*f.flag, f.info.number != 0.0);
      QVERIFY(!f.info.description.empty());
    }
  }
  QCOMPARE(find_optimizer("adamw")->weight_decay, 0.004);
  QCOMPARE(find_optimizer("SGD")->learning_rate, 0.01);
  QCOMPARE(find_optimizer("adamw"), find_optimizer("AdamW"));
  QVERIFY(find_optimizer("ADAM") == nullptr);  // make_optimizer refuses it; the reader takes it
  QCOMPARE(parse_compile(Json{{"optimizer", "ADAM"}, {"loss", "mse"}}, "c").optimizer.class_name,
           std::string("Adam"));
}

void TestRegistries::optimizerSlots_data() {
  QTest::addColumn<QString>("name");
  QTest::addColumn<double>("momentum");
  QTest::addColumn<bool>("flag");  // amsgrad or centered
  QTest::addColumn<int>("slot_count");
  QTest::newRow("SGD") << "SGD" << 0.0 << false << 0;
  QTest::newRow("SGD momentum") << "SGD" << 0.9 << false << 1;
  QTest::newRow("Adam") << "Adam" << 0.0 << false << 2;
  QTest::newRow("Adam amsgrad") << "Adam" << 0.0 << true << 3;
  QTest::newRow("AdamW amsgrad") << "AdamW" << 0.0 << true << 3;
  QTest::newRow("RMSprop") << "RMSprop" << 0.0 << false << 1;
  QTest::newRow("RMSprop momentum centered") << "RMSprop" << 0.5 << true << 3;
  QTest::newRow("Adagrad") << "Adagrad" << 0.0 << false << 1;
}

void TestRegistries::optimizerSlots() {
  QFETCH(QString, name);
  QFETCH(double, momentum);
  QFETCH(bool, flag);
  QFETCH(int, slot_count);
  OptimizerSpec spec{.class_name = name.toStdString(), .momentum = momentum};
  spec.amsgrad = flag;
  spec.centered = flag;
  QCOMPARE(find_optimizer(spec.class_name)->slots_per_variable(spec), slot_count);
}

void TestRegistries::schedules() {
  const std::vector<std::string> expected = {"ExponentialDecay", "CosineDecay",
                                             "PiecewiseConstantDecay"};
  QCOMPARE(names_of(fitbench::schedules(), [](const ScheduleInfo& s) { return s.class_name; }),
           expected);
  const ScheduleSpec plain{};
  for (const ScheduleInfo& s : fitbench::schedules()) {
    Json config = Json::object();
    for (const FieldInfo& f : s.fields) {
      if (f.key == "name") continue;
      if (f.key == "boundaries")
        config["boundaries"] = {10};
      else if (f.key == "values")
        config["values"] = {0.1, 0.01};
      else
        config[std::string(f.key)] = default_json(f);
      if (f.key == "initial_learning_rate") QCOMPARE(plain.initial_learning_rate, f.number);
      if (f.key == "decay_rate") QCOMPARE(plain.decay_rate, f.number);
      if (f.key == "alpha") QCOMPARE(plain.alpha, f.number);
      if (f.key == "staircase") QCOMPARE(plain.staircase, f.number != 0.0);
    }
    const Json optimizer = {
        {"class_name", "SGD"},
        {"config",
         {{"learning_rate", {{"class_name", std::string(s.class_name)}, {"config", config}}}}}};
    const ExperimentSpec spec = parse_with(Json::array({dense()}), compile_with(optimizer, "mse"));
    QCOMPARE(spec.compile.optimizer.schedule->class_name, std::string(s.class_name));
  }
}

void TestRegistries::callbacks() {
  const std::vector<std::string> expected = {
      "EarlyStopping",     "ModelCheckpoint",       "CSVLogger",
      "ReduceLROnPlateau", "LearningRateScheduler", "TerminateOnNaN"};
  QCOMPARE(names_of(callback_classes(), [](const CallbackInfo& c) { return c.class_name; }),
           expected);
  const CallbackSpec plain{};
  for (const CallbackInfo& c : callback_classes()) {
    Json config = Json::object();
    for (const FieldInfo& f : c.fields) {
      if (f.key == "filepath")
        config["filepath"] = "ck.json";
      else if (f.key == "filename")
        config["filename"] = "log.csv";
      else if (f.key == "schedule")
        config["schedule"] = Json::parse(
            R"({"class_name": "ExponentialDecay", "config": {"initial_learning_rate": 0.1,
                "decay_steps": 1, "decay_rate": 0.5}})");
      else
        config[std::string(f.key)] = default_json(f);
      if (f.key == "monitor") QCOMPARE(plain.monitor, std::string(f.text));
      if (f.key == "mode") QCOMPARE(plain.mode, std::string(f.text));
      if (f.key == "separator") QCOMPARE(plain.separator, std::string(f.text));
      if (f.key == "factor") QCOMPARE(plain.factor, f.number);
      if (f.key == "min_lr") QCOMPARE(plain.min_lr, f.number);
      if (c.class_name == kEarlyStopping && f.key == "patience")
        QCOMPARE(static_cast<double>(plain.patience), f.number);
    }
    const Json fit = {{"callbacks", Json::array({{{"class_name", std::string(c.class_name)},
                                                  {"config", config}}})}};
    const ExperimentSpec spec = parse_with(Json::array({dense()}), compile_with("sgd", "mse"), fit);
    QCOMPARE(spec.fit.callbacks.front().class_name, std::string(c.class_name));
  }
  const std::string message = error_of([] {
    parse_with(Json::array({dense()}), compile_with("sgd", "mse"),
               {{"callbacks", Json::array({{{"class_name", "TensorBoard"}}})}});
  });
  QVERIFY2(
      message.find("; expected one of: EarlyStopping, ModelCheckpoint, CSVLogger, "
                   "ReduceLROnPlateau, LearningRateScheduler, TerminateOnNaN") != std::string::npos,
      message.c_str());
}

void TestRegistries::collectiveAlgorithms() {
  QCOMPARE(
      names_of(collective_algorithms(), [](const CollectiveAlgorithmInfo& a) { return a.name; }),
      (std::vector<std::string>{"ring", "naive"}));
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) {
    QCOMPARE(parse_algorithm(std::string(a.name), "p"), a.algorithm);
    QCOMPARE(std::string(algorithm_name(a.algorithm)), std::string(a.name));
    const ExperimentSpec spec =
        parse_with(Json::array({dense()}), compile_with("sgd", "mse"), Json::object(),
                   {{"type", "cpu"}, {"count", 2}, {"allreduce", std::string(a.name)}});
    QCOMPARE(spec.devices.allreduce, std::string(a.name));
  }
  QCOMPARE(DevicesSpec{}.allreduce, std::string(collective_algorithms().front().name));
  QCOMPARE(error_of([] { parse_algorithm("tree", "p"); }),
           std::string("p: must be \"ring\" or \"naive\", got \"tree\""));
}

QTEST_GUILESS_MAIN(TestRegistries)
#include "tst_registries.moc"
