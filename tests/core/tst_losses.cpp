// Tests of the losses (core/losses): values against numpy references, gradients against central
// finite differences, the gradient's scale, probability clipping, splitting a batch into blocks
// (what data parallelism relies on), names, input errors, and that sum() and sum_and_gradient()
// never allocate.
#include <QTest>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/base/error.h"
#include "core/base/sanitized.h"
#include "core/losses/loss.h"

// Counts every malloc-family call of the process, so a test can show that a piece of code does not
// touch the heap (Eigen's temporaries allocate with malloc, not operator new). glibc only, and not
// under sanitizers, which interpose malloc themselves.
#if defined(__GLIBC__) && !defined(FITBENCH_SANITIZED)
#define FITBENCH_COUNT_MALLOC 1
namespace {
std::atomic<long> g_allocations{0};
}
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void __libc_free(void* ptr);

void* malloc(std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(size);
}
void* calloc(std::size_t count, std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_calloc(count, size);
}
void* realloc(void* ptr, std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_realloc(ptr, size);
}
void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_memalign(alignment, size);
}
int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  *out = __libc_memalign(alignment, size);
  return *out != nullptr || size == 0 ? 0 : ENOMEM;
}
void free(void* ptr) noexcept { __libc_free(ptr); }
}
#endif

using namespace fitbench;

namespace {

Matrix mat(Index rows, Index cols, std::initializer_list<float> values) {
  Q_ASSERT(static_cast<Index>(values.size()) == rows * cols);
  Matrix m(rows, cols);
  auto it = values.begin();
  for (Index r = 0; r < rows; ++r)
    for (Index c = 0; c < cols; ++c) m(r, c) = *it++;
  return m;
}

bool near(double actual, double expected, double rel, double abs = 0.0) {
  return std::abs(actual - expected) <= rel * std::abs(expected) + abs;
}

QByteArray describe(double actual, double expected) {
  return QByteArray("got ") + QByteArray::number(actual, 'g', 17) + ", expected " +
         QByteArray::number(expected, 'g', 17);
}

// The shared inputs of tests/core/loss_reference.py.
const Matrix kBinTrue = mat(4, 3, {1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0.3f, 1});
const Matrix kBinProb =
    mat(4, 3, {0.9f, 0.2f, 0.65f, 0.3f, 0.8f, 0.45f, 0.55f, 0.1f, 0.7f, 0.15f, 0.6f, 0.35f});
const Matrix kBinLogit =
    mat(4, 3, {2.1f, -1.3f, 0.4f, -0.7f, 1.6f, -0.2f, 0.3f, -2.5f, 1.1f, -1.8f, 0.5f, -0.6f});
const Matrix kCatTrue = mat(4, 3, {1, 0, 0, 0, 1, 0, 0, 0, 1, 0.2f, 0.7f, 0.1f});
const Matrix kCatProb =
    mat(4, 3, {0.7f, 0.2f, 0.3f, 0.1f, 0.5f, 0.2f, 0.25f, 0.25f, 0.4f, 0.6f, 0.3f, 0.05f});
const Matrix kCatLogit =
    mat(4, 3, {1.5f, -0.3f, 0.2f, -1.1f, 0.8f, 0.4f, 0.0f, 0.6f, -0.9f, 2.2f, 1.0f, -1.4f});
const Matrix kSparseTrue = mat(4, 1, {0, 1, 2, 1});
const Matrix kRegTrue =
    mat(4, 3, {0.2f, 0.4f, 0.1f, 1.0f, -0.5f, 0.6f, 0.3f, 1.1f, -1.0f, 0.35f, -0.2f, 0.9f});
const Matrix kRegPred =
    mat(4, 3, {0.5f, -1.2f, 2.0f, 1.5f, 0.3f, -0.7f, -2.2f, 0.9f, 0.05f, 0.8f, 1.7f, -0.6f});

struct Case {
  const char* label;
  LossSpec spec;
  Matrix y_pred;
  Matrix y_true;
  std::vector<double> per_sample;  // from tests/core/loss_reference.py
  double sum;
};

// Expected values: output of `/usr/bin/python3 tests/core/loss_reference.py` (numpy, float64,
// Keras 3's formulas, float32 inputs and clip bounds).
const std::vector<Case>& cases() {
  static const std::vector<Case> all = [] {
    std::vector<Case> v;
    const auto add = [&v](const char* label, LossSpec spec, const Matrix& p, const Matrix& t,
                          std::vector<double> per_sample, double sum) {
      v.push_back(Case{label, std::move(spec), p, t, std::move(per_sample), sum});
    };
    add("binary_crossentropy", {.name = "binary_crossentropy"}, kBinProb, kBinTrue,
        {0.25309568332017207, 0.39255182548762807, 1.368131607254532, 0.6689974341497233},
        2.6827765502120555);
    add("binary_crossentropy from_logits", {.name = "binary_crossentropy", .from_logits = true},
        kBinLogit, kBinTrue,
        {0.2898477492123866, 0.3950752192547686, 1.5068601055636872, 0.6715141871297446},
        2.863297261160587);
    add("categorical_crossentropy", {.name = "categorical_crossentropy"}, kCatProb, kCatTrue,
        {0.5389965202461124, 0.470003634833671, 0.8109302079379059, 1.193226013941668},
        3.0131563769593575);
    add("categorical_crossentropy from_logits",
        {.name = "categorical_crossentropy", .from_logits = true}, kCatLogit, kCatTrue,
        {0.3631355055631593, 0.5987753211479445, 2.0720759978947547, 1.4840639992373696},
        4.518050823843229);
    add("sparse_categorical_crossentropy", {.name = "sparse_categorical_crossentropy"}, kCatProb,
        kSparseTrue, {0.5389965202461124, 0.470003634833671, 0.8109302079379059, 1.152679508631266},
        2.9726098716489555);
    add("sparse_categorical_crossentropy from_logits",
        {.name = "sparse_categorical_crossentropy", .from_logits = true}, kCatLogit, kSparseTrue,
        {0.3631355055631593, 0.5987753211479445, 2.0720759978947547, 1.4840640222154375},
        4.518050846821296);
    add("mean_squared_error", {.name = "mean_squared_error"}, kRegPred, kRegTrue,
        {2.0866667214035997, 0.8600000166893006, 2.4641667728871126, 2.0208334028720865},
        7.431666913852099);
    add("mean_absolute_error", {.name = "mean_absolute_error"}, kRegPred, kRegTrue,
        {1.266666683057944, 0.8666666746139526, 1.2500000360111396, 1.2833333561817806},
        4.6666667498648176);
    add("huber delta=1", {.name = "huber", .delta = 1.0}, kRegPred, kRegTrue,
        {0.8483333504199981, 0.4150000071525574, 0.856666689962149, 0.8337500195701918},
        2.9537500671048966);
    add("huber delta=0.7", {.name = "huber", .delta = 0.7}, kRegPred, kRegTrue,
        {0.6683333368599412, 0.3683333361148833, 0.6716666753838462, 0.6637500065565107},
        2.3720833549151816);
    return v;
  }();
  return all;
}

void add_case_rows() {
  QTest::addColumn<int>("index");
  for (size_t i = 0; i < cases().size(); ++i)
    QTest::newRow(cases()[i].label) << static_cast<int>(i);
}

// -log(float32(1e-7)) and -log(float32(1 - 1e-7)), from tests/core/loss_reference.py.
constexpr double kLogLow = 16.118095639272223;
constexpr double kLogHigh = 1.1920929665620916e-07;

}  // namespace

class TestLosses : public QObject {
  Q_OBJECT

 private slots:
  void values_data() { add_case_rows(); }
  void values() {
    QFETCH(int, index);
    const Case& c = cases()[index];
    const auto loss = make_loss(c.spec);
    const double total = loss->sum(c.y_pred, c.y_true);
    QVERIFY2(near(total, c.sum, 1e-10), describe(total, c.sum));
    for (Index r = 0; r < c.y_pred.rows(); ++r) {
      const double v = loss->sum(c.y_pred.middleRows(r, 1), c.y_true.middleRows(r, 1));
      QVERIFY2(near(v, c.per_sample[r], 1e-10), describe(v, c.per_sample[r]));
    }
    Matrix grad(c.y_pred.rows(), c.y_pred.cols());
    const double with_grad = loss->sum_and_gradient(c.y_pred, c.y_true, 1.0f, grad);
    QVERIFY2(near(with_grad, total, 1e-12), describe(with_grad, total));
  }

  // Central differences of sum() in float inputs (step 1e-3) against the analytic gradient, for
  // every element; the inputs stay away from clipping bounds and kinks.
  void gradient_matches_finite_differences_data() { add_case_rows(); }
  void gradient_matches_finite_differences() {
    QFETCH(int, index);
    const Case& c = cases()[index];
    const auto loss = make_loss(c.spec);
    Matrix grad(c.y_pred.rows(), c.y_pred.cols());
    loss->sum_and_gradient(c.y_pred, c.y_true, 1.0f, grad);
    int checked = 0;
    for (Index r = 0; r < c.y_pred.rows(); ++r) {
      for (Index k = 0; k < c.y_pred.cols(); ++k) {
        Matrix plus = c.y_pred;
        Matrix minus = c.y_pred;
        plus(r, k) += 1e-3f;
        minus(r, k) -= 1e-3f;
        const double step = static_cast<double>(plus(r, k)) - static_cast<double>(minus(r, k));
        const double fd = (loss->sum(plus, c.y_true) - loss->sum(minus, c.y_true)) / step;
        const double g = grad(r, k);
        QVERIFY2(near(g, fd, 1e-2, 1e-5), QByteArray("element (") + QByteArray::number(r) + ", " +
                                              QByteArray::number(k) + "): " + describe(g, fd));
        QVERIFY(g != 0.0f);
        ++checked;
      }
    }
    QCOMPARE(checked, 12);
  }

  // grad is scale * d(sum)/d(y_pred): scale 1/16 (a global batch of 16) and 3 against scale 1.
  void gradient_scale_data() { add_case_rows(); }
  void gradient_scale() {
    QFETCH(int, index);
    const Case& c = cases()[index];
    const auto loss = make_loss(c.spec);
    Matrix unit(c.y_pred.rows(), c.y_pred.cols());
    loss->sum_and_gradient(c.y_pred, c.y_true, 1.0f, unit);
    for (float scale : {1.0f / 16.0f, 3.0f}) {
      Matrix scaled(c.y_pred.rows(), c.y_pred.cols());
      const double value = loss->sum_and_gradient(c.y_pred, c.y_true, scale, scaled);
      QVERIFY2(near(value, c.sum, 1e-10), describe(value, c.sum));
      for (Index i = 0; i < unit.size(); ++i) {
        const double expected = static_cast<double>(scale) * unit.data()[i];
        QVERIFY2(near(scaled.data()[i], expected, 1e-6), describe(scaled.data()[i], expected));
      }
    }
  }

  // Two blocks of rows give the whole batch's sum (to rounding) and exactly its gradient rows,
  // each block's gradient written in place into a block of the whole gradient buffer.
  void split_batch_matches_whole_data() { add_case_rows(); }
  void split_batch_matches_whole() {
    QFETCH(int, index);
    const Case& c = cases()[index];
    const auto loss = make_loss(c.spec);
    const Index n = c.y_pred.rows();
    const float scale = 1.0f / static_cast<float>(n);
    Matrix whole(n, c.y_pred.cols());
    const double total = loss->sum_and_gradient(c.y_pred, c.y_true, scale, whole);
    for (Index head = 1; head < n; ++head) {
      const Index tail = n - head;
      Matrix parts = Matrix::Constant(n, c.y_pred.cols(), -99.0f);
      const double a = loss->sum_and_gradient(c.y_pred.topRows(head), c.y_true.topRows(head), scale,
                                              parts.topRows(head));
      const double b = loss->sum_and_gradient(c.y_pred.bottomRows(tail), c.y_true.bottomRows(tail),
                                              scale, parts.bottomRows(tail));
      QVERIFY2(near(a + b, total, 1e-12), describe(a + b, total));
      const double sa = loss->sum(c.y_pred.topRows(head), c.y_true.topRows(head));
      const double sb = loss->sum(c.y_pred.bottomRows(tail), c.y_true.bottomRows(tail));
      QVERIFY2(near(sa + sb, total, 1e-12), describe(sa + sb, total));
      for (Index i = 0; i < whole.size(); ++i) QCOMPARE(parts.data()[i], whole.data()[i]);
    }
  }

  // Probabilities 0 and 1 are clipped to [1e-7, 1 - 1e-7] (float32 bounds) and have a zero
  // derivative; exactly on a bound, JAX's max/min split the derivative in half.
  void binary_crossentropy_clipping() {
    const auto loss = make_loss({.name = "binary_crossentropy"});
    const Matrix p = mat(1, 4, {0, 1, 1, 0});
    const Matrix t = mat(1, 4, {1, 0, 1, 0});
    Matrix grad(1, 4);
    const double v = loss->sum_and_gradient(p, t, 1.0f, grad);
    // loss_reference.py "bce clip": mean of -log(lo), -log(1 - hi), -log(hi), -log(1 - lo).
    QVERIFY2(near(v, 8.015120252840068, 1e-10), describe(v, 8.015120252840068));
    for (Index k = 0; k < 4; ++k) QCOMPARE(grad(0, k), 0.0f);

    // p = 1e-7f exactly, t = 1: d/dp(-log p) = -1 / p, halved on the bound.
    const Matrix on_bound = mat(1, 1, {1e-7f});
    const Matrix one = mat(1, 1, {1});
    Matrix g(1, 1);
    loss->sum_and_gradient(on_bound, one, 1.0f, g);
    const double expected_half = -0.5 / static_cast<double>(1e-7f);
    QVERIFY2(near(g(0, 0), expected_half, 1e-6), describe(g(0, 0), expected_half));
    // Just inside the bound the full derivative applies.
    const Matrix inside = mat(1, 1, {2e-7f});
    loss->sum_and_gradient(inside, one, 1.0f, g);
    const double expected_full = -1.0 / static_cast<double>(2e-7f);
    QVERIFY2(near(g(0, 0), expected_full, 1e-6), describe(g(0, 0), expected_full));
  }

  void categorical_crossentropy_clipping_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("categorical") << "categorical_crossentropy";
    QTest::newRow("sparse") << "sparse_categorical_crossentropy";
  }
  void categorical_crossentropy_clipping() {
    QFETCH(QString, name);
    const bool sparse = name.startsWith("sparse");
    const auto loss = make_loss({.name = name.toStdString()});
    const Matrix p = mat(1, 3, {1, 0, 0});
    Matrix grad(1, 3);
    // The true class has probability 0: clipped to 1e-7, zero gradient everywhere.
    const Matrix wrong = sparse ? mat(1, 1, {1}) : mat(1, 3, {0, 1, 0});
    double v = loss->sum_and_gradient(p, wrong, 1.0f, grad);
    QVERIFY2(near(v, kLogLow, 1e-10), describe(v, kLogLow));
    for (Index k = 0; k < 3; ++k) QCOMPARE(grad(0, k), 0.0f);
    // The true class has probability 1: clipped to 1 - 1e-7, zero gradient everywhere.
    const Matrix right = sparse ? mat(1, 1, {0}) : mat(1, 3, {1, 0, 0});
    v = loss->sum_and_gradient(p, right, 1.0f, grad);
    QVERIFY2(near(v, kLogHigh, 1e-6), describe(v, kLogHigh));
    for (Index k = 0; k < 3; ++k) QCOMPARE(grad(0, k), 0.0f);
  }

  // Outputs that do not sum to 1 are normalised before the log: scaling a row changes nothing,
  // and the gradient is orthogonal to the row (d/dc of loss(c * p) = 0).
  void categorical_crossentropy_normalises() {
    const auto loss = make_loss({.name = "categorical_crossentropy"});
    const Matrix p = mat(1, 3, {0.7f, 0.2f, 0.3f});
    const Matrix p3 = mat(1, 3, {2.1f, 0.6f, 0.9f});
    const Matrix t = mat(1, 3, {1, 0, 0});
    QVERIFY(near(loss->sum(p3, t), loss->sum(p, t), 1e-6));
    QVERIFY(near(loss->sum(p, t), -std::log(0.7 / 1.2), 1e-6));
    Matrix grad(1, 3);
    loss->sum_and_gradient(p, t, 1.0f, grad);
    const double radial = grad.row(0).cast<double>().dot(p.row(0).cast<double>());
    QVERIFY2(std::abs(radial) < 1e-6, QByteArray::number(radial));
  }

  // Logits far from zero give finite values and gradients (stable forms).
  void logits_are_stable() {
    const auto bce = make_loss({.name = "binary_crossentropy", .from_logits = true});
    Matrix g2(1, 2);
    const double b = bce->sum_and_gradient(mat(1, 2, {100, -100}), mat(1, 2, {0, 1}), 1.0f, g2);
    QVERIFY2(near(b, 100.0, 1e-12), describe(b, 100.0));  // softplus(100) = 100 + 4e-44
    QCOMPARE(g2(0, 0), 0.5f);                             // (sigmoid(100) - 0) / 2 units
    QCOMPARE(g2(0, 1), -0.5f);                            // (sigmoid(-100) - 1) / 2 units
    for (const char* name : {"categorical_crossentropy", "sparse_categorical_crossentropy"}) {
      const bool sparse = std::string(name).starts_with("sparse");
      const auto loss = make_loss({.name = name, .from_logits = true});
      Matrix g3(1, 3);
      const Matrix t = sparse ? mat(1, 1, {1}) : mat(1, 3, {0, 1, 0});
      const double v = loss->sum_and_gradient(mat(1, 3, {1000, 0, -1000}), t, 1.0f, g3);
      QVERIFY2(near(v, 1000.0, 1e-12), describe(v, 1000.0));  // lse = 1000, z_true = 0
      QCOMPARE(g3(0, 0), 1.0f);                               // softmax - one_hot
      QCOMPARE(g3(0, 1), -1.0f);
      QCOMPARE(g3(0, 2), 0.0f);
    }
  }

  // At zero error JAX differentiates abs(x) as +1, so the MAE of |y_true - y_pred| has slope -1;
  // Huber's quadratic branch and MSE have slope 0.
  void zero_error_derivatives() {
    const Matrix p = mat(1, 2, {0.25f, -1.5f});
    Matrix grad(1, 2);
    const auto mae = make_loss({.name = "mean_absolute_error"});
    QCOMPARE(mae->sum_and_gradient(p, p, 1.0f, grad), 0.0);
    QCOMPARE(grad(0, 0), -0.5f);
    QCOMPARE(grad(0, 1), -0.5f);
    for (const char* name : {"huber", "mean_squared_error"}) {
      const auto loss = make_loss({.name = name});
      QCOMPARE(loss->sum_and_gradient(p, p, 1.0f, grad), 0.0);
      QCOMPARE(grad(0, 0), 0.0f);
      QCOMPARE(grad(0, 1), 0.0f);
    }
  }

  void sparse_label_out_of_range_data() {
    QTest::addColumn<float>("label");
    QTest::addColumn<bool>("with_gradient");
    QTest::newRow("3 of 3 classes") << 3.0f << false;
    QTest::newRow("-1") << -1.0f << false;
    QTest::newRow("NaN") << std::nanf("") << false;
    QTest::newRow("7, with gradient") << 7.0f << true;
  }
  void sparse_label_out_of_range() {
    QFETCH(float, label);
    QFETCH(bool, with_gradient);
    for (bool logits : {false, true}) {
      const auto loss =
          make_loss({.name = "sparse_categorical_crossentropy", .from_logits = logits});
      const Matrix t = mat(3, 1, {0, 2, label});
      Matrix grad(3, 3);
      try {
        if (with_gradient)
          loss->sum_and_gradient(kCatProb.topRows(3), t, 1.0f, grad);
        else
          loss->sum(kCatProb.topRows(3), t);
        QFAIL("no InputError");
      } catch (const InputError& e) {
        QCOMPARE(QString::fromStdString(e.place()), QString("data"));
        QVERIFY2(e.message().find("row 2") != std::string::npos, e.what());
      }
    }
    // A fractional in-range label is truncated, as Keras's int32 cast does: 1.7 -> class 1.
    const auto loss = make_loss({.name = "sparse_categorical_crossentropy"});
    QCOMPARE(loss->sum(kCatProb.middleRows(1, 1), mat(1, 1, {1.7f})), cases()[4].per_sample[1]);
  }

  void names_and_aliases_data() {
    QTest::addColumn<QString>("identifier");
    QTest::addColumn<QString>("name");
    const char* table[][2] = {
        {"binary_crossentropy", "binary_crossentropy"},
        {"BinaryCrossentropy", "binary_crossentropy"},
        {"bce", "binary_crossentropy"},
        {"BCE", "binary_crossentropy"},
        {"categorical_crossentropy", "categorical_crossentropy"},
        {"CategoricalCrossentropy", "categorical_crossentropy"},
        {"cce", "categorical_crossentropy"},
        {"sparse_categorical_crossentropy", "sparse_categorical_crossentropy"},
        {"SparseCategoricalCrossentropy", "sparse_categorical_crossentropy"},
        {"mean_squared_error", "mean_squared_error"},
        {"MeanSquaredError", "mean_squared_error"},
        {"mse", "mean_squared_error"},
        {"MSE", "mean_squared_error"},
        {"mean_absolute_error", "mean_absolute_error"},
        {"MeanAbsoluteError", "mean_absolute_error"},
        {"mae", "mean_absolute_error"},
        {"MAE", "mean_absolute_error"},
        {"huber", "huber"},
        {"Huber", "huber"},
    };
    for (const auto& row : table) QTest::newRow(row[0]) << row[0] << row[1];
  }
  void names_and_aliases() {
    QFETCH(QString, identifier);
    QFETCH(QString, name);
    const auto loss = make_loss({.name = identifier.toStdString()});
    QCOMPARE(QString::fromStdString(loss->name()), name);
    // The alias computes the same loss as the canonical name.
    for (const Case& c : cases()) {
      if (c.spec.name == name.toStdString() && !c.spec.from_logits && c.spec.delta == 1.0) {
        QVERIFY(near(loss->sum(c.y_pred, c.y_true), c.sum, 1e-10));
      }
    }
  }

  void bad_specs_throw_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("from_logits");
    QTest::addColumn<double>("delta");
    QTest::newRow("unknown") << "mean_squared_errors" << false << 1.0;
    QTest::newRow("case matters") << "Mse" << false << 1.0;
    QTest::newRow("empty") << "" << false << 1.0;
    QTest::newRow("mse from_logits") << "mse" << true << 1.0;
    QTest::newRow("huber from_logits") << "huber" << true << 1.0;
    QTest::newRow("huber delta 0") << "huber" << false << 0.0;
    QTest::newRow("huber delta -1") << "Huber" << false << -1.0;
    QTest::newRow("huber delta NaN") << "huber" << false << std::nan("");
  }
  void bad_specs_throw() {
    QFETCH(QString, name);
    QFETCH(bool, from_logits);
    QFETCH(double, delta);
    try {
      make_loss({.name = name.toStdString(), .from_logits = from_logits, .delta = delta});
      QFAIL("no InputError");
    } catch (const InputError& e) {
      QCOMPARE(QString::fromStdString(e.place()), QString("compile.loss"));
      QVERIFY(!e.message().empty());
    }
  }

  void no_allocation() {
#ifndef FITBENCH_COUNT_MALLOC
    QSKIP("malloc counting needs glibc and no sanitizer");
#else
    {  // The counter sees Eigen's heap allocations.
      const long before = g_allocations.load();
      Matrix m(64, 64);
      m.setZero();
      QVERIFY(g_allocations.load() > before);
    }
    std::vector<std::unique_ptr<Loss> > losses;
    std::vector<Matrix> grads;
    for (const Case& c : cases()) {
      losses.push_back(make_loss(c.spec));
      grads.emplace_back(c.y_pred.rows(), c.y_pred.cols());
    }
    double sink = 0.0;
    const long before = g_allocations.load();
    for (size_t i = 0; i < cases().size(); ++i) {
      const Case& c = cases()[i];
      sink += losses[i]->sum(c.y_pred, c.y_true);
      sink += losses[i]->sum_and_gradient(c.y_pred, c.y_true, 0.25f, grads[i]);
      sink += losses[i]->sum_and_gradient(c.y_pred.bottomRows(2), c.y_true.bottomRows(2), 0.25f,
                                          grads[i].bottomRows(2));
    }
    const long after = g_allocations.load();
    QVERIFY(std::isfinite(sink));
    QCOMPARE(after - before, 0L);
#endif
  }
};

QTEST_GUILESS_MAIN(TestLosses)
#include "tst_losses.moc"
