// Keras 3's learning-rate schedules (keras/src/optimizers/schedules/learning_rate_schedule.py) at
// chosen steps against values worked out by hand from their formulas, their validation, and the
// rule that update k (0-based) of an optimizer uses schedule(k).
#include <QTest>
#include <cmath>
#include <optional>
#include <vector>

#include "core/base/error.h"
#include "core/optimizers/optimizer.h"

using namespace fitbench;

Q_DECLARE_METATYPE(fitbench::ScheduleSpec)

namespace {

ScheduleSpec exponential(double initial, double decay_steps, double decay_rate, bool staircase) {
  ScheduleSpec s;
  s.class_name = "ExponentialDecay";
  s.initial_learning_rate = initial;
  s.decay_steps = decay_steps;
  s.decay_rate = decay_rate;
  s.staircase = staircase;
  return s;
}

ScheduleSpec cosine(double initial, double decay_steps, double alpha,
                    std::optional<double> warmup_target = std::nullopt, double warmup_steps = 0) {
  ScheduleSpec s;
  s.class_name = "CosineDecay";
  s.initial_learning_rate = initial;
  s.decay_steps = decay_steps;
  s.alpha = alpha;
  s.warmup_target = warmup_target;
  s.warmup_steps = warmup_steps;
  return s;
}

ScheduleSpec piecewise(std::vector<double> boundaries, std::vector<double> values) {
  ScheduleSpec s;
  s.class_name = "PiecewiseConstantDecay";
  s.boundaries = std::move(boundaries);
  s.values = std::move(values);
  return s;
}

}  // namespace

class TestSchedules : public QObject {
  Q_OBJECT

 private slots:
  void values_data();
  void values();
  void optimizer_update_k_uses_schedule_of_k_data();
  void optimizer_update_k_uses_schedule_of_k();
  void validation_data();
  void validation();
  void schedule_value_rejects_unknown_class();
};

void TestSchedules::values_data() {
  QTest::addColumn<ScheduleSpec>("schedule");
  QTest::addColumn<double>("step");
  QTest::addColumn<double>("expected");
  // 0.1 * 0.5^(step / 10); sqrt(0.5) = 0.70710678118654752.
  const ScheduleSpec e = exponential(0.1, 10.0, 0.5, false);
  QTest::newRow("exponential 0") << e << 0.0 << 0.1;
  QTest::newRow("exponential 5") << e << 5.0 << 0.070710678118654752;
  QTest::newRow("exponential 10") << e << 10.0 << 0.05;
  QTest::newRow("exponential 25") << e << 25.0 << 0.017677669529663688;  // 0.1 / 2^2.5
  // Staircase: 0.1 * 0.5^floor(step / 10).
  const ScheduleSpec st = exponential(0.1, 10.0, 0.5, true);
  QTest::newRow("staircase 5") << st << 5.0 << 0.1;
  QTest::newRow("staircase 9") << st << 9.0 << 0.1;
  QTest::newRow("staircase 10") << st << 10.0 << 0.05;
  QTest::newRow("staircase 25") << st << 25.0 << 0.025;
  // Growth when decay_rate > 1: 0.01 * 2^(3 / 2) = 0.028284271247461901.
  QTest::newRow("exponential growth")
      << exponential(0.01, 2.0, 2.0, false) << 3.0 << 0.028284271247461901;
  // Cosine, no warmup: 1 * 0.5 * (1 + cos(pi * min(step, 10) / 10)); cos(pi/5) = 0.80901699437.
  const ScheduleSpec c = cosine(1.0, 10.0, 0.0);
  QTest::newRow("cosine 0") << c << 0.0 << 1.0;
  QTest::newRow("cosine 2") << c << 2.0 << 0.90450849718747371;
  QTest::newRow("cosine 5") << c << 5.0 << 0.5;
  QTest::newRow("cosine 10") << c << 10.0 << 0.0;
  QTest::newRow("cosine 15 (held)") << c << 15.0 << 0.0;
  // alpha = 0.2: 0.8 * cosine + 0.2.
  const ScheduleSpec ca = cosine(1.0, 10.0, 0.2);
  QTest::newRow("cosine alpha 5") << ca << 5.0 << 0.6;
  QTest::newRow("cosine alpha 10") << ca << 10.0 << 0.2;
  QTest::newRow("cosine alpha 20") << ca << 20.0 << 0.2;
  // Warmup 0 -> 0.1 over 4 steps, then cosine from 0.1 over 10 steps.
  const ScheduleSpec w = cosine(0.0, 10.0, 0.0, 0.1, 4.0);
  QTest::newRow("warmup 0") << w << 0.0 << 0.0;
  QTest::newRow("warmup 1") << w << 1.0 << 0.025;
  QTest::newRow("warmup 3") << w << 3.0 << 0.075;
  QTest::newRow("warmup end 4") << w << 4.0 << 0.1;
  QTest::newRow("warmup decay 9") << w << 9.0 << 0.05;
  QTest::newRow("warmup decay 14") << w << 14.0 << 0.0;
  QTest::newRow("warmup held 100") << w << 100.0 << 0.0;
  // Warmup from 0.02: 0.02 + (0.1 - 0.02) * 1 / 4 = 0.04; decay alpha 0.5 at t = 5: 0.075.
  const ScheduleSpec w2 = cosine(0.02, 10.0, 0.5, 0.1, 4.0);
  QTest::newRow("warmup from 0.02, 1") << w2 << 1.0 << 0.04;
  QTest::newRow("warmup alpha 9") << w2 << 9.0 << 0.075;
  QTest::newRow("warmup alpha 14") << w2 << 14.0 << 0.05;
  // A warmup target with no warmup steps decays from the target.
  const ScheduleSpec w0 = cosine(0.3, 10.0, 0.0, 0.1, 0.0);
  QTest::newRow("target without warmup 0") << w0 << 0.0 << 0.1;
  QTest::newRow("target without warmup 5") << w0 << 5.0 << 0.05;
  // Piecewise: values[0] while step <= 100, values[1] while step <= 110, then values[2].
  const ScheduleSpec p = piecewise({100.0, 110.0}, {1.0, 0.5, 0.1});
  QTest::newRow("piecewise 0") << p << 0.0 << 1.0;
  QTest::newRow("piecewise 100") << p << 100.0 << 1.0;
  QTest::newRow("piecewise 101") << p << 101.0 << 0.5;
  QTest::newRow("piecewise 110") << p << 110.0 << 0.5;
  QTest::newRow("piecewise 111") << p << 111.0 << 0.1;
  QTest::newRow("piecewise 1e6") << p << 1e6 << 0.1;
  const ScheduleSpec p1 = piecewise({0.0}, {0.3, 0.2});
  QTest::newRow("one boundary at 0, step 0") << p1 << 0.0 << 0.3;
  QTest::newRow("one boundary at 0, step 1") << p1 << 1.0 << 0.2;
}

void TestSchedules::values() {
  QFETCH(ScheduleSpec, schedule);
  QFETCH(double, step);
  QFETCH(double, expected);
  const double actual = schedule_value(schedule, step);
  if (std::abs(actual - expected) > 1e-12 * std::max(1.0, std::abs(expected)))
    QFAIL(qPrintable(
        QString("got %1, expected %2").arg(actual, 0, 'g', 17).arg(expected, 0, 'g', 17)));
}

void TestSchedules::optimizer_update_k_uses_schedule_of_k_data() {
  QTest::addColumn<ScheduleSpec>("schedule");
  QTest::addColumn<QList<double>>("rates");  // schedule(k) for k = 0..6, by hand
  // 0.4 * 0.5^floor(k / 2).
  QTest::newRow("exponential staircase")
      << exponential(0.4, 2.0, 0.5, true) << QList<double>{0.4, 0.4, 0.2, 0.2, 0.1, 0.1, 0.05};
  // Warmup 0 -> 0.2 over 2 steps, then 0.2 * (0.75 * 0.5 * (1 + cos(pi * t / 4)) + 0.25).
  QTest::newRow("cosine warmup") << cosine(0.0, 4.0, 0.25, 0.2, 2.0)
                                 << QList<double>{0.0,   0.1,
                                                  0.2,   0.17803300858899107,
                                                  0.125, 0.071966991411008936,
                                                  0.05};
  QTest::newRow("piecewise") << piecewise({1.0, 3.0}, {0.1, 0.05, 0.01})
                             << QList<double>{0.1, 0.1, 0.05, 0.05, 0.01, 0.01, 0.01};
}

// SGD on one weight with gradient 1: update k moves the weight by schedule(k), and learning_rate()
// reports schedule(iterations()) before each update.
void TestSchedules::optimizer_update_k_uses_schedule_of_k() {
  QFETCH(ScheduleSpec, schedule);
  QFETCH(QList<double>, rates);
  OptimizerSpec spec;
  spec.class_name = "SGD";
  spec.learning_rate = 123.0;  // ignored when a schedule is set
  spec.schedule = schedule;
  auto optimizer = make_optimizer(spec, "compile.optimizer");
  QVERIFY(optimizer->has_schedule());
  Matrix w = Matrix::Constant(1, 1, 4.0f), g(1, 1);
  std::vector<Matrix*> vars = {&w}, grads = {&g};
  optimizer->build(vars);
  for (int k = 0; k < rates.size(); ++k) {
    QVERIFY(std::abs(optimizer->learning_rate() - rates[k]) <= 1e-12);
    const float expected = w(0, 0) - static_cast<float>(rates[k]);
    g(0, 0) = 1.0f;
    optimizer->apply(vars, grads);
    QCOMPARE(w(0, 0), expected);
  }
  QCOMPARE(optimizer->iterations(), int64_t{rates.size()});
}

void TestSchedules::validation_data() {
  QTest::addColumn<ScheduleSpec>("schedule");
  QTest::addColumn<QString>("field");
  QTest::addColumn<QString>("message");
  ScheduleSpec s;
  s = exponential(0.1, 10, 0.5, false), s.class_name = "PolynomialDecay";
  QTest::newRow("unknown") << s << "class_name"
                           << "unknown learning-rate schedule \"PolynomialDecay\"; expected "
                              "ExponentialDecay, CosineDecay or PiecewiseConstantDecay";
  QTest::newRow("decay_steps 0") << exponential(0.1, 0.0, 0.5, false) << "config.decay_steps"
                                 << "must be a positive number, got 0";
  QTest::newRow("cosine decay_steps -5") << cosine(0.1, -5.0, 0.0) << "config.decay_steps"
                                         << "must be a positive number, got -5";
  QTest::newRow("decay_rate 0") << exponential(0.1, 10.0, 0.0, false) << "config.decay_rate"
                                << "must be a positive number, got 0";
  QTest::newRow("negative initial")
      << exponential(-1.0, 10.0, 0.5, false) << "config.initial_learning_rate"
      << "must be a non-negative number, got -1";
  QTest::newRow("alpha 1.5") << cosine(0.1, 10.0, 1.5) << "config.alpha"
                             << "must be in [0, 1], got 1.5";
  QTest::newRow("negative warmup_steps")
      << cosine(0.1, 10.0, 0.0, 0.2, -1.0) << "config.warmup_steps"
      << "must be a non-negative number, got -1";
  QTest::newRow("negative warmup_target")
      << cosine(0.1, 10.0, 0.0, -0.1, 2.0) << "config.warmup_target"
      << "must be a non-negative number, got -0.1";
  QTest::newRow("values one short")
      << piecewise({1.0, 2.0}, {0.1, 0.05}) << "config.values"
      << "must have one more entry than boundaries: 3 values for 2 boundaries, got 2";
  QTest::newRow("values one long")
      << piecewise({1.0}, {0.1, 0.05, 0.01}) << "config.values"
      << "must have one more entry than boundaries: 2 values for 1 boundary, got 3";
  QTest::newRow("no boundaries") << piecewise({}, {0.1}) << "config.boundaries"
                                 << "must list at least one step boundary";
  QTest::newRow("boundaries not increasing")
      << piecewise({5.0, 5.0}, {0.1, 0.05, 0.01}) << "config.boundaries[1]"
      << "must be greater than the previous boundary 5, got 5";
  QTest::newRow("negative value") << piecewise({5.0, 6.0}, {0.1, 0.05, -0.01}) << "config.values[2]"
                                  << "must be a non-negative learning rate, got -0.01";
}

// make_optimizer names the schedule's field under the optimizer's learning_rate, as Keras's JSON
// nests it: {"learning_rate": {"class_name": ..., "config": {...}}}.
void TestSchedules::validation() {
  QFETCH(ScheduleSpec, schedule);
  QFETCH(QString, field);
  QFETCH(QString, message);
  OptimizerSpec spec;
  spec.class_name = "Adam";
  spec.schedule = schedule;
  try {
    make_optimizer(spec, "compile.optimizer");
    QFAIL("no InputError");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.place()), "compile.optimizer.learning_rate." + field);
    QCOMPARE(QString::fromStdString(e.message()), message);
  }
}

void TestSchedules::schedule_value_rejects_unknown_class() {
  ScheduleSpec s = exponential(0.1, 10.0, 0.5, false);
  s.class_name = "InverseTimeDecay";
  QVERIFY_THROWS_EXCEPTION(InputError, schedule_value(s, 0.0));
  QVERIFY_THROWS_EXCEPTION(InputError, schedule_value(piecewise({1.0}, {0.1}), 0.0));
}

QTEST_GUILESS_MAIN(TestSchedules)
#include "tst_schedules.moc"
