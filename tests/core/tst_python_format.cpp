// python_format against Python's format() of the same ints and floats (the expected texts are
// what /usr/bin/python3 printed: tests/reference/python_format_cases.py), and the template reader
// ModelCheckpoint's filepath goes through.
#include <QTest>
#include <cmath>
#include <limits>

#include "core/python/python_format.h"

using namespace fitbench;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::nan("");

struct Case {
  bool is_int;
  int64_t int_value;
  double float_value;
  const char* spec;
  const char* python;  // nullptr: Python raises ValueError
};
const Case kCases[] = {
#include "python_format_cases.inc"
};
}  // namespace

class TestPythonFormat : public QObject {
  Q_OBJECT
 private slots:
  void matches_python() {
    int checked = 0, refused = 0;
    for (const Case& c : kCases) {
      const QString what = QStringLiteral("format(%1, '%2')")
                               .arg(c.is_int ? QString::number(c.int_value)
                                             : QString::number(c.float_value, 'g', 17))
                               .arg(c.spec);
      std::string text;
      bool threw = false;
      try {
        text = c.is_int ? python_format(c.int_value, c.spec) : python_format(c.float_value, c.spec);
      } catch (const FormatError&) {
        threw = true;
      }
      if (!c.python) {
        QVERIFY2(threw,
                 qPrintable(what + " should be refused, got " + QString::fromStdString(text)));
        ++refused;
        continue;
      }
      QVERIFY2(!threw, qPrintable(what + " was refused; Python gives " + c.python));
      QCOMPARE(QString::fromStdString(text), QString::fromUtf8(c.python));
      ++checked;
    }
    QVERIFY(checked > 900);
    QVERIFY(refused > 100);
  }

  void refuses_what_it_does_not_format() {
    for (const char* spec : {",d", "_d", "#x", "x", "z.2f", "n", "2.2.2", ".f"})
      QVERIFY_THROWS_EXCEPTION(FormatError, python_format(int64_t{5}, spec));
    for (const char* spec : {"d", "x", ".2q", ",.2f"})
      QVERIFY_THROWS_EXCEPTION(FormatError, python_format(0.5, spec));
  }

  void reads_templates() {
    const FormatTemplate t = parse_format_template("ck{{x}}-{epoch:02d}-{val_loss:.2f}.json");
    QCOMPARE(t.fields.size(), size_t{2});
    QCOMPARE(t.literals.size(), size_t{3});
    QCOMPARE(QString::fromStdString(t.literals[0]), QStringLiteral("ck{x}-"));
    QCOMPARE(QString::fromStdString(t.fields[0].name), QStringLiteral("epoch"));
    QCOMPARE(QString::fromStdString(t.fields[0].spec), QStringLiteral("02d"));
    QCOMPARE(QString::fromStdString(t.fields[1].name), QStringLiteral("val_loss"));
    QCOMPARE(QString::fromStdString(t.fields[1].spec), QStringLiteral(".2f"));
    QCOMPARE(QString::fromStdString(t.literals[2]), QStringLiteral(".json"));
    QCOMPARE(parse_format_template("plain.json").fields.size(), size_t{0});
  }

  void refuses_malformed_templates() {
    for (const char* text : {"a}b", "a{b", "{}", "{0}", "{epoch!r}", "{logs.x}", "{a[0]}",
                             "{epoch:{w}}", "{epoch:,}"}) {
      QVERIFY_THROWS_EXCEPTION(FormatError, parse_format_template(text));
    }
  }
};

QTEST_GUILESS_MAIN(TestPythonFormat)
#include "tst_python_format.moc"
