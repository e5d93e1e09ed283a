// A model on another CSV file (core/run/model_on_csv.h) against values worked out by hand: a
// Dense(1, sigmoid) whose weights are set, reading its features by name and standardizing them
// as trained; the results as CSV and JSON text.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>

#include "core/base/error.h"
#include "core/io/model_file.h"
#include "core/run/model_on_csv.h"

using namespace fitbench;

namespace {

// sigmoid(w_b * (b - 1) / 2 + w_a * (a - 10) / 4 + bias) with w = {2, -1}, bias 0.5: features b, a
// standardized with mean {1, 10} and stddev {2, 4}.
double expected(double a, double b) {
  const double z = 2.0 * (b - 1.0) / 2.0 - 1.0 * (a - 10.0) / 4.0 + 0.5;
  return 1.0 / (1.0 + std::exp(-z));
}

const char* kModel = R"({"format": "fitbench-model", "version": 1,
  "config": {"class_name": "Sequential", "config": {"name": "sequential", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 2], "name": "input_layer"}},
    {"class_name": "Dense", "config": {"name": "dense", "units": 1, "activation": "sigmoid"}}]}},
  "compile": {"optimizer": "sgd", "loss": "binary_crossentropy", "metrics": ["accuracy"]},
  "weights": [{"path": "sequential/dense/kernel", "shape": [2, 1], "values": [2, -1]},
              {"path": "sequential/dense/bias", "shape": [1], "values": [0.5]}],
  "data": {"features": ["b", "a"], "targets": ["y"], "mean": [1, 10], "stddev": [2, 4]}})";

}  // namespace

class TestModelOnCsv : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  ModelFile m_model;

  std::string write(const char* name, const QByteArray& text) {
    QFile f(m_dir.filePath(name));
    if (!f.open(QIODevice::WriteOnly)) return {};
    f.write(text);
    return f.fileName().toStdString();
  }

 private slots:
  void initTestCase() { m_model = read_model_file(write("model.json", kModel)); }

  void predictReadsFeaturesByNameAndStandardizes() {
    CsvInput in;
    in.csv = write("rows.csv", "y,a,extra,b\n1,10,7,3\n0,14,7,-1\n1,2,7,1\n");
    const Predictions p = predict_on_csv(m_model, in);
    QCOMPARE(p.input_names, (std::vector<std::string>{"b", "a"}));
    QCOMPARE(p.output_names, std::vector<std::string>{"output_0"});
    QCOMPARE(p.inputs.rows(), 3);
    QCOMPARE(p.inputs(1, 0), -1.0f);  // as read, not standardized
    QCOMPARE(p.inputs(1, 1), 14.0f);
    const double a[] = {10, 14, 2}, b[] = {3, -1, 1};
    for (int r = 0; r < 3; ++r) QVERIFY(std::abs(p.outputs(r, 0) - expected(a[r], b[r])) < 1e-6);

    QCOMPARE(predictions_csv(p, false).substr(0, 9), std::string("output_0\n"));
    const std::string csv = predictions_csv(p);
    QVERIFY(csv.starts_with("b,a,output_0\n3,10,"));
    QCOMPARE(std::count(csv.begin(), csv.end(), '\n'), 4);
    QVERIFY(
        predictions_json(p).starts_with(R"({"columns":["b","a","output_0"],"data":[[3.0,10.0,)"));
  }

  void evaluateGivesKerasLogs() {
    CsvInput in;
    in.csv = write("eval.csv", "a,b,y\n10,3,1\n14,-1,0\n");
    const Evaluation e = evaluate_on_csv(m_model, in);
    QCOMPARE(e.rows, 2);
    const double p0 = expected(10, 3), p1 = expected(14, -1);
    const double loss = -(std::log(p0) + std::log(1.0 - p1)) / 2.0;
    QVERIFY(std::abs(e.logs.at("loss") - loss) < 1e-6);
    QCOMPARE(e.logs.at("accuracy"), 1.0);  // p0 > 0.5, p1 < 0.5
    QCOMPARE(logs_csv({{"accuracy", 1.0}, {"loss, total", 0.25}}),
             std::string("name,value\naccuracy,1\n\"loss, total\",0.25\n"));
    QCOMPARE(logs_json({{"loss", 0.25}}), std::string("{\n  \"loss\": 0.25\n}\n"));
  }

  void errorsNameTheCsv() {
    CsvInput in;
    in.model_name = "m.json";
    in.csv = write("short.csv", "a,y\n1,0\n");
    try {
      evaluate_on_csv(m_model, in);
      QFAIL("no error");
    } catch (const InputError& e) {
      QCOMPARE(e.place(), in.csv.string());
      QVERIFY2(QByteArray(e.what()).contains("(a feature m.json was trained on)"), e.what());
    }
    in.target = "nope";
    in.csv = write("rows2.csv", "a,b,y\n1,2,0\n");
    try {
      evaluate_on_csv(m_model, in);
      QFAIL("no error");
    } catch (const InputError& e) {
      QCOMPARE(e.place(), std::string("data.target"));  // the user's choice, for the front end
    }
  }

  void kerasNumber() {
    QCOMPARE(keras_number(0.46601), std::string("0.4660"));
    QCOMPARE(keras_number(0.0), std::string("0.0000"));
    QCOMPARE(keras_number(0.00012345), std::string("1.2345e-04"));
    QCOMPARE(keras_number(NAN), std::string("nan"));
    QCOMPARE(keras_number(-INFINITY), std::string("-inf"));
  }
};

QTEST_GUILESS_MAIN(TestModelOnCsv)
#include "tst_model_on_csv.moc"
