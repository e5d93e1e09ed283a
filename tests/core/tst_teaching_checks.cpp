// The checks that teach: feature_spread against hand-computed standard deviations, and
// PlateauWatch on a flat loss (warned once, at the window's end), a learning one, one that
// converged near 0, and one that went NaN.
#include <QtTest>
#include <cmath>

#include "core/training/teaching_checks.h"

using namespace fitbench;

class TestTeachingChecks : public QObject {
  Q_OBJECT
 private slots:
  void featureSpread() {
    Matrix x(4, 3);
    // Column 0: sd 1 (values -1, 1, -1, 1); column 1: constant; column 2: sd 500.
    x << -1, 7, -500, 1, 7, 500, -1, 7, -500, 1, 7, 500;
    const FeatureSpread s = feature_spread(x);
    QCOMPARE(s.widest, Index(2));
    QCOMPARE(s.narrowest, Index(0));
    QCOMPARE(s.widest_std, 500.0);
    QCOMPARE(s.narrowest_std, 1.0);
    QCOMPARE(s.ratio(), 500.0);
    // One varying column, or one row: nothing to compare.
    QCOMPARE(feature_spread(x.leftCols(2)).widest, Index(-1));
    QCOMPARE(feature_spread(x.topRows(1)).ratio(), 0.0);
  }

  void plateau() {
    PlateauWatch flat;
    int warned_at = 0, warnings = 0;
    for (int epoch = 1; epoch <= 40; ++epoch)
      if (flat.add(std::log(2.0) + 0.005 * (epoch % 3))) {  // the noise of a shuffled run
        ++warnings;
        if (!warned_at) warned_at = epoch;
      }
    QCOMPARE(warnings, 1);
    QCOMPARE(warned_at, 20);
    QVERIFY(std::abs(flat.level() - std::log(2.0)) < 0.01);

    PlateauWatch learning;
    for (int epoch = 1; epoch <= 40; ++epoch) QVERIFY(!learning.add(0.7 * std::pow(0.95, epoch)));
    // Slow but learning: 0.3% an epoch is 3% between the halves.
    PlateauWatch slow;
    for (int epoch = 1; epoch <= 60; ++epoch) QVERIFY(!slow.add(0.7 * std::pow(0.997, epoch)));

    // Converged: flat near 0.001 after starting at 0.7: not a model that does not learn.
    PlateauWatch converged;
    for (int epoch = 1; epoch <= 10; ++epoch) QVERIFY(!converged.add(0.7 / epoch));
    for (int epoch = 1; epoch <= 30; ++epoch) QVERIFY(!converged.add(0.001));

    // A NaN starts the count again.
    PlateauWatch nan;
    for (int epoch = 1; epoch <= 19; ++epoch) QVERIFY(!nan.add(0.5));
    QVERIFY(!nan.add(std::nan("")));
    for (int epoch = 1; epoch <= 19; ++epoch) QVERIFY(!nan.add(0.5));
    QVERIFY(nan.add(0.5));
  }
};

QTEST_GUILESS_MAIN(TestTeachingChecks)
#include "tst_teaching_checks.moc"
