// fitbench-cli sweep as a user runs it: the teaching example with --jobs 2 prints the table best
// first and writes the files; an earlier sweep's folder is kept unless --overwrite; bad options
// and bad sweep sections end with exit 2 and a sentence per problem; Ctrl+C stops within a step,
// keeps what finished and exits 130.
#include <QDir>
#include <QFile>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>
#include <csignal>

namespace {

struct Result {
  int code;
  QString out, err;
};

QProcessEnvironment clean_environment() {
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  return e;
}

Result cli(const QStringList& args, const QString& folder = {}) {
  QProcess p;
  p.setProcessEnvironment(clean_environment());
  if (!folder.isEmpty()) p.setWorkingDirectory(folder);
  p.start(FITBENCH_CLI, args);
  if (!p.waitForFinished(120000)) p.kill();
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QString example(const QString& name) {
  return QString(FITBENCH_SOURCE_DIR "/resources/examples/") + name;
}

// The xor example with `sweep` (JSON text) and `epochs`, written to `dir`.
QString xor_sweep(const QTemporaryDir& dir, const QString& sweep, int epochs = 4) {
  QFile in(example("xor.json"));
  in.open(QIODevice::ReadOnly);
  QString text = QString::fromUtf8(in.readAll());
  text.replace("\"epochs\": 30", "\"epochs\": " + QString::number(epochs));
  const int end = text.lastIndexOf('}');
  text = text.left(end) + ", \"sweep\": " + sweep + "}\n";
  const QString path = dir.filePath("xor_sweep.json");
  QFile out(path);
  out.open(QIODevice::WriteOnly);
  out.write(text.toUtf8());
  return path;
}

}  // namespace

class TestCliSweep : public QObject {
  Q_OBJECT

 private slots:
  void teachingExample() {
    QTemporaryDir dir;
    const Result r = cli({"sweep", example("spiral_lr_sweep.json"), "--jobs", "2"}, dir.path());
    QVERIFY2(r.code == 0, qPrintable(r.err));
    const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 14);  // header, 12 trials, the best
    QVERIFY2(lines[0].startsWith("Trial  Status     learning_rate  units  val_loss  Best epoch"),
             qPrintable(lines[0]));
    QVERIFY(lines[1].contains("completed"));
    QVERIFY(lines[13].startsWith("Best trial: " + lines[1].section(' ', 0, 0) + " ("));
    // Completed trials first, best first.
    double previous = 0;
    for (int i = 1; i <= 12 && lines[i].contains("completed"); ++i) {
      const double v = lines[i].split(' ', Qt::SkipEmptyParts)[4].toDouble();
      QVERIFY(v >= previous);
      previous = v;
    }
    QVERIFY(r.out.contains("pruned"));
    QVERIFY(r.err.contains("fitbench-cli: 12 trials (random), 2 jobs, objective val_loss (min)"));
    QVERIFY(r.err.contains("fitbench-cli: trial 12/12: "));
    const QDir out(dir.filePath("spiral_lr_sweep-sweep"));
    QVERIFY(out.exists("trials.csv"));
    QVERIFY(out.exists("trials.json"));
    QVERIFY(out.exists("trial_011/experiment.json"));
    QVERIFY(out.exists("trial_011/history.json"));

    // The folder holds results now: kept unless --overwrite.
    const Result again = cli({"sweep", example("spiral_lr_sweep.json")}, dir.path());
    QCOMPARE(again.code, 2);
    QVERIFY2(again.err.contains("spiral_lr_sweep-sweep: holds an earlier sweep's results "
                                "(trials.json); choose another folder with --out, or replace "
                                "them with --overwrite"),
             qPrintable(again.err));
    const Result replaced =
        cli({"sweep", example("spiral_lr_sweep.json"), "--overwrite", "--jobs", "1"}, dir.path());
    QVERIFY2(replaced.code == 0, qPrintable(replaced.err));
    // The same trials and values, whatever the jobs (the Time column aside).
    const QRegularExpression time(R"(\s+[0-9.]+ (ms|s)$)");
    QStringList before = lines, after = replaced.out.split('\n', Qt::SkipEmptyParts);
    for (QString& line : before) line.remove(time);
    for (QString& line : after) line.remove(time);
    QCOMPARE(after, before);
  }

  void refusals() {
    QTemporaryDir dir;
    Result r = cli({"sweep", example("xor.json"), "--jobs", "0"}, dir.path());
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("--jobs"), qPrintable(r.err));
    r = cli({"sweep", example("xor.json")}, dir.path());
    QCOMPARE(r.code, 2);
    QVERIFY2(r.err.contains("xor.json: has no sweep section; `fitbench-cli run` trains it as "
                            "it is"),
             qPrintable(r.err));
    const QString bad = xor_sweep(dir, R"({"method": "grd", "parameters": {
        "fit.batch_size": {"class_name": "Int", "config": {"min_value": 9, "max_value": 3}}}})");
    r = cli({"sweep", bad}, dir.path());
    QCOMPARE(r.code, 2);
    const QStringList lines = r.err.split('\n', Qt::SkipEmptyParts);
    QCOMPARE(lines.size(), 2);
    QVERIFY2(lines[0].endsWith("xor_sweep.json: sweep.method: must be \"grid\" or \"random\", "
                               "got \"grd\""),
             qPrintable(lines[0]));
    QVERIFY(
        lines[1].contains("sweep.parameters[\"fit.batch_size\"].config.max_value: must be "
                          "greater than min_value"));
    QVERIFY(!QDir(dir.filePath("xor_sweep-sweep")).exists());
  }

  // Ctrl+C: the running trial stops within a step, finished trials are kept, exit 130.
  void interrupt() {
    QTemporaryDir dir;
    const QString file = xor_sweep(dir, R"({"method": "grid", "objective": "loss", "parameters": {
        "fit.epochs": {"class_name": "Choice", "config": {"values": [1, 2000000]}}}})");
    QProcess p;
    p.setProcessEnvironment(clean_environment());
    p.setWorkingDirectory(dir.path());
    p.start(FITBENCH_CLI, {"sweep", file, "--jobs", "1"});
    QVERIFY(p.waitForStarted());
    QString err;
    QElapsedTimer clock;
    clock.start();
    while (!err.contains("trial 1/2") && clock.elapsed() < 60000) {
      p.waitForReadyRead(200);
      err += QString::fromUtf8(p.readAllStandardError());
    }
    QVERIFY2(err.contains("trial 1/2: #0 completed"), qPrintable(err));
    QTest::qWait(300);  // trial 1 is training
    ::kill(static_cast<pid_t>(p.processId()), SIGINT);
    clock.restart();
    QVERIFY(p.waitForFinished(10000));
    QVERIFY(clock.elapsed() < 10000);
    err += QString::fromUtf8(p.readAllStandardError());
    QCOMPARE(p.exitCode(), 130);
    QVERIFY2(err.contains("stopped (Ctrl+C): 1 of 2 trials finished and are kept"),
             qPrintable(err));
    QFile csv(dir.filePath("xor_sweep-sweep/trials.csv"));
    QVERIFY(csv.open(QIODevice::ReadOnly));
    const QStringList rows = QString::fromUtf8(csv.readAll()).split('\n', Qt::SkipEmptyParts);
    QCOMPARE(rows.size(), 3);
    QVERIFY(rows[1].startsWith("0,completed,1,"));
    QVERIFY2(rows[2].startsWith("1,stopped,2000000,"), qPrintable(rows[2]));
  }
};

QTEST_GUILESS_MAIN(TestCliSweep)
#include "tst_cli_sweep.moc"
