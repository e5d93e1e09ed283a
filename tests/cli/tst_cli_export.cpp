// fitbench-cli export as a user runs it: --format python to a file (written whole) and to stdout,
// every example, and exit code 2 with one sentence for a missing or unknown format, a format not
// yet available, a missing -o and an output that names the experiment.
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result {
  int code;
  QString out, err;
};

Result cli(const QStringList& args) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  p.setProcessEnvironment(e);
  p.start(FITBENCH_CLI, args);
  p.waitForFinished(120000);
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QString example(const QString& name) {
  return QString(FITBENCH_SOURCE_DIR "/resources/examples/") + name;
}

}  // namespace

class TestCliExport : public QObject {
  Q_OBJECT

 private slots:
  void toStdoutAndFile() {
    const Result out = cli({"export", example("seed.json"), "--format", "python", "-o", "-"});
    QCOMPARE(out.code, 0);
    QVERIFY(out.out.startsWith("# Seed: one Dense unit on 4 features\n"));
    QVERIFY(out.out.contains("keras.distribution.DataParallel(devices=devices)"));
    QVERIFY(out.out.contains("keras.utils.set_random_seed(7)"));

    QTemporaryDir dir;
    const QString file = dir.filePath("seed.py");
    const Result written =
        cli({"export", example("seed.json"), "--format", "python", "-o", file, "--devices", "2"});
    QCOMPARE(written.code, 0);
    QVERIFY(written.out.isEmpty());
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QString text = QString::fromUtf8(f.readAll());
    QVERIFY(text.contains("--xla_force_host_platform_device_count=2"));
    QVERIFY(text.endsWith("\n"));
    // Nothing but the script is left in the folder (the temporary file was renamed).
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files | QDir::Hidden), QStringList{"seed.py"});
  }

  void everyExample_data() {
    QTest::addColumn<QString>("name");
    for (const QString& name :
         QDir(FITBENCH_SOURCE_DIR "/resources/examples").entryList({"*.json"}))
      QTest::newRow(qPrintable(name)) << name;
  }
  void everyExample() {
    QFETCH(QString, name);
    const Result r = cli({"export", example(name), "--format", "python", "-o", "-"});
    QVERIFY2(r.code == 0, qPrintable(r.err));
    QVERIFY(r.out.contains("model.fit("));
  }

  void refusals_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("error");
    const QString seed = example("seed.json");
    QTest::newRow("no format") << QStringList{"export", seed, "-o", "-"}
                               << "--format: is required; the known formats are: python (keras and "
                                  "weights are not yet available)";
    QTest::newRow("unknown") << QStringList{"export", seed, "--format", "onnx", "-o", "-"}
                             << "--format: unknown format \"onnx\"; the known formats are: python";
    QTest::newRow("keras") << QStringList{"export", seed, "--format", "keras", "-o", "-"}
                           << "--format: \"keras\" (a Keras model archive (.keras)) is not yet "
                              "available";
    QTest::newRow("no output") << QStringList{"export", seed, "--format", "python"}
                               << "--output: is required: -o FILE, or -o - for stdout";
    QTest::newRow("over the experiment")
        << QStringList{"export", seed, "--format", "python", "-o", seed}
        << "is the experiment file; write to another file";
    QTest::newRow("no experiment")
        << QStringList{"export", "--format", "python", "-o", "-"} << "expected EXPERIMENT";
  }
  void refusals() {
    QFETCH(QStringList, args);
    QFETCH(QString, error);
    const Result r = cli(args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(error), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
    QCOMPARE(r.err.count('\n'), 1);
  }

  void help() {
    const Result r = cli({"export", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("--format"));
    QVERIFY(r.out.contains("keras and weights are not yet available"));
    const Result top = cli({"--help"});
    QVERIFY(top.out.contains("export EXPERIMENT"));
  }
};

QTEST_GUILESS_MAIN(TestCliExport)
#include "tst_cli_export.moc"
