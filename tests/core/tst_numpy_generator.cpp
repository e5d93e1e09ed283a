// NumPy's Generator (core/python/numpy_generator.h) against NumPy 1.24 itself: a few values
// printed once by /usr/bin/python3, then millions of draws from several seeds made by
// tests/reference/numpy_generator_draws.py at test time and compared bit for bit.

#include <QFileInfo>
#include <QProcess>
#include <QTest>
#include <bit>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/python/numpy_generator.h"

using namespace fitbench;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

}  // namespace

class TstNumpyGenerator : public QObject {
  Q_OBJECT

 private slots:
  void printedValues() {
    // /usr/bin/python3 -c "import numpy as np; r = np.random.default_rng(7);
    // print([float(v).hex() for v in r.standard_normal(4)])"
    NumpyGenerator g(7);
    QCOMPARE(g.standard_normal(), 0x1.427a31c1ffc58p-10);
    QCOMPARE(g.standard_normal(), 0x1.31ea59a5b303ep-2);
    QCOMPARE(g.standard_normal(), -0x1.18b7980d81558p-2);
    QCOMPARE(g.standard_normal(), -0x1.c7fba74b18102p-1);
    // np.random.default_rng(5).random(3)
    NumpyGenerator u(5);
    QCOMPARE(u.random(), 0.8050029237453802);
    QCOMPARE(u.random(), 0.8079407897364937);
    QCOMPARE(u.random(), 0.515325561042142);
  }

  void tableShape() {
    // Marsaglia and Tsang's layers: x grows from 0 to r, f(x) falls from 1; the top layer's
    // width is r; the layer above x = 0 has no rectangle part (ki[1] = 0).
    const ZigguratTables& t = ziggurat_normal_tables();
    QCOMPARE(t.wi[255] * 4503599627370496.0, 3.6541528853610087963519472518);
    QCOMPARE(t.ki[1], uint64_t{0});
    QCOMPARE(t.fi[0], 1.0);
    for (int i = 2; i < 256; ++i) {
      QVERIFY(t.wi[i] > t.wi[i - 1]);
      QVERIFY(t.fi[i] < t.fi[i - 1]);
      QVERIFY(t.ki[i] > 0 && t.ki[i] < (uint64_t{1} << 52));
    }
  }

  void millionsOfDrawsEqualNumpy() {
    // Five seeds (one with a 64-bit SeedSequence entropy) x 1,000,000 normals: every path of the
    // ziggurat is taken thousands of times (of these 5,000,000: 39,851 accepted in a wedge after
    // 33,698 wedge rejections, 1,287 from the tail beyond r), and every layer's wi, ki and fi
    // matter. The generator's next random() checks that the normals used as many words.
    if (!QFileInfo::exists(kPython)) QSKIP("/usr/bin/python3 is not installed");
    const int count = 1'000'000;
    const std::vector<uint64_t> seeds = {0, 7, 1, 123456789, (uint64_t{1} << 33) + 1};
    QStringList args = {FITBENCH_SOURCE_DIR "/tests/reference/numpy_generator_draws.py",
                        QString::number(count)};
    for (uint64_t s : seeds) args << QString::number(s);
    QProcess p;
    p.start(kPython, args);
    QVERIFY(p.waitForFinished(300000));
    const QByteArray err = p.readAllStandardError();
    if (p.exitCode() != 0 && err.contains("No module named 'numpy'"))
      QSKIP("NumPy is not installed for /usr/bin/python3");
    QVERIFY2(p.exitCode() == 0, err.constData());
    const QByteArray out = p.readAllStandardOutput();
    const size_t per_seed = size_t(count) + 1 + size_t(count / 10);
    QCOMPARE(size_t(out.size()), seeds.size() * per_seed * sizeof(double));
    std::vector<double> expected(seeds.size() * per_seed);
    std::memcpy(expected.data(), out.constData(), size_t(out.size()));

    int64_t compared = 0, tail = 0;
    const double r = 3.6541528853610087963519472518;
    for (size_t k = 0; k < seeds.size(); ++k) {
      const double* want = expected.data() + k * per_seed;
      NumpyGenerator g(seeds[k]);
      for (int i = 0; i <= count; ++i) {
        const double got = i < count ? g.standard_normal() : g.random();
        if (std::bit_cast<uint64_t>(got) != std::bit_cast<uint64_t>(want[i])) {
          QFAIL(qPrintable(QString("seed %1, draw %2: fitbench %3, NumPy %4")
                               .arg(seeds[k])
                               .arg(i)
                               .arg(got, 0, 'g', 17)
                               .arg(want[i], 0, 'g', 17)));
        }
        if (i < count && std::abs(got) > r) ++tail;
      }
      NumpyGenerator u(seeds[k]);
      for (int i = 0; i < count / 10; ++i) {
        const double got = u.random();
        QVERIFY2(std::bit_cast<uint64_t>(got) == std::bit_cast<uint64_t>(want[count + 1 + i]),
                 qPrintable(QString("seed %1, random() %2").arg(seeds[k]).arg(i)));
      }
      compared += count + 1 + count / 10;
    }
    qInfo("%lld draws equal to NumPy's, %lld of them normals from the tail beyond r",
          static_cast<long long>(compared), static_cast<long long>(tail));
    QVERIFY(tail > 1000);  // the tail path was exercised
  }
};

QTEST_GUILESS_MAIN(TstNumpyGenerator)
#include "tst_numpy_generator.moc"
