// python_repr against Python's repr() of the same doubles (the expected texts are what
// /usr/bin/python3 printed for repr(float(v))).
#include <QTest>
#include <cmath>
#include <limits>

#include "core/python/python_repr.h"

using fitbench::python_repr;

class TestPythonRepr : public QObject {
  Q_OBJECT
 private slots:
  void matches_python_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("expected");
    const struct {
      double value;
      const char* text;
    } rows[] = {{0.0, "0.0"},
                {-0.0, "-0.0"},
                {1.0, "1.0"},
                {0.5, "0.5"},
                {0.1, "0.1"},
                {0.0001, "0.0001"},
                {0.00001, "1e-05"},
                {9.999999747378752e-05, "9.999999747378752e-05"},
                {0.0010000000474974513, "0.0010000000474974513"},
                {1234567.0, "1234567.0"},
                {9999999999999998.0, "9999999999999998.0"},
                {1e16, "1e+16"},
                {1.5e16, "1.5e+16"},
                {-2.5e-7, "-2.5e-07"},
                {123.456, "123.456"},
                {1e300, "1e+300"},
                {5e-324, "5e-324"},
                {3.0000001192092896, "3.0000001192092896"},
                {std::numeric_limits<double>::infinity(), "inf"},
                {-std::numeric_limits<double>::infinity(), "-inf"},
                {std::nan(""), "nan"}};
    for (const auto& r : rows) QTest::newRow(r.text) << r.value << QString(r.text);
  }
  void matches_python() {
    QFETCH(double, value);
    QFETCH(QString, expected);
    QCOMPARE(QString::fromStdString(python_repr(value)), expected);
  }
};

QTEST_GUILESS_MAIN(TestPythonRepr)
#include "tst_python_repr.moc"
