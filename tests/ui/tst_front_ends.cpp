// The two front ends run the same plan: for every example, `fitbench-cli run X --history a.json`
// and `fitbench X --run --quit --history b.json` (offscreen) write the same History, value for
// value, and a distributed example's --trace files hold the same spans (device, kind, step,
// bytes, algorithm) in the same order; only their timings, measured on this machine, differ
// (and with them the waiting spans and the busy / communication / idle percentages, which both
// print per device in the same form).
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Ran {
  int code = -1;
  QString err;
};

Ran runProcess(const QString& program, const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.remove(QStringLiteral("FITBENCH_CPU_DEVICES"));
  env.remove(QStringLiteral("XLA_FLAGS"));
  p.setProcessEnvironment(env);
  p.setStandardOutputFile(QProcess::nullDevice());
  p.start(program, args);
  // Every example trains in seconds (the image lessons for one epoch, below); a hung front end
  // fails here instead of holding CI. Five minutes: a loaded CI machine runs two tests at once.
  if (!p.waitForFinished(300000)) {
    p.kill();
    p.waitForFinished();
    return {-1, QStringLiteral("timed out")};
  }
  return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1,
          QString::fromUtf8(p.readAllStandardError())};
}

QByteArray readAll(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// A trace's events without their timings. Waiting spans go too: whether a device arrives at a
// collective before the others is timing (two runs of the same front end differ there).
QJsonArray untimed(const QByteArray& trace) {
  const QJsonDocument doc = QJsonDocument::fromJson(trace);
  const QJsonArray events =
      doc.isObject() ? doc.object().value(QStringLiteral("traceEvents")).toArray() : doc.array();
  QJsonArray out;
  for (const QJsonValue& v : events) {
    QJsonObject e = v.toObject();
    if (e.value(QStringLiteral("cat")).toString() == QStringLiteral("waiting")) continue;
    e.remove(QStringLiteral("ts"));
    e.remove(QStringLiteral("dur"));
    QJsonObject args = e.value(QStringLiteral("args")).toObject();
    // Measured or injected waiting, in microseconds: timing, not structure.
    for (const QString& key : args.keys())
      if (key.endsWith(QStringLiteral("_us"))) args.remove(key);
    e.insert(QStringLiteral("args"), args);
    out.append(e);
  }
  return out;
}

}  // namespace

class TestFrontEnds : public QObject {
  Q_OBJECT
 private slots:
  void sameHistoryAndTrace_data() {
    QTest::addColumn<QString>("example");
    QTest::addColumn<bool>("distributed");
    const QDir dir(QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples"));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 11);
    for (const QString& f : files) {
      const QJsonObject doc = QJsonDocument::fromJson(readAll(dir.filePath(f))).object();
      const bool distributed = doc.value(QStringLiteral("distribution")).isObject();
      QTest::newRow(qPrintable(f)) << dir.filePath(f) << distributed;
    }
  }

  void sameHistoryAndTrace() {
    QFETCH(QString, example);
    QFETCH(bool, distributed);
    QTemporaryDir tmp;
    // The image lessons train on thousands of images for seconds to minutes (tst_examples runs
    // them whole): the front ends compare their first epoch, from a copy of the file that says
    // one.
    QJsonObject doc = QJsonDocument::fromJson(readAll(example)).object();
    if (doc.value(QStringLiteral("data")).toObject().value(QStringLiteral("dataset")).toString() ==
        QStringLiteral("fashion_mnist")) {
      QJsonObject fit = doc.value(QStringLiteral("fit")).toObject();
      fit.insert(QStringLiteral("epochs"), 1);
      doc.insert(QStringLiteral("fit"), fit);
      example = tmp.filePath(QFileInfo(example).fileName());
      QFile out(example);
      QVERIFY(out.open(QIODevice::WriteOnly));
      out.write(QJsonDocument(doc).toJson());
    }
    const QString a = tmp.filePath(QStringLiteral("a.json"));
    const QString b = tmp.filePath(QStringLiteral("b.json"));
    QStringList cliArgs{QStringLiteral("run"), example, QStringLiteral("--history"), a};
    QStringList guiArgs{example, QStringLiteral("--run"), QStringLiteral("--quit"),
                        QStringLiteral("--history"), b};
    const QString ta = tmp.filePath(QStringLiteral("a_trace.json"));
    const QString tb = tmp.filePath(QStringLiteral("b_trace.json"));
    if (distributed) {
      cliArgs << QStringLiteral("--trace") << ta;
      guiArgs << QStringLiteral("--trace") << tb;
    }
    const Ran cli = runProcess(QStringLiteral(FITBENCH_CLI), cliArgs);
    QVERIFY2(cli.code == 0, qPrintable(cli.err));
    const Ran gui = runProcess(QStringLiteral(FITBENCH_GUI), guiArgs);
    QVERIFY2(gui.code == 0, qPrintable(gui.err));

    const QByteArray historyA = readAll(a);
    QVERIFY(!historyA.isEmpty());
    QCOMPARE(readAll(b), historyA);
    if (distributed) {
      // Both print the per-device split last, one line per device in the same form; the
      // figures are each run's own measured time.
      static const QRegularExpression usage(
          QStringLiteral(R"(^cpu:(\d+)  busy \d+\.\d%  communication \d+\.\d%  idle \d+\.\d%$)"));
      const auto devicesIn = [](const QString& err) {
        QStringList devices;
        for (const QString& line : err.split(QLatin1Char('\n')))
          if (const auto m = usage.match(line); m.hasMatch()) devices << m.captured(1);
        return devices;
      };
      QVERIFY(!devicesIn(cli.err).isEmpty());
      QCOMPARE(devicesIn(gui.err), devicesIn(cli.err));
      const QJsonArray spansA = untimed(readAll(ta));
      QVERIFY(spansA.size() > 10);
      QCOMPARE(untimed(readAll(tb)), spansA);
    } else {
      QVERIFY(!QFile::exists(tb));
    }
  }

  // A window run with --trace on one device writes no trace and says why in its log; a bad
  // --history name is refused before the window opens, as fitbench-cli refuses it.
  void windowOutputOptions() {
    QTemporaryDir tmp;
    const Ran bad =
        runProcess(QStringLiteral(FITBENCH_GUI),
                   {QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples/xor.json"),
                    QStringLiteral("--run"), QStringLiteral("--quit"), QStringLiteral("--history"),
                    tmp.filePath(QStringLiteral("h.txt"))});
    QCOMPARE(bad.code, 2);
    QVERIFY2(bad.err.contains(QStringLiteral("--history: must name a .json or a .csv file")),
             qPrintable(bad.err));
    const Ran missing =
        runProcess(QStringLiteral(FITBENCH_GUI),
                   {QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples/xor.json"),
                    QStringLiteral("--quit"), QStringLiteral("--trace"),
                    tmp.filePath(QStringLiteral("no/such/t.json"))});
    QCOMPARE(missing.code, 2);
    QVERIFY2(missing.err.contains(QStringLiteral("--trace: ")), qPrintable(missing.err));
  }

  // A file named in Latin-1 exists but its name is not UTF-8, which Qt would read as "caf\ufffd"
  // and report missing: both programs refuse the argument instead, naming it, and a name in
  // UTF-8 is read.
  void nonUtf8ArgumentsAreRefused() {
    QTemporaryDir tmp;
    const QByteArray xor_json =
        readAll(QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples/xor.json"));
    QVERIFY(!xor_json.isEmpty());
    const QString latin1 = tmp.path() + QStringLiteral("/caf\\351.json");  // printf's octal
    // The shell writes the file under its Latin-1 name, passes that name to the program and
    // removes the file (QTemporaryDir cannot: Qt has no name for it).
    const auto ran = [&](const QString& program, const QString& command) {
      QFile utf8(tmp.filePath(QStringLiteral("café.json")));
      if (!utf8.open(QIODevice::WriteOnly) || utf8.write(xor_json) != xor_json.size())
        return Ran{-1, QStringLiteral("cannot write café.json")};
      utf8.close();
      const QString script = QStringLiteral(
                                 "name=$(printf '%1') && cp \"$2\" \"$name\" || exit 9; \"$1\" %2 "
                                 "\"$name\" --quit; status=$?; rm -f \"$name\"; exit $status")
                                 .arg(latin1, command);
      return runProcess(
          QStringLiteral("/bin/sh"),
          {QStringLiteral("-c"), script, QStringLiteral("sh"), program, utf8.fileName()});
    };
    const QString expected = QStringLiteral(
        ": argument %1 (\"%2/caf\\xe9.json\") is not UTF-8 text; fitbench takes "
        "file names and options in UTF-8, so a file named in another encoding "
        "must be renamed first (convmv converts names)\n");
    const Ran cli = ran(QStringLiteral(FITBENCH_CLI), QStringLiteral("summary"));
    QCOMPARE(cli.code, 2);
    QCOMPARE(cli.err, QStringLiteral("fitbench-cli") + expected.arg(2).arg(tmp.path()));
    const Ran gui = ran(QStringLiteral(FITBENCH_GUI), QString());
    QCOMPARE(gui.code, 2);
    QCOMPARE(gui.err, QStringLiteral("fitbench") + expected.arg(1).arg(tmp.path()));
    // The same file under its UTF-8 name.
    const Ran read =
        runProcess(QStringLiteral(FITBENCH_CLI),
                   {QStringLiteral("summary"), tmp.filePath(QStringLiteral("café.json"))});
    QVERIFY2(read.code == 0, qPrintable(read.err));
  }
};

QTEST_GUILESS_MAIN(TestFrontEnds)
#include "tst_front_ends.moc"
