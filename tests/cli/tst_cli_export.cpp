// fitbench-cli export as a user runs it: --format python to a file (written whole) and to stdout,
// every example; --format keras and weights from an experiment and from model files, and run's
// --save-model / --load-weights with Keras files (training resumes from the optimizer's state);
// exit code 2 with one sentence for a missing or unknown format, a Keras file to stdout or under
// another name, a script from a model, a missing -o and an output that names the experiment.
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
                               << "--format: is required; the formats are: python (a runnable "
                                  "Keras 3 script (.py)), keras (a Keras model archive (.keras)), "
                                  "weights (Keras weights (.weights.h5))";
    QTest::newRow("unknown") << QStringList{"export", seed, "--format", "onnx", "-o", "-"}
                             << "--format: unknown format \"onnx\"; the formats are: python";
    QTest::newRow("keras to stdout")
        << QStringList{"export", seed, "--format", "keras", "-o", "-"}
        << "--output: must name a file: a Keras model archive (.keras) is binary";
    QTest::newRow("keras named .h5")
        << QStringList{"export", seed, "--format", "keras", "-o", "model.h5"}
        << "--output: \"model.h5\" must end in .keras: Keras tells its files apart by that name";
    QTest::newRow("weights named .h5")
        << QStringList{"export", seed, "--format", "weights", "-o", "model.h5"}
        << "must end in .weights.h5";
    QTest::newRow("script from a model")
        << QStringList{"export", "model.keras", "--format", "python", "-o", "-"}
        << "is a model, but a script needs an experiment";
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

  // A model trained by run --save-model x.keras, converted by export, and loaded by run
  // --load-weights: the .keras and .weights.h5 forms resume identically (with Adam's state), a
  // fitbench JSON model file (weights only) differently; evaluate, predict and summary take it.
  void kerasFiles() {
    QTemporaryDir dir;
    const QString keras = dir.filePath("blobs.keras"), json = dir.filePath("blobs.json"),
                  weights = dir.filePath("blobs.weights.h5");
    const QString blobs = example("blobs.json");
    QCOMPARE(cli({"run", blobs, "--verbose", "0", "--save-model", keras}).code, 0);
    QCOMPARE(cli({"run", blobs, "--verbose", "0", "--save-model", json}).code, 0);
    const Result converted = cli({"export", keras, "--format", "weights", "-o", weights});
    QVERIFY2(converted.code == 0, qPrintable(converted.err));
    const Result initial =
        cli({"export", blobs, "--format", "keras", "-o", dir.filePath("initial.keras")});
    QVERIFY2(initial.code == 0, qPrintable(initial.err));
    const Result summary = cli({"summary", dir.filePath("initial.keras")});
    QVERIFY(summary.out.contains("Total params: 99"));
    QVERIFY(!summary.out.contains("Optimizer params"));  // not trained: no optimizer state

    // The History each resumed run writes (the progress lines hold timings).
    const auto resume = [&](const QString& file) {
      const QString history = file + QStringLiteral(".history.json");
      const Result r = cli({"run", blobs, "--epochs", "2", "--verbose", "0", "--load-weights", file,
                            "--history", history});
      QFile f(history);
      return r.code == 0 && f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : r.err;
    };
    const QString fromKeras = resume(keras);
    QVERIFY2(fromKeras.contains("\"loss\""), qPrintable(fromKeras));
    QCOMPARE(resume(weights), fromKeras);
    QVERIFY(resume(json) != fromKeras);  // Adam starts afresh without its moments
    QVERIFY(cli({"summary", keras}).out.contains("Optimizer params: 200"));

    QFile csv(dir.filePath("x.csv"));
    QVERIFY(csv.open(QIODevice::WriteOnly));
    csv.write("a,b,label\n0.5,-1.0,0\n2.0,3.0,1\n-4.0,1.5,2\n");
    csv.close();
    const Result fromArchive =
        cli({"predict", keras, "--data", csv.fileName(), "--target", "label"});
    const Result fromJson = cli({"predict", json, "--data", csv.fileName(), "--target", "label"});
    QVERIFY2(fromArchive.code == 0, qPrintable(fromArchive.err));
    QCOMPARE(fromArchive.out, fromJson.out);  // the Normalization layer standardizes as fitbench
    const Result evaluated =
        cli({"evaluate", keras, "--data", csv.fileName(), "--target", "label"});
    QVERIFY2(evaluated.code == 0 && evaluated.out.contains("loss: "), qPrintable(evaluated.err));
  }

  // A weights file that makes Debian's HDF5 crash (tests/data/keras_damaged): one sentence, exit 2.
  void hdf5CrashIsRefused() {
    const QString file =
        QStringLiteral(FITBENCH_SOURCE_DIR "/tests/data/keras_damaged/hdf5_null_read.weights.h5");
    const Result r = cli(
        {"run", example("xor.json"), "--epochs", "1", "--verbose", "0", "--load-weights", file});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(file + ": is a damaged HDF5 file: the HDF5 library "),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(", so nothing was read"), qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
  }

  // A weights file that makes HDF5 allocate without end: one sentence that says the check was
  // stopped at its memory limit, exit 2.
  void hdf5EndlessAllocationIsRefused() {
    const QString file = QStringLiteral(FITBENCH_SOURCE_DIR
                                        "/tests/data/keras_damaged/heap_free_list_loop.weights.h5");
    const Result r = cli(
        {"run", example("xor.json"), "--epochs", "1", "--verbose", "0", "--load-weights", file});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains(file + ": was not read: the HDF5 library took more than "),
             qPrintable(r.err));
    QVERIFY2(r.err.contains(" of memory for it (a damaged file can make it allocate without "
                            "end), so it was stopped"),
             qPrintable(r.err));
    QCOMPARE(r.err.count('\n'), 1);
  }

  void help() {
    const Result r = cli({"export", "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY(r.out.contains("--format"));
    QVERIFY(r.out.contains("python, keras or weights"));
    const Result top = cli({"--help"});
    QVERIFY(top.out.contains("export EXPERIMENT"));
  }
};

QTEST_GUILESS_MAIN(TestCliExport)
#include "tst_cli_export.moc"
