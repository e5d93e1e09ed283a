// Tests of model files (core/io/model_file.h): float32 weights survive a write/read bit for bit,
// the config and compile options survive, and every malformed file names its exact place.
#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <bit>
#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <optional>
#include <random>

#include "core/base/error.h"
#include "core/io/json_file.h"
#include "core/io/keras_json.h"
#include "core/io/model_file.h"
#include "core/training/sequential.h"
#include "tests/core/input_error.h"

using namespace fitbench;
using OrderedJson = nlohmann::ordered_json;

namespace {

using test::error_of;

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::filesystem::path folder(const QTemporaryDir& dir) { return dir.path().toStdString(); }

// keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(1, activation="sigmoid")]).
ModelSpec seed_model() {
  ModelSpec m;
  LayerSpec input;
  input.class_name = "InputLayer";
  input.name = "input_layer";
  input.shape = {4};
  LayerSpec dense;
  dense.class_name = "Dense";
  dense.name = "dense";
  dense.units = 1;
  dense.activation = "sigmoid";
  m.layers = {input, dense};
  return m;
}

const char* kBase = R"({
  "format": "fitbench-model",
  "version": 1,
  "config": {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 4], "name": "input_layer"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 1, "activation": "sigmoid"}}]}},
  "compile": {"optimizer": "sgd", "loss": "binary_crossentropy", "metrics": ["accuracy"]},
  "weights": [
    {"path": "sequential/dense/kernel", "shape": [4, 1], "values": [0.5, -0.25, 1, 2]},
    {"path": "sequential/dense/bias", "shape": [1], "values": [0.125]}
  ]
})";

}  // namespace

class TestModelFile : public QObject {
  Q_OBJECT

 private slots:
  void round_trip_is_bit_exact();
  void compile_is_optional();
  void data_round_trips();
  void reads_a_hand_written_file();
  void rows_are_written_one_per_line();
  void errors_data();
  void errors();
  void write_rejects_what_it_could_not_read();
  void write_replaces_atomically();
  void structure_skips_the_values();
  void weights_of_another_model_name_the_shapes();
};

void TestModelFile::round_trip_is_bit_exact() {
  // Hard cases by hand, then 20000 random bit patterns (every finite float is a candidate).
  std::vector<float> values = {0.1f,
                               0.2f,
                               1.0f / 3.0f,
                               -0.0f,
                               0.0f,
                               std::numeric_limits<float>::denorm_min(),
                               -std::numeric_limits<float>::denorm_min(),
                               FLT_MIN,
                               std::nextafter(FLT_MIN, 0.0f),
                               FLT_MAX,
                               -FLT_MAX,
                               std::nextafter(1.0f, 2.0f),
                               std::nextafter(1.0f, 0.0f),
                               16777216.0f,
                               1e-7f,
                               123456.789f};
  std::mt19937 rng(2024);
  while (values.size() < 20000) {
    const float f = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    if (std::isfinite(f)) values.push_back(f);
  }
  ModelFile model;
  // Dense(4) on 5000 features: the kernel holds the 20000 values.
  model.config = seed_model();
  model.config.layers[0].shape = {5000};
  model.config.layers[1].units = 4;
  CompileOptions compile;
  compile.optimizer.class_name = "SGD";
  compile.optimizer.learning_rate = 0.2;
  compile.loss.name = "binary_crossentropy";
  compile.metrics = {"accuracy"};
  model.compile = compile;
  model.weights.push_back({"sequential/dense/kernel", {5000, 4}, values});
  model.weights.push_back({"sequential/dense/bias", {4}, {-0.0f, 0.0f, FLT_MAX, 0.5f}});

  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  write_model_file(model, file);
  const ModelFile back = read_model_file(file);
  QCOMPARE(back.weights.size(), size_t{2});
  for (size_t w = 0; w < 2; ++w) {
    QCOMPARE(back.weights[w].path, model.weights[w].path);
    QCOMPARE(back.weights[w].shape, model.weights[w].shape);
    QCOMPARE(back.weights[w].values.size(), model.weights[w].values.size());
    for (size_t i = 0; i < model.weights[w].values.size(); ++i) {
      const uint32_t want = std::bit_cast<uint32_t>(model.weights[w].values[i]);
      const uint32_t got = std::bit_cast<uint32_t>(back.weights[w].values[i]);
      if (want != got) {
        QFAIL(qPrintable(QString("weights[%1].values[%2]: wrote %3, read %4")
                             .arg(w)
                             .arg(i)
                             .arg(model.weights[w].values[i], 0, 'g', 9)
                             .arg(back.weights[w].values[i], 0, 'g', 9)));
      }
    }
  }
  QCOMPARE(QString::fromStdString(model_config_to_json(back.config).dump()),
           QString::fromStdString(model_config_to_json(model.config).dump()));
  QVERIFY(back.compile.has_value());
  QCOMPARE(back.compile->optimizer.class_name, std::string("SGD"));
  QCOMPARE(back.compile->optimizer.learning_rate, std::optional<double>(0.2));
  QCOMPARE(back.compile->loss.name, std::string("binary_crossentropy"));
  QCOMPARE(back.compile->metrics, std::vector<std::string>{"accuracy"});
}

void TestModelFile::compile_is_optional() {
  ModelFile model;
  model.config = seed_model();
  model.weights.push_back({"sequential/dense/kernel", {4, 1}, {1, 2, 3, 4}});
  model.weights.push_back({"sequential/dense/bias", {1}, {0.5f}});
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  write_model_file(model, file);
  QVERIFY(read_text(file).find("\"compile\"") == std::string::npos);
  QVERIFY(!read_model_file(file).compile.has_value());
}

void TestModelFile::data_round_trips() {
  // What the model was trained on: the CSV's columns and data.standardize's statistics.
  ModelFile model;
  model.config = seed_model();
  model.weights.push_back({"sequential/dense/kernel", {4, 1}, {1, 2, 3, 4}});
  model.weights.push_back({"sequential/dense/bias", {1}, {0.5f}});
  model.data = ModelData{{"a", "b", "c", "d"}, {"y"}, {0.5, -1.25, 1e6, 0.0}, {2.0, 0.1, 3e5, 1.0}};
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  write_model_file(model, file);
  const ModelFile back = read_model_file(file);
  QVERIFY(back.data.has_value());
  QCOMPARE(back.data->features, model.data->features);
  QCOMPARE(back.data->targets, model.data->targets);
  QCOMPARE(back.data->mean, model.data->mean);
  QCOMPARE(back.data->stddev, model.data->stddev);
  model.data = ModelData{};  // nothing to say: no "data" key
  write_model_file(model, file);
  QVERIFY(read_text(file).find("\"data\"") == std::string::npos);
}

void TestModelFile::reads_a_hand_written_file() {
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  std::ofstream(file) << kBase;
  const ModelFile model = read_model_file(file);
  QCOMPARE(model.config.layers.size(), size_t{2});
  QCOMPARE(model.config.layers[1].units, int64_t{1});
  QCOMPARE(model.compile->optimizer.class_name, std::string("SGD"));
  QCOMPARE(model.weights.size(), size_t{2});
  QCOMPARE(model.weights[0].shape, (Shape{4, 1}));
  QCOMPARE(model.weights[0].values, (std::vector<float>{0.5f, -0.25f, 1.0f, 2.0f}));
  QCOMPARE(model.weights[1].path, std::string("sequential/dense/bias"));
  QCOMPARE(model.weights[1].values, std::vector<float>{0.125f});
}

void TestModelFile::rows_are_written_one_per_line() {
  ModelFile model;
  model.config = seed_model();
  model.weights.push_back({"sequential/dense/kernel", {2, 3}, {1, 2, 3, 4.5f, 0.1f, -6}});
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  write_model_file(model, file);
  const std::string text = read_text(file);
  QVERIFY2(text.find("\"shape\": [2, 3],\n      \"values\": [\n        1, 2, 3,\n"
                     "        4.5, 0.1, -6\n      ]\n") != std::string::npos,
           text.c_str());
  QVERIFY(text.rfind("{\n  \"format\": \"fitbench-model\",\n  \"version\": 1,\n", 0) == 0);
  QVERIFY(OrderedJson::accept(text));
}

void TestModelFile::errors_data() {
  QTest::addColumn<QString>("pointer");
  QTest::addColumn<QString>("value");  // raw JSON text; "" removes the key
  QTest::addColumn<QString>("place");  // after "<file>: "; "" for the file alone
  QTest::addColumn<QString>("message");
  int count = 0;
  const auto row = [&count](const char* pointer, const char* value, const char* place,
                            const char* message) {
    QTest::addRow("%d %s", ++count, place) << pointer << value << place << message;
  };
  row("/weights/0/values", "[1, 2, 3]", "weights[0].values",
      "has 3 values but the shape [4, 1] needs 4");
  row("/weights/1/values", "[]", "weights[1].values", "has 0 values but the shape [1] needs 1");
  row("/format", R"("keras")", "format", "must be \"fitbench-model\", got \"keras\"");
  row("/format", "", "format", "is required (\"fitbench-model\")");
  row("/version", "2", "version",
      "is 2: the file was written by a newer fitbench; this one reads version 1");
  row("/version", "0", "version", "must be 1, got 0");
  row("/version", R"("1")", "version", "must be 1, got \"1\"");
  row("/weights/0/values/1", "1e39", "weights[0].values[1]",
      "must be within float32's range, got 1e+39");
  row("/weights/0/values/2", R"("NaN")", "weights[0].values[2]",
      "must be a finite number, got \"NaN\"");
  row("/weights/0/values/3", "null", "weights[0].values[3]", "must be a finite number, got null");
  row("/weights/0/values/0", "1e400", "@VALUE@",
      "is not valid JSON: number overflow parsing '1e400'");
  row("/weights/1/path", R"("sequential/dense/kernel")", "weights[1].path",
      "\"sequential/dense/kernel\" is already the path of weights[0]");
  row("/weights/0/shape", "[4, 0]", "weights[0].shape[1]", "must be a positive integer, got 0");
  row("/weights/0/shape", "[]", "weights[0].shape",
      "must be a non-empty list of positive integers, got []");
  row("/weights/0/name", R"("kernel")", "weights[0].name",
      "unknown key; expected one of: path, shape, values");
  row("/weights", "", "weights", "is required (the list of variables)");
  row("/optimizer_state", "{}", "optimizer_state",
      "unknown key; expected one of: format, version, config, compile, weights, data");
  row("/data", R"({"features": ["a", "a"]})", "data.features[1]", "names column \"a\" twice");
  row("/data", R"({"mean": [0, 1]})", "data", "needs both mean and stddev, or neither");
  row("/data", R"({"mean": [0], "stddev": [0]})", "data.stddev[0]",
      "must be a positive number, got 0");
  row("/data", R"({"features": ["a", "b"], "mean": [0], "stddev": [1]})", "data.mean",
      "has 1 value but data.features names 2");
  row("/config/config/layers/1/config/units", "0", "config.config.layers[1].config.units",
      "must be a positive integer, got 0");
  // Weights that are not the config's variables (run --load-weights takes only the weights).
  row("/config/config/layers/1/config/units", "2", "weights[0].shape",
      "is [4, 1] but \"sequential/dense/kernel\" of the model in \"config\" has [4, 2]; the "
      "weights were saved from another model");
  // A model that never declared its input (no InputLayer): the width is the first kernel's.
  row("/config/config/layers",
      R"([{"class_name": "Dense", "config": {"name": "dense", "units": 2, "activation": "relu"}}])",
      "weights[0].shape",
      "is [4, 1] but \"sequential/dense/kernel\" of the model in \"config\" has [4, 2]; the "
      "weights were saved from another model");
  row("/weights/0/shape", "[2, 2]", "weights[0].shape",
      "is [2, 2] but \"sequential/dense/kernel\" of the model in \"config\" has [4, 1]; the "
      "weights were saved from another model");
  row("/weights/1/path", R"("sequential/out/bias")", "weights[1].path",
      "\"sequential/out/bias\" is not a variable of the model in \"config\"; the weights were "
      "saved from another model");
  row("/weights",
      R"([{"path": "sequential/dense/kernel", "shape": [4, 1], "values": [1, 2, 3, 4]}])",
      "weights", "has no \"sequential/dense/bias\" [1], a variable of the model in \"config\"");
  row("/compile/loss", R"("poisson")", "compile.loss",
      "\"poisson\" is not supported by fitbench; expected one of: binary_crossentropy, "
      "categorical_crossentropy, sparse_categorical_crossentropy, mean_squared_error, "
      "mean_absolute_error, huber");
}

void TestModelFile::errors() {
  QFETCH(QString, pointer);
  QFETCH(QString, value);
  QFETCH(QString, place);
  QFETCH(QString, message);
  OrderedJson doc = OrderedJson::parse(kBase);
  const OrderedJson::json_pointer ptr(pointer.toStdString());
  std::string text;
  if (value.isEmpty()) {
    doc[ptr.parent_pointer()].erase(ptr.back());
    text = doc.dump();
  } else {
    // A placeholder replaced by the raw text, so values a JSON library cannot hold (1e400) fit.
    doc[ptr] = "@RAW@";
    text = doc.dump();
    text.replace(text.find("\"@RAW@\""), 7, value.toStdString());
  }
  QTemporaryDir dir;
  const auto file = folder(dir) / "bad.json";
  std::ofstream(file) << text;
  const auto error = error_of([&] { read_model_file(file); });
  QVERIFY(error.has_value());
  // "@VALUE@": a JSON syntax error, at the value's own line and column of the one-line text.
  const std::string where =
      place == "@VALUE@" ? "line 1, column " + std::to_string(text.find(value.toStdString()) + 1)
                         : place.toStdString();
  const std::string expected_place = where.empty() ? file.string() : file.string() + ": " + where;
  QCOMPARE(error->place(), expected_place);
  QCOMPARE(QString::fromStdString(error->message()), message);
}

void TestModelFile::write_rejects_what_it_could_not_read() {
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  ModelFile model;
  model.config = seed_model();
  model.weights.push_back({"sequential/dense/bias", {1}, {0.5f}});
  model.weights.push_back(
      {"sequential/dense/kernel", {4, 1}, {1, 2, std::numeric_limits<float>::quiet_NaN(), 4}});
  auto error = error_of([&] { write_model_file(model, file); });
  QVERIFY(error.has_value());
  // A diverged run's weights: one sentence in every format, the file not written.
  const std::string diverged =
      "not written: training diverged, the weights (\"sequential/dense/kernel\" first) are not "
      "finite numbers (NaN or infinity); lower the learning rate (TerminateOnNaN stops a run at "
      "the first NaN loss)";
  QCOMPARE(error->place(), file.string());
  QCOMPARE(error->message(), diverged);
  QVERIFY(!std::filesystem::exists(file));
  for (const char* name : {"model.keras", "model.weights.h5"}) {
    const auto other = folder(dir) / name;
    error = error_of([&] { write_model_file(model, other); });
    QVERIFY(error.has_value());
    QCOMPARE(error->place(), other.string());
    QCOMPARE(error->message(), diverged);
    QVERIFY(!std::filesystem::exists(other));
  }

  model.weights[1].values = {1, 2, 3};
  error = error_of([&] { write_model_file(model, file); });
  QVERIFY(error.has_value());
  QCOMPARE(error->place(), file.string() + ": weights[1].values");
  QCOMPARE(error->message(), std::string("has 3 values but the shape [4, 1] needs 4"));
  QVERIFY(!std::filesystem::exists(file));
}

// What summary reads: the weights' paths and shapes, in any key order, without their values
// (a value that is not a number is not looked at; text that is not JSON still is).
void TestModelFile::structure_skips_the_values() {
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  const std::string entry =
      R"({"path": "sequential/dense/kernel", "shape": [4, 1], "values": [0.5, -0.25, 1, 2]})";
  std::string text = kBase;
  text.replace(text.find(entry), entry.size(),
               R"({"values": [0.5, "x", 1, {"deep": [[2]]}], "path": "sequential/dense/kernel", )"
               R"("shape": [4, 1]})");
  std::ofstream(file) << text;
  const ModelFile m =
      model_structure(json_io::read_json_file(file, json_io::WeightValues::kSkip), file);
  QCOMPARE(m.weights.size(), size_t{2});
  QCOMPARE(m.weights[0].path, std::string("sequential/dense/kernel"));
  QCOMPARE(m.weights[0].shape, (Shape{4, 1}));
  QVERIFY(m.weights[0].values.empty() && m.weights[1].values.empty());
  QCOMPARE(m.config.layers.size(), size_t{2});
  QVERIFY(m.compile.has_value());
  // Read whole, the same file is refused at the value.
  const auto whole = error_of([&] { read_model_file(file); });
  QVERIFY(whole.has_value());
  QCOMPARE(whole->place(), file.string() + ": weights[0].values[1]");

  text = kBase;
  text.replace(text.find("-0.25"), 5, "-0.25]");
  std::ofstream(file) << text;
  const auto broken = error_of(
      [&] { model_structure(json_io::read_json_file(file, json_io::WeightValues::kSkip), file); });
  QVERIFY(broken.has_value());
  QVERIFY2(broken->message().find("is not valid JSON") == 0, broken->what());
}

void TestModelFile::write_replaces_atomically() {
  QTemporaryDir dir;
  const auto file = folder(dir) / "model.json";
  ModelFile model;
  model.config = seed_model();
  model.weights.push_back({"sequential/dense/bias", {1}, {0.5f}});
  model.weights.push_back({"sequential/dense/kernel", {4, 1}, {1, 2, 3, 4}});
  write_model_file(model, file);
  model.weights[0].values = {0.75f};
  write_model_file(model, file);
  QCOMPARE(read_model_file(file).weights[0].values, std::vector<float>{0.75f});
  // Only the model file is left in the folder: the temporary file was renamed over it.
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden).size(), 1);

  const auto missing = folder(dir) / "no-such-folder" / "model.json";
  const auto error = error_of([&] { write_model_file(model, missing); });
  QVERIFY(error.has_value());
  QCOMPARE(error->place(), missing.string());
  QCOMPARE(error->message(), std::string("cannot be written: No such file or directory"));
}

// Weights saved from another model: which entry, its shape and the model's.
void TestModelFile::weights_of_another_model_name_the_shapes() {
  Sequential model(seed_model());
  std::vector<NamedWeight> weights = model.get_weights();
  QCOMPARE(weights.size(), size_t(2));
  QCOMPARE(weights[0].path, std::string("sequential/dense/kernel"));
  weights[0].shape = {3, 1};
  weights[0].values.resize(3);
  try {
    model.set_weights(weights, "m.json");
    QFAIL("a [3, 1] kernel was loaded into a [4, 1] one");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("m.json: weights[0].shape"));
    QCOMPARE(e.message(), std::string("is [3, 1], but this model's \"sequential/dense/kernel\" "
                                      "has shape [4, 1] (the model file was saved from another "
                                      "model)"));
  }
}

QTEST_GUILESS_MAIN(TestModelFile)
#include "tst_model_file.moc"
