// Tests of the data set generators, Standardizer and split_validation (core/data/dataset.h).
#include <QTest>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "tests/core/input_error.h"

using namespace fitbench;

namespace {

DataSpec spec_of(const QString& generator, int64_t samples, double noise = 0.0, uint64_t seed = 7) {
  DataSpec s;
  s.generator = generator.toStdString();
  s.samples = samples;
  s.noise = noise;
  s.seed = seed;
  return s;
}

using test::error_of;

int64_t count_label(const Matrix& y, float label) {
  int64_t count = 0;
  for (Index i = 0; i < y.size(); ++i) count += y.data()[i] == label ? 1 : 0;
  return count;
}

// Statistics in double with plain loops (GCC 12 warns falsely inside Eigen's AVX-512 reductions).
double mean_of(const std::vector<double>& v) {
  double sum = 0.0;
  for (double x : v) sum += x;
  return sum / double(v.size());
}

// Population standard deviation.
double stddev_of(const std::vector<double>& v) {
  const double mean = mean_of(v);
  double squares = 0.0;
  for (double x : v) squares += (x - mean) * (x - mean);
  return std::sqrt(squares / double(v.size()));
}

std::vector<double> column(const Matrix& m, Index j) {
  std::vector<double> v;
  for (Index i = 0; i < m.rows(); ++i) v.push_back(m(i, j));
  return v;
}

bool all_finite(const Matrix& m) {
  for (Index i = 0; i < m.size(); ++i) {
    if (!std::isfinite(m.data()[i])) return false;
  }
  return true;
}

double max_abs_diff(const Matrix& a, const Matrix& b) {
  double worst = 0.0;
  for (Index i = 0; i < a.size(); ++i) {
    worst = std::max(worst, std::abs(double(a.data()[i]) - double(b.data()[i])));
  }
  return worst;
}

const QStringList kGenerators = {"seed",   "seed_legacy", "circle", "xor",   "gaussian",
                                 "spiral", "moons",       "blobs",  "plane", "sine"};

}  // namespace

class TestData : public QObject {
  Q_OBJECT

 private slots:
  void shapes_and_names_data();
  void shapes_and_names();
  void labels_data();
  void labels();
  void deterministic_data();
  void deterministic();
  void class_balance_data();
  void class_balance();
  void seed_label_rule_data();
  void seed_label_rule();
  void seed_matches_numpy();
  void seed_legacy_matches_numpy();
  void circle_geometry();
  void circle_noise_moves_labels_only();
  void xor_sign_rule();
  void playground_noise_rules();
  void spiral_noise();
  void gaussian_moments();
  void spiral_on_arms();
  void plane_target_rule();
  void sine_target_rule();
  void moons_on_half_circles();
  void blobs_clusters();
  void invalid_parameters_data();
  void invalid_parameters();
  void standardizer_golden();
  void standardizer_random();
  void split_validation_sizes_data();
  void split_validation_sizes();
  void split_validation_errors_data();
  void split_validation_errors();
};

void TestData::shapes_and_names_data() {
  QTest::addColumn<QString>("generator");
  QTest::addColumn<int>("features");
  QTest::addColumn<QString>("target");
  // spec.features is 4 in every row: only "seed", "seed_legacy" and "blobs" use it.
  QTest::newRow("seed") << "seed" << 4 << "y";
  QTest::newRow("seed_legacy") << "seed_legacy" << 4 << "y";
  QTest::newRow("circle") << "circle" << 2 << "y";
  QTest::newRow("xor") << "xor" << 2 << "y";
  QTest::newRow("gaussian") << "gaussian" << 2 << "y";
  QTest::newRow("spiral") << "spiral" << 2 << "y";
  QTest::newRow("moons") << "moons" << 2 << "y";
  QTest::newRow("blobs") << "blobs" << 4 << "class";
  QTest::newRow("plane") << "plane" << 2 << "y";
  QTest::newRow("sine") << "sine" << 1 << "y";
}

void TestData::shapes_and_names() {
  QFETCH(QString, generator);
  QFETCH(int, features);
  QFETCH(QString, target);
  DataSpec s = spec_of(generator, 37, 0.1);
  s.features = 4;
  const Dataset d = generate_dataset(s);
  QCOMPARE(d.size(), Index(37));
  QCOMPARE(d.x.rows(), Index(37));
  QCOMPARE(d.x.cols(), Index(features));
  QCOMPARE(d.y.rows(), Index(37));
  QCOMPARE(d.y.cols(), Index(1));
  QCOMPARE(d.feature_names.size(), size_t(features));
  for (int j = 0; j < features; ++j) {
    QCOMPARE(QString::fromStdString(d.feature_names[j]), QString("x%1").arg(j));
  }
  QCOMPARE(d.target_names, std::vector<std::string>{target.toStdString()});
  QVERIFY(all_finite(d.x));
  QVERIFY(all_finite(d.y));
}

void TestData::labels_data() {
  QTest::addColumn<QString>("generator");
  QTest::addColumn<double>("noise");
  QTest::addColumn<int>("classes");  // 0: regression
  QTest::newRow("seed") << "seed" << 0.0 << 2;
  QTest::newRow("seed_legacy") << "seed_legacy" << 0.0 << 2;
  QTest::newRow("circle") << "circle" << 0.3 << 2;
  QTest::newRow("xor") << "xor" << 0.3 << 2;
  QTest::newRow("gaussian") << "gaussian" << 0.3 << 2;
  QTest::newRow("spiral") << "spiral" << 0.3 << 2;
  QTest::newRow("moons") << "moons" << 0.3 << 2;
  QTest::newRow("blobs") << "blobs" << 0.3 << 3;
  QTest::newRow("plane") << "plane" << 0.3 << 0;
  QTest::newRow("sine") << "sine" << 0.3 << 0;
}

void TestData::labels() {
  QFETCH(QString, generator);
  QFETCH(double, noise);
  QFETCH(int, classes);
  const Dataset d = generate_dataset(spec_of(generator, 500, noise));
  std::set<float> seen(d.y.data(), d.y.data() + d.y.size());
  if (classes == 0) {
    QVERIFY(seen.size() > 400);  // real-valued targets
    return;
  }
  std::set<float> expected;
  for (int k = 0; k < classes; ++k) expected.insert(float(k));
  QCOMPARE(seen, expected);
}

void TestData::deterministic_data() {
  QTest::addColumn<QString>("generator");
  for (const QString& g : kGenerators) QTest::newRow(qPrintable(g)) << g;
}

void TestData::deterministic() {
  QFETCH(QString, generator);
  const Dataset a = generate_dataset(spec_of(generator, 200, 0.2, 11));
  const Dataset b = generate_dataset(spec_of(generator, 200, 0.2, 11));
  const Dataset c = generate_dataset(spec_of(generator, 200, 0.2, 12));
  QVERIFY(a.x == b.x);
  QVERIFY(a.y == b.y);
  QVERIFY(a.x != c.x);
}

void TestData::class_balance_data() {
  QTest::addColumn<QString>("generator");
  QTest::addColumn<double>("noise");
  QTest::addColumn<int>("samples");
  // The label-1 class gets the odd sample (as make_moons's inner moon).
  QTest::newRow("circle noise 0") << "circle" << 0.0 << 101;
  QTest::newRow("gaussian") << "gaussian" << 0.5 << 101;
  QTest::newRow("spiral") << "spiral" << 0.5 << 101;
  QTest::newRow("moons") << "moons" << 0.5 << 101;
  QTest::newRow("moons even") << "moons" << 0.0 << 64;
}

void TestData::class_balance() {
  QFETCH(QString, generator);
  QFETCH(double, noise);
  QFETCH(int, samples);
  const Dataset d = generate_dataset(spec_of(generator, samples, noise));
  QCOMPARE(count_label(d.y, 1.0f), int64_t(samples - samples / 2));
  QCOMPARE(count_label(d.y, 0.0f), int64_t(samples / 2));
  // Shuffled: the first half is not all one class.
  const Matrix first = d.y.topRows(samples / 2);
  QVERIFY(count_label(first, 1.0f) > 0 && count_label(first, 0.0f) > 0);
}

void TestData::seed_label_rule_data() {
  QTest::addColumn<QString>("generator");
  QTest::newRow("seed") << "seed";
  QTest::newRow("seed_legacy") << "seed_legacy";
}

void TestData::seed_label_rule() {
  QFETCH(QString, generator);
  DataSpec s = spec_of(generator, 20000);
  s.features = 3;
  const Dataset d = generate_dataset(s);
  for (Index i = 0; i < d.size(); ++i) QCOMPARE(d.y(i, 0), d.x(i, 0) > 0.0f ? 1.0f : 0.0f);
  for (Index j = 0; j < 3; ++j) {
    const std::vector<double> col = column(d.x, j);
    QVERIFY2(std::abs(mean_of(col)) < 0.03, qPrintable(QString::number(mean_of(col))));
    QVERIFY2(std::abs(stddev_of(col) - 1.0) < 0.03, qPrintable(QString::number(stddev_of(col))));
  }
}

void TestData::seed_matches_numpy() {
  // /usr/bin/python3: np.random.default_rng(7).normal(size=(3, 4)).astype(np.float32), the Keras
  // script's data (tests/core/tst_numpy_generator compares millions of draws).
  DataSpec s = spec_of("seed", 3);
  s.features = 4;
  const Dataset d = generate_dataset(s);
  const Matrix expected =
      (Matrix(3, 4) << 1.23015337e-03f, 2.98745543e-01f, -2.74137855e-01f, -8.90591860e-01f,
       -4.54670787e-01f, -9.91646528e-01f, 6.01436011e-02f, 1.34021521e+00f, -4.92206514e-01f,
       -6.20474875e-01f, 4.89842057e-01f, 3.56887013e-01f)
          .finished();
  QVERIFY2(d.x == expected, qPrintable(QString::number(max_abs_diff(d.x, expected))));
  QVERIFY(d.y == (Matrix(3, 1) << 1.0f, 0.0f, 0.0f).finished());
}

void TestData::seed_legacy_matches_numpy() {
  // /usr/bin/python3: np.random.seed(7); np.random.normal(size=(3, 4)).astype(np.float32)
  DataSpec s = spec_of("seed_legacy", 3);
  s.features = 4;
  const Dataset d = generate_dataset(s);
  const Matrix expected =
      (Matrix(3, 4) << 1.6905257e+00f, -4.6593738e-01f, 3.2820165e-02f, 4.0751627e-01f,
       -7.8892303e-01f, 2.0655729e-03f, -8.9038588e-04f, -1.7547243e+00f, 1.0176580e+00f,
       6.0049850e-01f, -6.2542897e-01f, -1.7154826e-01f)
          .finished();
  QVERIFY2(d.x == expected, qPrintable(QString::number(max_abs_diff(d.x, expected))));
  QVERIFY(d.y == (Matrix(3, 1) << 1.0f, 0.0f, 1.0f).finished());
}

void TestData::circle_geometry() {
  const Dataset d = generate_dataset(spec_of("circle", 2000));
  for (Index i = 0; i < d.size(); ++i) {
    const double r = std::hypot(double(d.x(i, 0)), double(d.x(i, 1)));
    if (d.y(i, 0) == 1.0f) {
      QVERIFY2(r < 2.5 + 1e-5, qPrintable(QString::number(r)));
    } else {
      QVERIFY2(r >= 3.5 - 1e-5 && r < 5.0 + 1e-5, qPrintable(QString::number(r)));
    }
  }
}

void TestData::circle_noise_moves_labels_only() {
  // As in the Playground, noise shifts the point a label is read at, not the point itself.
  const Dataset clean = generate_dataset(spec_of("circle", 1000, 0.0));
  const Dataset noisy = generate_dataset(spec_of("circle", 1000, 0.3));
  QVERIFY(clean.x == noisy.x);
  int64_t flipped = 0;
  for (Index i = 0; i < clean.size(); ++i) flipped += clean.y(i, 0) != noisy.y(i, 0) ? 1 : 0;
  QVERIFY2(flipped > 20, qPrintable(QString::number(flipped)));
}

void TestData::xor_sign_rule() {
  const Dataset d = generate_dataset(spec_of("xor", 2000));
  for (Index i = 0; i < d.size(); ++i) {
    QVERIFY(std::abs(d.x(i, 0)) >= 0.3f - 1e-6f && std::abs(d.x(i, 0)) <= 5.3f + 1e-5f);
    QVERIFY(std::abs(d.x(i, 1)) >= 0.3f - 1e-6f && std::abs(d.x(i, 1)) <= 5.3f + 1e-5f);
    QCOMPARE(d.y(i, 0), d.x(i, 0) * d.x(i, 1) > 0.0f ? 1.0f : 0.0f);
  }
}

void TestData::playground_noise_rules() {
  // Label rates under noise 0.3 from a Monte Carlo of the Playground's procedure in numpy
  // (4,000,000 draws): circle P(label 1) = 0.4198, P(label 1 | radius < 2.5) = 0.8153; xor
  // P(label == sign rule) = 0.9085. Plane noise 0.5: target - (x0 + x1) / 10 is
  // (u + v) * 0.5 * 6 / 10 with u, v uniform in [-1, 1], std sqrt(2) * 3 / sqrt(3) / 10 = 0.24495.
  const Dataset circle = generate_dataset(spec_of("circle", 20000, 0.3));
  double positives = 0.0;
  double inside = 0.0;
  double inside_positives = 0.0;
  for (Index i = 0; i < circle.size(); ++i) {
    const bool label = circle.y(i, 0) == 1.0f;
    positives += label;
    if (std::hypot(double(circle.x(i, 0)), double(circle.x(i, 1))) < 2.5) {
      inside += 1.0;
      inside_positives += label;
    }
  }
  QVERIFY2(std::abs(positives / 20000.0 - 0.4198) < 0.012, qPrintable(QString::number(positives)));
  QVERIFY2(std::abs(inside_positives / inside - 0.8153) < 0.015,
           qPrintable(QString::number(inside_positives / inside)));

  const Dataset xor_set = generate_dataset(spec_of("xor", 20000, 0.3));
  double agree = 0.0;
  for (Index i = 0; i < xor_set.size(); ++i) {
    agree += xor_set.y(i, 0) == (xor_set.x(i, 0) * xor_set.x(i, 1) > 0.0f ? 1.0f : 0.0f);
  }
  QVERIFY2(std::abs(agree / 20000.0 - 0.9085) < 0.008, qPrintable(QString::number(agree)));

  const Dataset plane = generate_dataset(spec_of("plane", 20000, 0.5));
  std::vector<double> residual;
  for (Index i = 0; i < plane.size(); ++i) {
    residual.push_back(plane.y(i, 0) - (double(plane.x(i, 0)) + double(plane.x(i, 1))) / 10.0);
    QVERIFY(std::abs(residual.back()) <= 0.6 + 1e-6);
  }
  QVERIFY2(std::abs(stddev_of(residual) - 0.24495) < 0.006,
           qPrintable(QString::number(stddev_of(residual))));
}

void TestData::spiral_noise() {
  // Spiral noise moves each coordinate by uniform [-1, 1] * noise (std noise / sqrt(3)); the same
  // seed draws the same arms and shuffle, so the difference to the clean set is the noise alone.
  const Dataset clean = generate_dataset(spec_of("spiral", 4000, 0.0));
  const Dataset noisy = generate_dataset(spec_of("spiral", 4000, 0.5));
  QVERIFY(clean.y == noisy.y);
  std::vector<double> diff;
  for (Index i = 0; i < clean.x.size(); ++i) {
    diff.push_back(double(noisy.x.data()[i]) - double(clean.x.data()[i]));
    QVERIFY(std::abs(diff.back()) <= 0.5 + 1e-5);
  }
  QVERIFY2(std::abs(stddev_of(diff) - 0.5 / std::sqrt(3.0)) < 0.01,
           qPrintable(QString::number(stddev_of(diff))));
}

void TestData::gaussian_moments() {
  // Variance 0.5 + 7 * noise: the Playground's map of noise [0, 0.5] to variance [0.5, 4].
  const double noise = 0.2;
  const double expected_std = std::sqrt(0.5 + 7.0 * noise);
  const Dataset d = generate_dataset(spec_of("gaussian", 20000, noise));
  for (float label : {0.0f, 1.0f}) {
    const double centre = label == 1.0f ? 2.0 : -2.0;
    for (Index j = 0; j < 2; ++j) {
      std::vector<double> v;
      for (Index i = 0; i < d.size(); ++i) {
        if (d.y(i, 0) == label) v.push_back(d.x(i, j));
      }
      QVERIFY2(std::abs(mean_of(v) - centre) < 0.05, qPrintable(QString::number(mean_of(v))));
      QVERIFY2(std::abs(stddev_of(v) - expected_std) < 0.05,
               qPrintable(QString::number(stddev_of(v))));
    }
  }
}

void TestData::spiral_on_arms() {
  // With noise 0 a point at radius r lies at angle 1.75 * 2 pi * r / 5 (+ pi for label 0).
  const Dataset d = generate_dataset(spec_of("spiral", 400));
  for (Index i = 0; i < d.size(); ++i) {
    const double x = d.x(i, 0);
    const double y = d.x(i, 1);
    const double r = std::hypot(x, y);
    QVERIFY(r < 5.0);
    const double t = 1.75 * 2.0 * M_PI * r / 5.0 + (d.y(i, 0) == 1.0f ? 0.0 : M_PI);
    QVERIFY2(std::abs(r * std::sin(t) - x) < 1e-4 && std::abs(r * std::cos(t) - y) < 1e-4,
             qPrintable(QString("row %1: (%2, %3)").arg(i).arg(x).arg(y)));
  }
}

void TestData::plane_target_rule() {
  const Dataset d = generate_dataset(spec_of("plane", 1000));
  for (Index i = 0; i < d.size(); ++i) {
    QVERIFY(std::abs(d.x(i, 0)) <= 6.0f && std::abs(d.x(i, 1)) <= 6.0f);
    const double expected = (double(d.x(i, 0)) + double(d.x(i, 1))) / 10.0;
    QVERIFY2(std::abs(d.y(i, 0) - expected) < 1e-6, qPrintable(QString::number(d.y(i, 0))));
  }
  // Noise moves the point the target is read at: targets change, inputs do not.
  const Dataset noisy = generate_dataset(spec_of("plane", 1000, 0.5));
  QVERIFY(noisy.x == d.x);
  QVERIFY(noisy.y != d.y);
}

void TestData::sine_target_rule() {
  const Dataset clean = generate_dataset(spec_of("sine", 5000));
  for (Index i = 0; i < clean.size(); ++i) {
    QVERIFY(clean.x(i, 0) >= -3.0f && clean.x(i, 0) <= 3.0f);
    QVERIFY(std::abs(clean.y(i, 0) - std::sin(double(clean.x(i, 0)))) < 1e-6);
  }
  const Dataset noisy = generate_dataset(spec_of("sine", 20000, 0.2));
  std::vector<double> residual;
  for (Index i = 0; i < noisy.size(); ++i) {
    residual.push_back(noisy.y(i, 0) - std::sin(double(noisy.x(i, 0))));
  }
  QVERIFY(std::abs(mean_of(residual)) < 0.01);
  QVERIFY2(std::abs(stddev_of(residual) - 0.2) < 0.01,
           qPrintable(QString::number(stddev_of(residual))));
}

void TestData::moons_on_half_circles() {
  const Dataset d = generate_dataset(spec_of("moons", 1001));
  for (Index i = 0; i < d.size(); ++i) {
    const double x = d.x(i, 0);
    const double y = d.x(i, 1);
    if (d.y(i, 0) == 0.0f) {  // upper unit half circle
      QVERIFY(std::abs(x * x + y * y - 1.0) < 1e-5 && y >= -1e-6);
    } else {  // lower half circle centred at (1, 0.5)
      QVERIFY(std::abs((x - 1) * (x - 1) + (y - 0.5) * (y - 0.5) - 1.0) < 1e-5 && y <= 0.5 + 1e-6);
    }
  }
  // The noise is N(0, noise) per coordinate, added after the same shuffle.
  const Dataset noisy = generate_dataset(spec_of("moons", 1001, 0.1));
  QVERIFY(noisy.y == d.y);
  std::vector<double> diff;
  for (Index i = 0; i < d.x.size(); ++i) diff.push_back(noisy.x.data()[i] - d.x.data()[i]);
  QVERIFY2(std::abs(stddev_of(diff) - 0.1) < 0.006, qPrintable(QString::number(stddev_of(diff))));
}

void TestData::blobs_clusters() {
  DataSpec s = spec_of("blobs", 6001, 0.5);
  s.classes = 3;
  s.features = 4;
  const Dataset d = generate_dataset(s);
  // As make_blobs: the first samples % classes clusters get one more sample.
  QCOMPARE(count_label(d.y, 0.0f), int64_t(2001));
  QCOMPARE(count_label(d.y, 1.0f), int64_t(2000));
  QCOMPARE(count_label(d.y, 2.0f), int64_t(2000));
  std::vector<std::vector<double>> means;
  for (int k = 0; k < 3; ++k) {
    std::vector<double> mean;
    std::vector<double> centred;
    for (Index j = 0; j < 4; ++j) {
      std::vector<double> v;
      for (Index i = 0; i < d.size(); ++i) {
        if (d.y(i, 0) == float(k)) v.push_back(d.x(i, j));
      }
      mean.push_back(mean_of(v));
      QVERIFY(std::abs(mean.back()) < 10.1);  // centres are uniform in [-10, 10]
      for (double x : v) centred.push_back(x - mean.back());
    }
    // Cluster std is 1.0 + noise.
    QVERIFY2(std::abs(stddev_of(centred) - 1.5) < 0.03,
             qPrintable(QString::number(stddev_of(centred))));
    means.push_back(mean);
  }
  QVERIFY(means[0] != means[1] && means[1] != means[2] && means[0] != means[2]);
}

void TestData::invalid_parameters_data() {
  QTest::addColumn<QString>("generator");
  QTest::addColumn<qint64>("samples");
  QTest::addColumn<double>("noise");
  QTest::addColumn<qint64>("features");
  QTest::addColumn<qint64>("classes");
  QTest::addColumn<QString>("place");
  QTest::addColumn<QString>("message");
  QTest::newRow("zero samples") << "seed" << qint64(0) << 0.0 << qint64(4) << qint64(3)
                                << "data.samples"
                                << "must be a positive integer, got 0";
  QTest::newRow("negative samples")
      << "circle" << qint64(-3) << 0.0 << qint64(4) << qint64(3) << "data.samples"
      << "must be a positive integer, got -3";
  QTest::newRow("too many samples")
      << "xor" << qint64(20000000) << 0.0 << qint64(4) << qint64(3) << "data.samples"
      << "must be at most 10000000, got 20000000";
  QTest::newRow("zero features") << "seed" << qint64(10) << 0.0 << qint64(0) << qint64(3)
                                 << "data.features"
                                 << "must be a positive integer, got 0";
  QTest::newRow("too many values")
      << "blobs" << qint64(1000) << 0.0 << qint64(1000000) << qint64(3) << "data.features"
      << "must be at most 100000 with 1000 samples, got 1000000";
  QTest::newRow("one class") << "blobs" << qint64(10) << 0.0 << qint64(2) << qint64(1)
                             << "data.classes"
                             << "must be an integer of at least 2, got 1";
  QTest::newRow("more classes than samples")
      << "blobs" << qint64(5) << 0.0 << qint64(2) << qint64(10) << "data.classes"
      << "must be at most data.samples (5), got 10";
  QTest::newRow("negative noise") << "moons" << qint64(10) << -0.1 << qint64(4) << qint64(3)
                                  << "data.noise"
                                  << "must be a non-negative number, got -0.1";
  QTest::newRow("nan noise") << "sine" << qint64(10) << std::nan("") << qint64(4) << qint64(3)
                             << "data.noise"
                             << "must be a non-negative number, got nan";
  QTest::newRow("playground percentage")
      << "spiral" << qint64(10) << 20.0 << qint64(4) << qint64(3) << "data.noise"
      << "must be at most 0.5 for the Playground's sets (its noise percentage / 100), got 20";
  QTest::newRow("unknown generator")
      << "circles" << qint64(10) << 0.0 << qint64(4) << qint64(3) << "data.generator"
      << "unknown generator \"circles\"; the known ones are: seed, seed_legacy, circle, xor, "
         "gaussian, spiral, moons, blobs, plane, sine";
}

void TestData::invalid_parameters() {
  QFETCH(QString, generator);
  QFETCH(qint64, samples);
  QFETCH(double, noise);
  QFETCH(qint64, features);
  QFETCH(qint64, classes);
  QFETCH(QString, place);
  QFETCH(QString, message);
  DataSpec s = spec_of(generator, samples, noise);
  s.features = features;
  s.classes = classes;
  const auto e = error_of([&] { generate_dataset(s); });
  QVERIFY(e.has_value());
  QCOMPARE(QString::fromStdString(e->place()), place);
  QCOMPARE(QString::fromStdString(e->message()), message);
}

void TestData::standardizer_golden() {
  // Expected values from numpy: m = x.mean(0); s = x.std(0) (ddof 0); (x - m) / s, with the
  // zero deviation of the constant column replaced by 1.
  Matrix x(4, 3);
  x << 1, 10, -3, 2, 10, 0.5, 3, 10, 7, 4, 10, 2;
  const Standardizer s = Standardizer::fit(x);
  QVERIFY(std::abs(s.mean(0) - 2.5f) < 1e-6f);
  QVERIFY(std::abs(s.mean(1) - 10.0f) < 1e-6f);
  QVERIFY(std::abs(s.mean(2) - 1.625f) < 1e-6f);
  QVERIFY(std::abs(s.stddev(0) - 1.11803399f) < 1e-6f);
  QCOMPARE(s.stddev(1), 1.0f);
  QVERIFY(std::abs(s.stddev(2) - 3.59470096f) < 1e-6f);
  s.apply(x);
  Matrix expected(4, 3);
  expected << -1.34164079, 0, -1.28661606, -0.4472136, 0, -0.31296066, 0.4472136, 0, 1.49525651,
      1.34164079, 0, 0.10432022;
  QVERIFY2(max_abs_diff(x, expected) < 1e-6,
           qPrintable(QString::number(max_abs_diff(x, expected))));
}

void TestData::standardizer_random() {
  DataSpec spec = spec_of("blobs", 3000, 2.0);
  spec.features = 5;
  Dataset d = generate_dataset(spec);
  d.x.col(2) = (d.x.col(2).array() * 300.0f + 1000.0f).matrix();  // large scale and offset
  const Standardizer s = Standardizer::fit(d.x);
  s.apply(d.x);
  for (Index j = 0; j < d.x.cols(); ++j) {
    const std::vector<double> col = column(d.x, j);
    QVERIFY2(std::abs(mean_of(col)) < 1e-5, qPrintable(QString::number(mean_of(col))));
    QVERIFY2(std::abs(stddev_of(col) - 1.0) < 1e-4, qPrintable(QString::number(stddev_of(col))));
  }
}

void TestData::split_validation_sizes_data() {
  QTest::addColumn<int>("samples");
  QTest::addColumn<double>("fraction");
  QTest::addColumn<int>("train");
  // train = math.floor(samples * (1.0 - fraction)) in Python (Keras's rule); 10 * (1 - 0.8) is
  // 1.9999999999999996 in double, so 1 row trains, not 2.
  QTest::newRow("none") << 10 << 0.0 << 10;
  QTest::newRow("10 0.2") << 10 << 0.2 << 8;
  QTest::newRow("10 0.3") << 10 << 0.3 << 7;
  QTest::newRow("7 0.25") << 7 << 0.25 << 5;
  QTest::newRow("100 0.07") << 100 << 0.07 << 93;
  QTest::newRow("128 0.1") << 128 << 0.1 << 115;
  QTest::newRow("50 0.58") << 50 << 0.58 << 21;
  QTest::newRow("10 0.8 rounds down") << 10 << 0.8 << 1;
}

void TestData::split_validation_sizes() {
  QFETCH(int, samples);
  QFETCH(double, fraction);
  QFETCH(int, train);
  Dataset d;
  d.x.resize(samples, 2);
  d.y.resize(samples, 1);
  for (int i = 0; i < samples; ++i) {
    d.x.row(i) << float(i), float(-i);
    d.y(i, 0) = float(i % 2);
  }
  d.feature_names = {"a", "b"};
  d.target_names = {"t"};
  const auto [training, validation] = split_validation(d, fraction);
  QCOMPARE(training.size(), Index(train));
  QCOMPARE(validation.size(), Index(samples - train));
  QCOMPARE(validation.x.cols(), Index(2));
  QCOMPARE(validation.y.cols(), Index(1));
  QVERIFY(training.x == d.x.topRows(train));
  QVERIFY(validation.x == d.x.bottomRows(samples - train));  // the last rows validate
  QVERIFY(validation.y == d.y.bottomRows(samples - train));
  QCOMPARE(validation.feature_names, d.feature_names);
  QCOMPARE(training.target_names, d.target_names);
}

void TestData::split_validation_errors_data() {
  QTest::addColumn<int>("samples");
  QTest::addColumn<double>("fraction");
  QTest::addColumn<QString>("message");
  QTest::newRow("one") << 10 << 1.0 << "must be in [0, 1), got 1";
  QTest::newRow("negative") << 10 << -0.1 << "must be in [0, 1), got -0.1";
  QTest::newRow("nan") << 10 << std::nan("") << "must be in [0, 1), got nan";
  QTest::newRow("no training rows")
      << 10 << 0.9
      << "0.9 leaves no training rows: Keras trains on the first floor(10 * (1 - 0.9)) = 0 of 10 "
         "samples; use a smaller fraction or more samples";
  QTest::newRow("no validation rows")
      << 5 << 1e-17
      << "1e-17 leaves no validation rows: Keras trains on the first floor(5 * (1 - 1e-17)) = 5 "
         "of 5 samples; use a larger fraction or more samples";
}

void TestData::split_validation_errors() {
  QFETCH(int, samples);
  QFETCH(double, fraction);
  QFETCH(QString, message);
  Dataset d;
  d.x = Matrix::Zero(samples, 2);
  d.y = Matrix::Zero(samples, 1);
  const auto e = error_of([&] { split_validation(d, fraction); });
  QVERIFY(e.has_value());
  QCOMPARE(QString::fromStdString(e->place()), QString("fit.validation_split"));
  QCOMPARE(QString::fromStdString(e->message()), message);
}

QTEST_GUILESS_MAIN(TestData)
#include "tst_data.moc"
