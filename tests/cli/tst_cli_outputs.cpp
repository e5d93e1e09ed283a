// fitbench-cli's files under kill -9: a run killed while ModelCheckpoint writes leaves no
// temporary file and never a partial checkpoint; CSVLogger does not empty an old log before it
// has a row to write (append=False) and, run to the end, holds only the new rows; a finished
// run's history, model and trace are all new. And --events, the run streamed as JSON lines.
#include <signal.h>

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

// The xor example with a wider model (a checkpoint of several MB, so kills land while it is
// written), `epochs` epochs of `samples` rows at `batch_size`, and the callbacks given.
QByteArray experiment(int samples, int units, int epochs, const QString& callbacks,
                      int batch_size = 16) {
  return QString(R"({
  "seed": 1,
  "data": {"generator": "xor", "samples": %1, "noise": 0.05, "seed": 1},
  "model": {"class_name": "Sequential", "config": {"name": "wide", "layers": [
    {"class_name": "InputLayer", "config": {"batch_shape": [null, 2]}},
    {"class_name": "Dense", "config": {"units": %2, "activation": "tanh"}},
    {"class_name": "Dense", "config": {"units": %2, "activation": "tanh"}},
    {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
  "compile": {"optimizer": {"class_name": "Adam", "config": {"learning_rate": 0.001}},
              "loss": "binary_crossentropy", "metrics": ["accuracy"]},
  "fit": {"epochs": %3, "batch_size": %5, "verbose": 2, "callbacks": [%4]}
})")
      .arg(samples)
      .arg(units)
      .arg(epochs)
      .arg(callbacks)
      .arg(batch_size)
      .toUtf8();
}

void put(const QString& path, const QByteArray& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
  f.write(bytes);
}

QByteArray contents(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(missing)");
}

QStringList entries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot,
                             QDir::Name);
}

QProcessEnvironment environment() {
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  return e;
}

// Starts fitbench-cli run and waits until its standard output holds `text`.
bool start_until(QProcess& p, const QStringList& args, const QString& text) {
  p.setProcessEnvironment(environment());
  p.setProcessChannelMode(QProcess::ForwardedErrorChannel);
  p.start(FITBENCH_CLI, args);
  if (!p.waitForStarted(30000)) return false;
  QByteArray out;
  while (!out.contains(text.toUtf8())) {
    if (!p.waitForReadyRead(120000)) return false;
    out += p.readAllStandardOutput();
  }
  return true;
}

void kill9(QProcess& p) {
  ::kill(static_cast<pid_t>(p.processId()), SIGKILL);
  p.waitForFinished(30000);
}

}  // namespace

class TestCliOutputs : public QObject {
  Q_OBJECT

 private slots:
  // Ten kills at random moments of a run that writes a checkpoint of about 5 MB every epoch:
  // the folder never holds anything but the experiment and the checkpoint, and the checkpoint
  // is always a whole model file. A kill in the microseconds between naming a checkpoint and
  // renaming it over the old one leaves one `.ck.json.tmp-*`, which the next run's first
  // checkpoint removes: there is never more than one.
  void killDuringCheckpointsLeavesNoDebris() {
    QTemporaryDir dir;
    const QString exp = dir.filePath("wide.json");
    put(exp, experiment(64, 600, 100000,
                        R"({"class_name": "ModelCheckpoint", "config": {"filepath": "ck.json"}})"));
    for (int k = 0; k < 10; ++k) {
      QProcess p;
      p.setWorkingDirectory(dir.path());
      QVERIFY(start_until(p, {"run", exp}, "Epoch 2/"));
      QTest::qWait(QRandomGenerator::global()->bounded(50, 400));
      kill9(p);
      QStringList found = entries(dir.path());
      const QStringList stale =
          found.filter(QRegularExpression("^\\.ck\\.json\\.tmp-[0-9a-f]{16}$"));
      QVERIFY2(stale.size() <= 1, qPrintable(stale.join(", ")));
      for (const QString& name : stale) found.removeOne(name);
      QCOMPARE(found, (QStringList{"ck.json", "wide.json"}));
      const QJsonDocument doc = QJsonDocument::fromJson(contents(dir.filePath("ck.json")));
      QVERIFY2(doc.isObject() && doc.object().contains("weights"),
               qPrintable(QString("kill %1 left a partial checkpoint").arg(k + 1)));
    }
  }

  // Killed during its first epoch, a run with CSVLogger(append=False) leaves the old log as it
  // was (Keras would already have emptied it); run to its end, the log holds the new rows only.
  void csvLoggerKeepsTheOldLogUntilItHasARow() {
    QTemporaryDir dir;
    const QString log = dir.filePath("log.csv");
    const QByteArray old = "epoch,accuracy,loss\r\n0,0.5,0.69\r\n1,0.75,0.5\r\n";
    put(log, old);
    const QString logger =
        QString(R"({"class_name": "CSVLogger", "config": {"filename": "%1"}})").arg(log);
    const QString slow = dir.filePath("slow.json");
    // 400,000 steps of a 64-unit model: seconds, where the kill follows "Epoch 1/" at once.
    put(slow, experiment(400000, 64, 3, logger, 1));
    QProcess p;
    QVERIFY(start_until(p, {"run", slow}, "Epoch 1/"));
    kill9(p);
    QCOMPARE(contents(log), old);

    const QString quick = dir.filePath("quick.json");
    put(quick, experiment(64, 8, 3, logger));
    QProcess q;
    q.setProcessEnvironment(environment());
    q.start(FITBENCH_CLI, {"run", quick});
    QVERIFY(q.waitForFinished(120000));
    QCOMPARE(q.exitCode(), 0);
    const QList<QByteArray> rows = contents(log).split('\n');
    QCOMPARE(rows.size(), 5);  // the header, 3 epochs, the empty rest after the last \r\n
    QVERIFY2(rows[0].startsWith("epoch,accuracy,loss"), rows[0].constData());
    QVERIFY(rows[1].startsWith("0,") && rows[3].startsWith("2,"));
    QCOMPARE(entries(dir.path()), (QStringList{"log.csv", "quick.json", "slow.json"}));
  }

  // The files of a finished run are all its own: history, model and trace written over old ones.
  void aRunReplacesItsFilesTogether() {
    QTemporaryDir dir;
    const QString exp = dir.filePath("small.json");
    put(exp, experiment(64, 8, 2, ""));
    for (const char* name : {"h.json", "m.json", "t.json"}) put(dir.filePath(name), "old\n");
    QProcess p;
    p.setProcessEnvironment(environment());
    p.start(FITBENCH_CLI, {"run", exp, "--devices", "2", "--strategy", "data_parallel", "--history",
                           dir.filePath("h.json"), "--save-model", dir.filePath("m.json"),
                           "--trace", dir.filePath("t.json")});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    for (const char* name : {"h.json", "m.json", "t.json"})
      QVERIFY2(QJsonDocument::fromJson(contents(dir.filePath(name))).isObject(), name);
    QCOMPARE(entries(dir.path()), (QStringList{"h.json", "m.json", "small.json", "t.json"}));
  }

  // --events -: standard output is the event stream alone, every line an event, the Keras text
  // inside it as text events; with --events FILE the Keras text is on standard output too, the
  // same lines, and the file holds the same kinds of event.
  // SIGUSR1 stops a run after its batch, as the window's Stop does: the History and model of
  // the epochs run are written, exit 0.
  void stopSignalKeepsTheFiles() {
    QTemporaryDir dir;
    const QString exp = dir.filePath("long.json");
    put(exp, experiment(64, 8, 1000000, ""));
    QProcess p;
    QVERIFY(start_until(
        p,
        {"run", exp, "--history", dir.filePath("h.json"), "--save-model", dir.filePath("m.json")},
        "Epoch 30/"));
    QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGUSR1), 0);
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 0);
    const QJsonObject history = QJsonDocument::fromJson(contents(dir.filePath("h.json"))).object();
    const int epochs = int(history["epoch"].toArray().size());
    QVERIFY2(epochs >= 30 && epochs < 1000000, qPrintable(QString::number(epochs)));
    QVERIFY(QJsonDocument::fromJson(contents(dir.filePath("m.json"))).isObject());
  }

  void eventsStreamTheRun() {
    QTemporaryDir dir;
    const QString exp = dir.filePath("small.json");
    put(exp, experiment(64, 8, 2, ""));
    const QStringList run = {"run", exp, "--devices", "2", "--strategy", "data_parallel"};
    QProcess p;
    p.setProcessEnvironment(environment());
    p.start(FITBENCH_CLI, run + QStringList{"--events", "-"});
    QVERIFY(p.waitForFinished(120000));
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    const QList<QByteArray> lines = p.readAllStandardOutput().split('\n');
    QCOMPARE(lines.last(), QByteArray());  // every line ends
    QStringList kinds, texts;
    for (const QByteArray& line : lines.mid(0, lines.size() - 1)) {
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      QVERIFY2(!o.isEmpty(), line.constData());
      kinds << o["event"].toString();
      if (o["event"] == "text") texts << o["text"].toString();
    }
    QCOMPARE(kinds.first(), QString("begin"));
    QCOMPARE(kinds.last(), QString("end"));
    QCOMPARE(kinds.count("epoch"), 2);
    QCOMPARE(kinds.count("batch"), 8);  // 64 rows in batches of 16, twice
    QCOMPARE(kinds.count("step"), 8);
    QCOMPARE(texts.first(), QString("Devices: ['cpu:0', 'cpu:1']"));
    QVERIFY(texts.last().startsWith("Final accuracy: "));

    QProcess f;
    f.setProcessEnvironment(environment());
    const QString events = dir.filePath("events.jsonl");
    f.start(FITBENCH_CLI, run + QStringList{"--events", events});
    QVERIFY(f.waitForFinished(120000));
    QVERIFY2(f.exitCode() == 0, f.readAllStandardError().constData());
    const QString out = QString::fromUtf8(f.readAllStandardOutput());
    QStringList file_texts, file_kinds;
    for (const QByteArray& line : contents(events).split('\n')) {
      if (line.isEmpty()) continue;
      const QJsonObject o = QJsonDocument::fromJson(line).object();
      file_kinds << o["event"].toString();
      if (o["event"] == "text") file_texts << o["text"].toString();
    }
    QCOMPARE(file_texts.join('\n') + '\n', out);
    QCOMPARE(file_kinds.size(), kinds.size());
  }

  // A bad --events is refused before training, at the option; a full standard output fails the
  // run with a sentence; a device takes the stream.
  void badEventsAreSaid() {
    QTemporaryDir dir;
    const QString exp = dir.filePath("small.json");
    put(exp, experiment(64, 8, 2, ""));
    const auto run = [&](const QStringList& extra, const QString& out_file = {}) {
      QProcess p;
      p.setProcessEnvironment(environment());
      if (!out_file.isEmpty()) p.setStandardOutputFile(out_file);
      p.start(FITBENCH_CLI, QStringList{"run", exp} + extra);
      p.waitForFinished(120000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardError()));
    };
    auto [code, err] = run({"--events", ""});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("--events: needs a file name, or - for standard output"),
             qPrintable(err));
    std::tie(code, err) = run({"--events", exp});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("--events: " + exp + " is the experiment file"), qPrintable(err));
    std::tie(code, err) = run({"--events", dir.filePath("no/such/folder/e.jsonl")});
    QCOMPARE(code, 2);
    QVERIFY2(err.contains("cannot be written: No such file or directory"), qPrintable(err));
    // A stream goes to a device (or a FIFO) as well as to a file.
    std::tie(code, err) = run({"--events", "/dev/null"});
    QVERIFY2(code == 0, qPrintable(err));
    std::tie(code, err) = run({"--events", "-"}, "/dev/full");
    QCOMPARE(code, 1);
    QVERIFY2(err.contains("--events: standard output: the run's events could not all be written"),
             qPrintable(err));
  }
};

QTEST_GUILESS_MAIN(TestCliOutputs)
#include "tst_cli_outputs.moc"
