// Tests of the metrics (core/metrics): how "accuracy"/"acc" resolves per loss and output width as
// Keras 3's compile() does, the log keys, each metric against hand-computed values, that summing
// the states of two blocks equals accumulating the whole batch (what data parallelism relies on),
// the empty state, and the input errors.
#include <QTest>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/metrics/metric.h"

using namespace fitbench;

Q_DECLARE_METATYPE(fitbench::Matrix)

namespace {

Matrix mat(Index rows, Index cols, std::initializer_list<float> values) {
  Q_ASSERT(static_cast<Index>(values.size()) == rows * cols);
  Matrix m(rows, cols);
  auto it = values.begin();
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) m(r, c) = *it++;
  return m;
}

double evaluate(const Metric& metric, const Matrix& y_pred, const Matrix& y_true) {
  std::vector<double> state(metric.state_size(), 0.0);
  metric.accumulate(y_pred, y_true, state.data());
  return metric.result(state.data());
}

std::unique_ptr<Metric> metric_for(const QString& name, const QString& loss, int units) {
  return make_metric(name.toStdString(), LossSpec{.name = loss.toStdString()}, units,
                     "compile.metrics[0]");
}

// One output unit: predictions 1, 0, 1, 0 at threshold 0.5 against labels 1, 0, 0, 0.
const Matrix kOnePred = mat(4, 1, {0.7f, 0.2f, 0.6f, 0.4f});
const Matrix kOneTrue = mat(4, 1, {1, 0, 0, 0});
// Three units. argmax(pred) = 1, 0, 2, 0.
const Matrix kThreePred =
    mat(4, 3, {0.6f, 0.7f, 0.1f, 0.8f, 0.1f, 0.3f, 0.2f, 0.3f, 0.9f, 0.4f, 0.35f, 0.25f});
// argmax(true) = 0, 0, 2, 1: categorical accuracy 2/4. Thresholded predictions (1,1,0), (1,0,0),
// (0,0,1), (0,0,0) match per unit 2/3, 3/3, 3/3, 2/3: binary accuracy 10/12.
const Matrix kThreeTrue = mat(4, 3, {1, 0, 0, 1, 0, 0, 0, 0, 1, 0, 1, 0});
// Class indices 1, 0, 2, 1: sparse categorical accuracy 3/4 (a categorical accuracy on this
// column would be 2/4, a broadcast binary accuracy 1/3).
const Matrix kThreeLabels = mat(4, 1, {1, 0, 2, 1});

}  // namespace

class TestMetrics : public QObject {
  Q_OBJECT

 private slots:
  // keras/src/trainers/compile_utils.py get_metric: one output unit -> binary accuracy; a target
  // of one column under a wider output (the sparse loss's class indices) -> sparse categorical;
  // otherwise categorical, whatever the loss (binary crossentropy on 3 units included). The log
  // key is the identifier as written.
  void accuracy_resolution_data() {
    QTest::addColumn<QString>("identifier");
    QTest::addColumn<QString>("loss");
    QTest::addColumn<int>("units");
    QTest::addColumn<Matrix>("y_pred");
    QTest::addColumn<Matrix>("y_true");
    QTest::addColumn<double>("expected");
    QTest::newRow("bce, 1 unit -> binary")
        << "accuracy"
        << "binary_crossentropy" << 1 << kOnePred << kOneTrue << 0.75;
    QTest::newRow("mse, 1 unit -> binary")
        << "acc"
        << "mean_squared_error" << 1 << kOnePred << kOneTrue << 0.75;
    QTest::newRow("sparse, 1 unit -> binary")
        << "accuracy"
        << "sparse_categorical_crossentropy" << 1 << kOnePred << kOneTrue << 0.75;
    QTest::newRow("cce, 3 units -> categorical")
        << "accuracy"
        << "categorical_crossentropy" << 3 << kThreePred << kThreeTrue << 0.5;
    QTest::newRow("bce, 3 units -> categorical")
        << "accuracy"
        << "binary_crossentropy" << 3 << kThreePred << kThreeTrue << 0.5;
    QTest::newRow("mse, 3 units -> categorical") << "ACC"
                                                 << "mse" << 3 << kThreePred << kThreeTrue << 0.5;
    QTest::newRow("sparse, 3 units -> sparse")
        << "accuracy"
        << "sparse_categorical_crossentropy" << 3 << kThreePred << kThreeLabels << 0.75;
    QTest::newRow("sparse class name, 3 units -> sparse")
        << "Accuracy"
        << "SparseCategoricalCrossentropy" << 3 << kThreePred << kThreeLabels << 0.75;
  }
  void accuracy_resolution() {
    QFETCH(QString, identifier);
    QFETCH(QString, loss);
    QFETCH(int, units);
    QFETCH(Matrix, y_pred);
    QFETCH(Matrix, y_true);
    QFETCH(double, expected);
    const auto metric = metric_for(identifier, loss, units);
    QCOMPARE(QString::fromStdString(metric->name()), identifier);
    QCOMPARE(metric->state_size(), 2);
    QCOMPARE(evaluate(*metric, y_pred, y_true), expected);
  }

  void explicit_metrics_data() {
    QTest::addColumn<QString>("identifier");
    QTest::addColumn<QString>("loss");
    QTest::addColumn<Matrix>("y_pred");
    QTest::addColumn<Matrix>("y_true");
    QTest::addColumn<double>("expected");
    QTest::newRow("binary_accuracy, 3 units")
        << "binary_accuracy"
        << "binary_crossentropy" << kThreePred << kThreeTrue << 10.0 / 12.0;
    QTest::newRow("BinaryAccuracy, 1 unit")
        << "BinaryAccuracy"
        << "binary_crossentropy" << kOnePred << kOneTrue << 0.75;
    // Logits are thresholded at 0.5 as given (not at 0): predictions 0, 1, 0, 1 against 0, 1, 1, 0.
    QTest::newRow("binary_accuracy on logits")
        << "binary_accuracy"
        << "binary_crossentropy" << mat(4, 1, {-0.3f, 2.0f, 0.4f, 0.6f}) << mat(4, 1, {0, 1, 1, 0})
        << 0.5;
    // The threshold is strict: 0.5 predicts 0.
    QTest::newRow("binary_accuracy at 0.5")
        << "binary_accuracy"
        << "binary_crossentropy" << mat(2, 1, {0.5f, 0.5f}) << mat(2, 1, {0, 1}) << 0.5;
    QTest::newRow("categorical_accuracy")
        << "categorical_accuracy"
        << "categorical_crossentropy" << kThreePred << kThreeTrue << 0.5;
    // Ties go to the first maximum: argmax(0.4, 0.4, 0.2) = 0.
    QTest::newRow("CategoricalAccuracy, tie")
        << "CategoricalAccuracy"
        << "categorical_crossentropy" << mat(2, 3, {0.4f, 0.4f, 0.2f, 0.4f, 0.4f, 0.2f})
        << mat(2, 3, {1, 0, 0, 0, 1, 0}) << 0.5;
    QTest::newRow("sparse_categorical_accuracy")
        << "sparse_categorical_accuracy"
        << "sparse_categorical_crossentropy" << kThreePred << kThreeLabels << 0.75;
    // A fractional label never equals an argmax.
    QTest::newRow("SparseCategoricalAccuracy, fractional label")
        << "SparseCategoricalAccuracy"
        << "sparse_categorical_crossentropy" << Matrix(kThreePred.topRows(2))
        << mat(2, 1, {1.0f, 0.5f}) << 0.5;
    // Rows: ((0.5)^2 + 0^2) / 2 = 0.125 and (1^2 + 2^2) / 2 = 2.5; mean 1.3125.
    const Matrix reg_pred = mat(2, 2, {0.5f, 1.0f, 2.0f, -1.0f});
    const Matrix reg_true = mat(2, 2, {0, 1, 1, 1});
    QTest::newRow("mse") << "mse"
                         << "mean_squared_error" << reg_pred << reg_true << 1.3125;
    QTest::newRow("MSE") << "MSE"
                         << "mean_squared_error" << reg_pred << reg_true << 1.3125;
    QTest::newRow("mean_squared_error") << "mean_squared_error"
                                        << "mean_absolute_error" << reg_pred << reg_true << 1.3125;
    QTest::newRow("MeanSquaredError") << "MeanSquaredError"
                                      << "huber" << reg_pred << reg_true << 1.3125;
    // Rows: (0.5 + 0) / 2 = 0.25 and (1 + 2) / 2 = 1.5; mean 0.875.
    QTest::newRow("mae") << "mae"
                         << "mean_squared_error" << reg_pred << reg_true << 0.875;
    QTest::newRow("MAE") << "MAE"
                         << "mean_squared_error" << reg_pred << reg_true << 0.875;
    QTest::newRow("mean_absolute_error") << "mean_absolute_error"
                                         << "mean_squared_error" << reg_pred << reg_true << 0.875;
    QTest::newRow("MeanAbsoluteError") << "MeanAbsoluteError"
                                       << "mean_squared_error" << reg_pred << reg_true << 0.875;
    // Predicted positive (> 0.5): rows 0, 1, 4. Labels positive: rows 0, 2, 4, 5.
    // tp = 2 (rows 0, 4), fp = 1 (row 1), fn = 2 (rows 2, 5).
    const Matrix pr_pred = mat(6, 1, {0.9f, 0.6f, 0.4f, 0.2f, 0.7f, 0.5f});
    const Matrix pr_true = mat(6, 1, {1, 0, 1, 0, 1, 1});
    QTest::newRow("precision") << "precision"
                               << "binary_crossentropy" << pr_pred << pr_true << 2.0 / 3.0;
    QTest::newRow("Precision") << "Precision"
                               << "binary_crossentropy" << pr_pred << pr_true << 2.0 / 3.0;
    QTest::newRow("recall") << "recall"
                            << "binary_crossentropy" << pr_pred << pr_true << 0.5;
    QTest::newRow("Recall") << "Recall"
                            << "binary_crossentropy" << pr_pred << pr_true << 0.5;
    // Every element counts; any nonzero label is positive. Predicted (1,0), (1,1); labels
    // (2,0), (0,1): tp = 2, fp = 1, fn = 0.
    const Matrix multi_pred = mat(2, 2, {0.8f, 0.1f, 0.9f, 0.7f});
    const Matrix multi_true = mat(2, 2, {2, 0, 0, 1});
    QTest::newRow("precision, 2 units")
        << "precision"
        << "binary_crossentropy" << multi_pred << multi_true << 2.0 / 3.0;
    QTest::newRow("recall, 2 units") << "recall"
                                     << "binary_crossentropy" << multi_pred << multi_true << 1.0;
    // Keras's in_top_k (k = 5) on 7 units: a hit when fewer than 5 outputs are greater than the
    // label's. Row 0: 4 greater, a hit; row 1: 5 greater, a miss; row 2: ties with the label do
    // not count (4 greater), a hit; row 3: NaN at the label is -inf (6 greater), a miss; row 4:
    // NaNs elsewhere are never greater (1), a hit; row 5: label 9 is no class, a miss; row 6:
    // label 2.7 is 2 (int32), a hit. 4 of 7.
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Matrix top_pred = mat(7, 7, {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f,  //
                                       0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f,  //
                                       0.9f, 0.9f, 0.9f, 0.9f, 0.5f, 0.5f, 0.5f,  //
                                       nan,  0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f,  //
                                       0.1f, nan,  nan,  nan,  nan,  nan,  0.2f,  //
                                       0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f,  //
                                       0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f});
    const Matrix top_labels = mat(7, 1, {2, 1, 6, 0, 0, 9, 2.7f});
    QTest::newRow("sparse_top_k_categorical_accuracy")
        << "sparse_top_k_categorical_accuracy"
        << "sparse_categorical_crossentropy" << top_pred << top_labels << 4.0 / 7.0;
    QTest::newRow("SparseTopKCategoricalAccuracy")
        << "SparseTopKCategoricalAccuracy"
        << "sparse_categorical_crossentropy" << top_pred << top_labels << 4.0 / 7.0;
    // One-hot labels 2, 1 and 6 on the first three rows: 2 of 3.
    Matrix one_hot = Matrix::Zero(3, 7);
    one_hot(0, 2) = one_hot(1, 1) = one_hot(2, 6) = 1.0f;
    QTest::newRow("top_k_categorical_accuracy")
        << "top_k_categorical_accuracy"
        << "categorical_crossentropy" << Matrix(top_pred.topRows(3)) << one_hot << 2.0 / 3.0;
    // AUC, 200 thresholds: outputs 0, 0.5, 0.3, 0.9 fall in buckets 0, 99, 59, 179. The ROC
    // curve's points are (1, 1) at threshold 0, (0.5, 1) to bucket 59, (0.5, 0.5) to 99,
    // (0, 0.5) to 179 and (0, 0): area 0.5 * 1 + 0.5 * 0.5 = 0.75 (Keras's docstring example,
    // where 3 thresholds give the same).
    const Matrix auc_pred = mat(4, 1, {0.0f, 0.5f, 0.3f, 0.9f});
    const Matrix auc_true = mat(4, 1, {0, 0, 1, 1});
    QTest::newRow("auc") << "auc"
                         << "binary_crossentropy" << auc_pred << auc_true << 0.75;
    QTest::newRow("AUC") << "AUC"
                         << "binary_crossentropy" << auc_pred << auc_true << 0.75;
    // A tie in one bucket is a straight line: (1, 1) to (0, 0), area 0.5.
    QTest::newRow("auc, tie") << "auc"
                              << "binary_crossentropy" << mat(2, 1, {0.5f, 0.5f})
                              << mat(2, 1, {1, 0}) << 0.5;
    // Outputs are clipped to [0, 1] and a NaN falls in bucket 0: -0.5 and NaN (labels 0, 1) are
    // below every positive threshold, 1.5 and 0.7 (labels 1, 0) in buckets 198 and 139. Points:
    // (1, 1); (0.5, 0.5) to 139; (0, 0.5) to 198; (0, 0). Area 0.5 * 0.75 + 0.5 * 0.5 = 0.625.
    QTest::newRow("auc, clipped and NaN")
        << "auc"
        << "binary_crossentropy" << mat(4, 1, {-0.5f, nan, 1.5f, 0.7f}) << mat(4, 1, {0, 1, 1, 0})
        << 0.625;
    // Every element counts, as with multi_label=False: two rows of three units are six outputs
    // 0.9, 0.2, 0.1 | 0.3, 0.6, 0.2 with labels 1, 0, 0 | 0, 1, 0. Both positives (0.9, 0.6) rank
    // above every negative (0.3 at most): area 1.
    QTest::newRow("auc, 3 units") << "auc"
                                  << "categorical_crossentropy"
                                  << mat(2, 3, {0.9f, 0.2f, 0.1f, 0.3f, 0.6f, 0.2f})
                                  << mat(2, 3, {1, 0, 0, 0, 1, 0}) << 1.0;
  }
  void explicit_metrics() {
    QFETCH(QString, identifier);
    QFETCH(QString, loss);
    QFETCH(Matrix, y_pred);
    QFETCH(Matrix, y_true);
    QFETCH(double, expected);
    const auto metric = metric_for(identifier, loss, static_cast<int>(y_pred.cols()));
    QCOMPARE(QString::fromStdString(metric->name()), identifier);
    QCOMPARE(evaluate(*metric, y_pred, y_true), expected);
  }

  // States of two blocks, accumulated separately and added, equal the whole batch's state; so
  // does accumulating both blocks into one state.
  void halves_equal_whole_data() {
    QTest::addColumn<QString>("identifier");
    QTest::addColumn<QString>("loss");
    QTest::addColumn<Matrix>("y_pred");
    QTest::addColumn<Matrix>("y_true");
    const Matrix pred = mat(5, 2, {0.9f, 0.1f, 0.3f, 0.8f, 0.6f, 0.55f, 0.2f, 0.4f, 0.7f, 0.9f});
    const Matrix truth = mat(5, 2, {1, 0, 0, 1, 0, 1, 1, 0, 1, 1});
    const Matrix labels = mat(5, 1, {0, 1, 1, 0, 1});
    QTest::newRow("binary_accuracy") << "binary_accuracy"
                                     << "binary_crossentropy" << pred << truth;
    QTest::newRow("categorical_accuracy") << "categorical_accuracy"
                                          << "categorical_crossentropy" << pred << truth;
    QTest::newRow("sparse_categorical_accuracy")
        << "sparse_categorical_accuracy"
        << "sparse_categorical_crossentropy" << pred << labels;
    QTest::newRow("mse") << "mse"
                         << "mse" << pred << truth;
    QTest::newRow("mae") << "mae"
                         << "mse" << pred << truth;
    QTest::newRow("precision") << "precision"
                               << "binary_crossentropy" << pred << truth;
    QTest::newRow("recall") << "recall"
                            << "binary_crossentropy" << pred << truth;
    QTest::newRow("top_k_categorical_accuracy") << "top_k_categorical_accuracy"
                                                << "categorical_crossentropy" << pred << truth;
    QTest::newRow("sparse_top_k_categorical_accuracy")
        << "sparse_top_k_categorical_accuracy"
        << "sparse_categorical_crossentropy" << pred << labels;
    QTest::newRow("auc") << "auc"
                         << "binary_crossentropy" << pred << truth;
  }
  void halves_equal_whole() {
    QFETCH(QString, identifier);
    QFETCH(QString, loss);
    QFETCH(Matrix, y_pred);
    QFETCH(Matrix, y_true);
    const auto metric = metric_for(identifier, loss, static_cast<int>(y_pred.cols()));
    const int size = metric->state_size();
    const Index n = y_pred.rows();
    std::vector<double> whole(size, 0.0);
    metric->accumulate(y_pred, y_true, whole.data());
    QVERIFY(metric->result(whole.data()) > 0.0);
    for (Index head = 1; head < n; ++head) {
      const Index tail = n - head;
      std::vector<double> a(size, 0.0), b(size, 0.0), both(size, 0.0);
      metric->accumulate(y_pred.topRows(head), y_true.topRows(head), a.data());
      metric->accumulate(y_pred.bottomRows(tail), y_true.bottomRows(tail), b.data());
      metric->accumulate(y_pred.topRows(head), y_true.topRows(head), both.data());
      metric->accumulate(y_pred.bottomRows(tail), y_true.bottomRows(tail), both.data());
      for (int i = 0; i < size; ++i) {
        QVERIFY(qFuzzyCompare(1.0 + a[i] + b[i], 1.0 + whole[i]));
        QVERIFY(qFuzzyCompare(1.0 + both[i], 1.0 + whole[i]));
      }
      for (int i = 0; i < size; ++i) a[i] += b[i];
      QVERIFY(qFuzzyCompare(metric->result(a.data()), metric->result(whole.data())));
    }
  }

  void empty_state_is_zero_data() {
    QTest::addColumn<QString>("identifier");
    for (const char* name : {"accuracy", "binary_accuracy", "categorical_accuracy", "mse", "mae",
                             "precision", "recall", "top_k_categorical_accuracy", "auc"})
      QTest::newRow(name) << name;
  }
  void empty_state_is_zero() {
    QFETCH(QString, identifier);
    const auto metric = metric_for(identifier, "binary_crossentropy", 2);
    std::vector<double> state(metric->state_size(), 0.0);
    QCOMPARE(metric->result(state.data()), 0.0);
    // A block of no rows leaves it empty.
    metric->accumulate(Matrix(0, 2), Matrix(0, 2), state.data());
    QCOMPARE(metric->result(state.data()), 0.0);
  }

  void bad_metrics_throw_data() {
    QTest::addColumn<QString>("identifier");
    QTest::addColumn<QString>("loss");
    QTest::addColumn<int>("units");
    QTest::newRow("unknown") << "accurracy"
                             << "binary_crossentropy" << 1;
    QTest::newRow("empty") << ""
                           << "binary_crossentropy" << 1;
    QTest::newRow("case matters outside accuracy") << "Mse"
                                                   << "mse" << 1;
    QTest::newRow("sparse accuracy on one-hot targets") << "sparse_categorical_accuracy"
                                                        << "categorical_crossentropy" << 3;
    QTest::newRow("precision on class indices") << "precision"
                                                << "sparse_categorical_crossentropy" << 3;
    QTest::newRow("recall on class indices") << "Recall"
                                             << "sparse_categorical_crossentropy" << 3;
    QTest::newRow("top-k on class indices") << "top_k_categorical_accuracy"
                                            << "sparse_categorical_crossentropy" << 3;
    QTest::newRow("sparse top-k on one-hot targets") << "sparse_top_k_categorical_accuracy"
                                                     << "categorical_crossentropy" << 3;
    QTest::newRow("auc on class indices") << "auc"
                                          << "sparse_categorical_crossentropy" << 3;
  }
  void bad_metrics_throw() {
    QFETCH(QString, identifier);
    QFETCH(QString, loss);
    QFETCH(int, units);
    try {
      make_metric(identifier.toStdString(), LossSpec{.name = loss.toStdString()}, units,
                  "compile.metrics[2]");
      QFAIL("no InputError");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromStdString(e.place()), QString("compile.metrics[2]"));
      QVERIFY(!e.message().empty());
    }
  }
};

QTEST_GUILESS_MAIN(TestMetrics)
#include "tst_metrics.moc"
