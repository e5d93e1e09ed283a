// The Images view's numbers (core/run/class_predictions.h): the confusion matrix, accuracies and
// orders of hand-made outputs; and, after real training runs, the predictions of the run's model
// file on the part the run validated on, whose accuracy must be the History's last
// val_accuracy (Keras computes it from the same argmax), and on the training part, whose
// accuracy must be what Sequential::evaluate says.
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <sstream>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/io/experiment.h"
#include "core/run/class_predictions.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "core/training/sequential.h"
#include "tests/core/idx_fixtures.h"

using namespace fitbench;

namespace {

Matrix rows(std::initializer_list<std::initializer_list<float>> values) {
  Matrix m(static_cast<Index>(values.size()), static_cast<Index>(values.begin()->size()));
  Index r = 0;
  for (const auto& row : values) {
    Index c = 0;
    for (const float v : row) m(r, c++) = v;
    ++r;
  }
  return m;
}

// A small convolutional classifier of the fixture's 28 x 28 images.
std::string experiment(const std::string& data, const std::string& fit) {
  return R"({"seed": 3, "data": )" + data + R"(,
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, 28, 28]}},
      {"class_name": "Reshape", "config": {"target_shape": [28, 28, 1]}},
      {"class_name": "Conv2D", "config": {"name": "edges", "filters": 4, "kernel_size": [3, 3],
                                          "strides": [2, 2], "activation": "relu"}},
      {"class_name": "Flatten", "config": {}},
      {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}},
    "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.01}},
                "loss": "sparse_categorical_crossentropy", "metrics": ["accuracy"]},
    "fit": )" +
         fit + "}";
}

RunResult run_quietly(RunPlan& plan) {
  std::ostringstream quiet;
  RunIO io;
  io.out = &quiet;
  io.warnings = &quiet;
  return execute_run(plan, io);
}

}  // namespace

class TestClassPredictions : public QObject {
  Q_OBJECT

 private slots:
  void confusionOfHandMadeOutputs() {
    // Three classes; true labels 0 0 1 1 2 2; predicted 0 1 1 1 0 2.
    const Matrix out = rows({{0.9f, 0.1f, 0.0f},
                             {0.2f, 0.7f, 0.1f},
                             {0.1f, 0.8f, 0.1f},
                             {0.3f, 0.6f, 0.1f},
                             {0.5f, 0.2f, 0.3f},
                             {0.0f, 0.1f, 0.9f}});
    const Matrix y = rows({{0}, {0}, {1}, {1}, {2}, {2}});
    const ClassPredictions p = classify(out, y);
    QCOMPARE(p.classes, 3);
    QCOMPARE(p.size(), Index{6});
    QCOMPARE(p.confusion, (std::vector<int64_t>{1, 1, 0, 0, 2, 0, 1, 0, 1}));
    QCOMPARE(p.correct(), int64_t{4});
    QCOMPARE(p.accuracy(), 4.0 / 6.0);
    QCOMPARE(*p.class_accuracy(0), 0.5);
    QCOMPARE(*p.class_accuracy(1), 1.0);
    QCOMPARE(p.row_total(2), int64_t{2});
    QCOMPARE(p.cell(1, 1), (std::vector<Index>{2, 3}));
    QCOMPARE(p.cell(2, 0), (std::vector<Index>{4}));
    QVERIFY(p.cell(0, 2).empty());
    QCOMPARE(p.score[4], 0.5f);
    // Mistakes first, the most confident first (0.7 before 0.5); then the right ones, the least
    // confident first (0.6, 0.8, 0.9, 0.9 in data order).
    QCOMPARE(p.mistakes_first(), (std::vector<Index>{1, 4, 3, 2, 0, 5}));

    // One-hot labels give the same matrix.
    const Matrix hot = rows({{1, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, 1}});
    QCOMPARE(classify(out, hot).confusion, p.confusion);

    // A class without samples has no accuracy.
    const ClassPredictions q = classify(rows({{0.9f, 0.1f, 0.0f}}), rows({{0}}));
    QVERIFY(!q.class_accuracy(2));
  }

  void labelsThatDoNotFitAreSaid() {
    const Matrix out = rows({{0.9f, 0.1f}, {0.2f, 0.8f}});
    auto message = [&](const Matrix& o, const Matrix& y) {
      try {
        classify(o, y);
      } catch (const InputError& e) {
        return std::string(e.what());
      }
      return std::string("no error");
    };
    QCOMPARE(message(out, rows({{0}, {2}})),
             std::string("data: sample 1 has the label 2, which is not a class index below 2"));
    QCOMPARE(message(out, rows({{0}, {0.5f}})),
             std::string("data: sample 1 has the label 0.5, which is not a class index below 2"));
    QCOMPARE(message(rows({{0.9f}, {0.2f}}), rows({{0}, {1}})),
             std::string("model: has 1 output: a confusion matrix needs one output per class"));
    QCOMPARE(message(out, rows({{0, 1, 0}, {1, 0, 0}})),
             std::string("data: has 3 target columns for 2 outputs: the labels must be a class "
                         "index or one-hot"));
  }

  // After a run that validates on the test images, the model file's predictions on them are
  // right exactly as often as the History's last val_accuracy says; on the training images, as
  // often as evaluate() says. The first Conv2D's kernel is the model file's.
  void agreesWithTheRunsOwnAccuracy_data() {
    QTest::addColumn<QString>("data");
    QTest::addColumn<QString>("fit");
    QTest::newRow("test images") << R"({"dataset": "fashion_mnist", "validation_data": "test"})"
                                 << R"({"epochs": 2, "batch_size": 32, "verbose": 0})";
    QTest::newRow("validation_split")
        << R"({"dataset": "fashion_mnist", "scale": false})"
        << R"({"epochs": 2, "batch_size": 32, "verbose": 0, "validation_split": 0.25})";
  }
  void agreesWithTheRunsOwnAccuracy() {
    QFETCH(QString, data);
    QFETCH(QString, fit);
    QTemporaryDir dir;
    test::write_fashion_mnist(dir.path().toStdString(), 400, 150);
    nlohmann::json doc = nlohmann::json::parse(experiment(data.toStdString(), fit.toStdString()));
    doc["data"]["path"] = dir.path().toStdString();
    RunPlan plan = plan_run(parse_experiment(doc, "t.json", {}), {}, PlanContext{});
    const RunResult result = run_quietly(plan);
    QVERIFY(classifier_problem(result.model).empty());

    const Dataset loaded = load_dataset(plan.spec.data, {});
    const DataPart validation = data_part(loaded, plan.spec, result.model, true);
    QCOMPARE(validation.x.rows(), data.contains("test") ? Index{150} : Index{100});
    const ClassPredictions v = predict_classes(result.model, validation);
    QCOMPARE(v.size(), validation.x.rows());
    // (Keras's metric is a float32 mean.)
    QCOMPARE(static_cast<float>(v.accuracy()),
             static_cast<float>(result.history.last("val_accuracy")));

    const DataPart training = data_part(loaded, plan.spec, result.model, false);
    QCOMPARE(training.x.rows(), data.contains("test") ? Index{400} : Index{300});
    const ClassPredictions t = predict_classes(result.model, training);
    const Logs logs = plan.model->evaluate(training.x, training.y, 32, 0);
    QCOMPARE(static_cast<float>(t.accuracy()), static_cast<float>(logs.at("accuracy")));

    const FirstFilters f = first_conv_filters(result.model);
    QCOMPARE(f.layer, std::string("edges"));
    QCOMPARE(f.shape, (Shape{3, 3, 1, 4}));
    QCOMPARE(f.values.size(), size_t{36});
  }

  // A cancelled prediction stops at once with what it has; a model that is not a classifier says
  // why.
  void cancelAndProblems() {
    QTemporaryDir dir;
    test::write_fashion_mnist(dir.path().toStdString(), 300, 10);
    nlohmann::json doc = nlohmann::json::parse(
        experiment(R"({"dataset": "fashion_mnist"})", R"({"epochs": 1, "verbose": 0})"));
    doc["data"]["path"] = dir.path().toStdString();
    RunPlan plan = plan_run(parse_experiment(doc, "t.json", {}), {}, PlanContext{});
    RunResult result = run_quietly(plan);
    const DataPart all =
        data_part(load_dataset(plan.spec.data, {}), plan.spec, result.model, false);
    const std::atomic<bool> cancelled{true};
    QCOMPARE(predict_classes(result.model, all, &cancelled).size(), Index{0});

    result.model.compile->loss.name = "mean_squared_error";
    QCOMPARE(classifier_problem(result.model),
             std::string("The model is not trained as a classifier of several classes (its loss "
                         "is mean_squared_error; sparse_categorical_crossentropy or "
                         "categorical_crossentropy is)"));
    ModelFile dense = result.model;
    dense.weights.clear();
    QVERIFY(first_conv_filters(dense).shape.empty());
  }
};

QTEST_GUILESS_MAIN(TestClassPredictions)
#include "tst_class_predictions.moc"
