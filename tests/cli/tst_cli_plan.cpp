// fitbench-cli plan as a user runs it: the table per device, the --json object with the keys
// issue 22 lists, targets, what-ifs and sweeps; and fitbench-cli run refusing up front, under a
// real RLIMIT_AS in a child shell, the runs that ended in a bare std::bad_alloc.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include "core/base/sanitized.h"

namespace {

struct Result {
  int code;
  QString out, err;
};

Result run(const QString& program, const QStringList& args) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  p.setProcessEnvironment(e);
  p.start(program, args);
  p.waitForFinished(120000);
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

Result cli(const QStringList& args) { return run(FITBENCH_CLI, args); }

// fitbench-cli under `ulimit -v kib` (RLIMIT_AS), in a shell.
Result cli_limited(long long kib, const QStringList& args) {
  QString line = QString("ulimit -v %1 && exec \"$0\" \"$@\"").arg(kib);
  return run("/bin/sh", QStringList{"-c", line, FITBENCH_CLI} + args);
}

QString example(const char* name) {
  return QString(FITBENCH_SOURCE_DIR "/resources/examples/") + name;
}

// An experiment with one wide Dense layer on `features` Gaussian features.
QByteArray wide(int features, long long units, const char* distribution) {
  return QString(R"({"name": "wide", "seed": 1, "distribution": %1,
    "data": {"generator": "seed", "samples": 64, "features": %2, "seed": 1},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, %2]}},
      {"class_name": "Dense", "config": {"units": %3, "activation": "relu"}},
      {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
    "compile": {"optimizer": "adam", "loss": "binary_crossentropy"},
    "fit": {"epochs": 1, "batch_size": 1, "verbose": 0}})")
      .arg(distribution)
      .arg(features)
      .arg(units)
      .toUtf8();
}

QString write(const QTemporaryDir& dir, const char* name, const QByteArray& text) {
  const QString path = dir.path() + "/" + name;
  QFile f(path);
  if (f.open(QIODevice::WriteOnly)) f.write(text);
  return path;
}

}  // namespace

class TestCliPlan : public QObject {
  Q_OBJECT
 private slots:
  // The seed model (Dense(1) on 4 features: 5 floats) with SGD on 2 DataParallel devices: each
  // device holds 20 bytes of weights and 20 of gradients and no slots.
  void jsonHasTheIssuesKeys() {
    const Result r = cli({"plan", example("seed.json"), "--devices", "2", "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    for (const char* key : {"devices", "fits", "communication_bytes_per_step", "step"})
      QVERIFY2(o.contains(key), key);
    const QJsonArray devices = o["devices"].toArray();
    QCOMPARE(devices.size(), 2);
    const QJsonObject d = devices[1].toObject();
    QCOMPARE(d["device"].toString(), QString("cpu:1"));
    QCOMPARE(d["weights"].toInteger(), 20);
    QCOMPARE(d["gradients"].toInteger(), 20);
    QCOMPARE(d["optimizer_slots"].toInteger(), 0);
    QCOMPARE(d["total"].toInteger(), d["weights"].toInteger() + d["gradients"].toInteger() +
                                         d["activations"].toInteger() + d["buffers"].toInteger());
    QVERIFY(o["fits"].toBool());
    // Two ring steps, each device sending one chunk (2 and 3 of the 5 floats) twice.
    QCOMPARE(o["communication_bytes_per_step"].toInteger(), 2 * 5 * 4);
    const QJsonObject step = o["step"].toObject();
    for (const char* key : {"compute_s", "communication_s", "total_s", "samples_per_s"})
      QVERIFY2(step.contains(key), key);
    QVERIFY(qFuzzyCompare(step["total_s"].toDouble(),
                          step["compute_s"].toDouble() + step["communication_s"].toDouble()));
  }

  void tableNamesEveryDeviceAndTheStep() {
    const Result r = cli({"plan", example("model_parallel_2x2.json"), "--target", "dgx1-v100"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("Target: dgx1-v100: NVIDIA DGX-1"), qPrintable(r.out));
    QVERIFY(r.out.contains("ModelParallel on a 2x2 mesh"));
    for (const char* device : {"cpu:0 ", "cpu:3 "}) QVERIFY(r.out.contains(device));
    QVERIFY(r.out.contains("hidden_1 forward all_gather over 2 devices"));
    QVERIFY(r.out.contains("Fits: yes"));
    QVERIFY(r.out.contains("Step: compute "));
  }

  // Twice the width of every hidden layer: more weights per device.
  void scaleWidthMovesTheAnswer() {
    const auto weights = [](const QStringList& extra) {
      const Result r =
          cli(QStringList{"plan", example("model_parallel_2x2.json"), "--json"} + extra);
      return QJsonDocument::fromJson(r.out.toUtf8())["devices"][0]["weights"].toInteger();
    };
    // hidden 2x16 / 2, 16x16 / 2, output 16x1 + 1: (16 + 8 + 128 + 8 + 17) x 4 bytes = 708;
    // twice as wide: (32 + 16 + 512 + 16 + 33) x 4 = 2436.
    QCOMPARE(weights({}), 708);
    QCOMPARE(weights({"--scale-width", "2"}), 2436);
  }

  void sweepListsDataParallelAndMeshes() {
    const Result r =
        cli({"plan", example("seed.json"), "--sweep-devices", "1,4,1024", "--target", "dgx-a100"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("DataParallel on 1024 devices"), qPrintable(r.out));
    QVERIFY(r.out.contains("ModelParallel on a 2x2 mesh"));
    QVERIFY(r.out.contains("ModelParallel on a 128x8 mesh"));
  }

  void badInputNamesItsPlace_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("target") << QStringList{"--target", "tpu-v9"}
                            << "fitbench-cli: --target: is neither a preset";
    QTest::newRow("sweep") << QStringList{"--sweep-devices", "1,x"}
                           << "fitbench-cli: --sweep-devices: must list device counts";
    QTest::newRow("scale") << QStringList{"--scale-batch", "-2"}
                           << "fitbench-cli: --scale-batch: must be a factor above 0";
    QTest::newRow("calibrate elsewhere") << QStringList{"--calibrate", "--target", "dgx1-v100"}
                                         << "fitbench-cli: --calibrate: measures this machine";
  }
  void badInputNamesItsPlace() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    const Result r = cli(QStringList{"plan", example("seed.json")} + args);
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith(message), qPrintable(r.err));
  }

  // The teaching example's lesson: on its 8 x 32 MB target, DataParallel does not fit and the
  // example's own 2 x 4 ModelParallel mesh does.
  void teachingExampleFitsOnlyWhenSplit() {
    const QString target = example("targets/classroom_8x32mb.json");
    const auto fits = [&](const QStringList& extra) {
      const Result r = cli(QStringList{"plan", example("capacity_model_parallel.json"), "--target",
                                       target, "--json"} +
                           extra);
      return QJsonDocument::fromJson(r.out.toUtf8())["fits"].toBool(true);
    };
    QVERIFY(!fits({"--strategy", "data_parallel", "--devices", "8"}));
    QVERIFY(fits({}));
  }

  // plan says on stderr what run would say before training (the shapes show it all), so a
  // layout-map typo or a flag without effect is seen before booking anything; stdout stays the
  // JSON object.
  void saysWhatRunWouldSay() {
    QTemporaryDir dir;
    const QString file = write(
        dir, "typo.json",
        wide(
            4, 8,
            R"({"class_name": "ModelParallel", "mesh": {"shape": [1, 2], "axis_names": ["batch", "model"]},
                 "layout_map": {"dense/kernel": [null, "model"], "desne.*bias": ["model"]}})"));
    const QStringList args{file, "--devices", "4", "--mesh", "2x2"};
    const Result plan = cli(QStringList{"plan", "--json"} + args);
    QCOMPARE(plan.code, 0);
    QVERIFY(!QJsonDocument::fromJson(plan.out.toUtf8()).isNull());
    const QStringList said = plan.err.split('\n', Qt::SkipEmptyParts);
    QVERIFY2(plan.err.contains("warning: ") && plan.err.contains("desne.*bias"),
             qPrintable(plan.err));
    QVERIFY2(plan.err.contains("4 devices share"), qPrintable(plan.err));
    const Result run = cli(QStringList{"run", "--epochs", "1"} + args);
    QCOMPARE(run.code, 0);
    for (const QString& line : said) QVERIFY2(run.err.contains(line), qPrintable(line));
    // A flag without effect, and the default layout map of a mesh without one.
    const Result none = cli({"plan", example("seed.json"), "--strategy", "none", "--devices", "3"});
    QVERIFY2(none.err.contains("note: --devices 3 has no effect"), qPrintable(none.err));
    const Result mesh =
        cli({"plan", example("seed.json"), "--strategy", "model_parallel", "--devices", "2"});
    QVERIFY2(mesh.err.contains("distribution.layout_map: none given"), qPrintable(mesh.err));
  }

  void targetFileIsRead() {
    QTemporaryDir dir;
    const QString file = write(dir, "lab.json", R"({"name": "lab", "memory_gb": 0.0000001,
        "tflops": 1})");
    const Result r = cli({"plan", example("seed.json"), "--target", file, "--json"});
    QCOMPARE(r.code, 0);
    const QJsonObject o = QJsonDocument::fromJson(r.out.toUtf8()).object();
    QCOMPARE(o["target"].toString(), QString("lab"));
    QVERIFY(!o["fits"].toBool());  // 100 bytes per device: the seed's 488 do not fit
  }

  // Under RLIMIT_AS of 3 GB, 64 DataParallel devices of a 24M-float model are refused before
  // anything is built, at --devices, with the estimate and the limit named.
  void runRefusesManyReplicasUnderRlimitAs() {
#ifdef FITBENCH_SANITIZED
    QSKIP("a sanitized fitbench-cli cannot start under an RLIMIT_AS");
#endif
    QTemporaryDir dir;
    const QString file =
        write(dir, "big.json", wide(23, 1000000, R"({"class_name": "DataParallel"})"));
    const Result r = cli_limited(3'000'000, {"run", file, "--devices", "64"});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.startsWith("fitbench-cli: --devices: this run needs about"), qPrintable(r.err));
    QVERIFY(r.err.contains("RLIMIT_AS"));
    QVERIFY(!r.err.contains("bad_alloc"));
  }

  // A row of 60,000,000 fields (120 MB) under 1.5 GB: a row problem, said with its line,
  // however many fields it has (holding a view of each would take 1.4 GB).
  void runReportsAHugeRowAsARowProblem() {
#ifdef FITBENCH_SANITIZED
    QSKIP("a sanitized fitbench-cli cannot start under an RLIMIT_AS");
#endif
    QTemporaryDir dir;
    QByteArray rows = "x,y\n1,0\n";
    rows.reserve(130'000'000);
    for (int i = 0; i < 60'000'000; ++i) rows += "1,";
    rows += "1\n";
    write(dir, "rows.csv", rows);
    rows = QByteArray();
    const QString file = write(dir, "rows.json", R"({"data": {"csv": "rows.csv", "target": "y"},
      "model": {"class_name": "Sequential", "config": {"layers": [
        {"class_name": "InputLayer", "config": {"batch_shape": [null, 1]}},
        {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
      "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"},
      "fit": {"epochs": 1, "verbose": 0}})");
    const Result r = cli_limited(1'500'000, {"run", file});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.endsWith("/rows.csv:3: row has 60000001 fields, the header has 2\n"),
             qPrintable(r.err.left(300)));
    QCOMPARE(r.err.count('\n'), 1);
  }

  // A Dense of 40,000,000 units with Adam under 4 GB: refused at its units.
  void runRefusesAWideDenseUnderRlimitAs() {
#ifdef FITBENCH_SANITIZED
    QSKIP("a sanitized fitbench-cli cannot start under an RLIMIT_AS");
#endif
    QTemporaryDir dir;
    const QString file = write(dir, "wide.json", wide(4, 40000000, "null"));
    const Result r = cli_limited(3'900'000, {"run", file});
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("model.config.layers[1].config.units: this run needs about"),
             qPrintable(r.err));
    QVERIFY(r.err.contains("make it narrower"));
  }
};

QTEST_GUILESS_MAIN(TestCliPlan)
#include "tst_cli_plan.moc"
