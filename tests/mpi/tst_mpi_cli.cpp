// fitbench-cli run under mpirun as a user starts it (ctest mpi/*; each mpirun under --timeout):
// the seed command prints the 2-thread run's lines, every DataParallel and ModelParallel example
// on 2 and 4 processes writes the threaded run's History and model file byte for byte, rank 0
// alone writes files, and one trace of every device on one clock, a mesh whose rows cannot stay
// inside processes is refused, a mismatch between ranks is named, a killed rank ends the job within
// 10 s naming it, and SIGINT to mpirun stops every rank.
#include <signal.h>

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "core/base/sanitized.h"

namespace {

struct Result {
  int code;
  QString out, err;
};

QStringList mpirun_args(int processes) {
  return {"--oversubscribe", "--timeout", "120", "-np", QString::number(processes)};
}

void clean_environment(QProcess& p) {
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  e.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
  e.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  p.setProcessEnvironment(e);
}

Result run(const QString& program, const QStringList& args) {
  QProcess p;
  clean_environment(p);
  p.start(program, args);
  p.waitForFinished(180000);
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

Result cli(const QStringList& args) { return run(FITBENCH_CLI, args); }

Result mpi(int processes, const QStringList& args) {
  return run(FITBENCH_MPIRUN, mpirun_args(processes) + QStringList{FITBENCH_CLI} + args);
}

QString example(const QString& name) {
  return QString(FITBENCH_SOURCE_DIR "/resources/examples/") + name;
}

QByteArray read_file(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Keras's text without its timing fields ("- 0s - 12us/step").
QString without_timing(QString text) {
  return text.replace(QRegularExpression(" - \\d+m?s - [\\d.]+[mu]?s/step"), " - T");
}

}  // namespace

class TestMpiCli : public QObject {
  Q_OBJECT
 private slots:
  void seed_prints_the_two_thread_lines();
  void examples_equal_threads_data();
  void examples_equal_threads();
  void trace_holds_every_device_data();
  void trace_holds_every_device();
  void events_come_from_rank_0();
  void mismatched_ranks_are_named();
  void mesh_rows_span_processes();
  void uneven_mesh_is_refused();
  void no_distribution_runs_whole_everywhere();
  void examples_without_distribution_equal_one_process_data();
  void examples_without_distribution_equal_one_process();
  void crowded_process_is_warned();
  void other_commands_refuse_processes();
  void killed_rank_ends_the_job();
  void sigint_stops_every_rank();
  void sigusr1_stops_with_files();
};

void TestMpiCli::seed_prints_the_two_thread_lines() {
  const Result threads = cli({"run", example("seed.json"), "--devices", "2"});
  const Result processes = mpi(2, {"run", example("seed.json")});
  QCOMPARE(threads.code, 0);
  QCOMPARE(processes.code, 0);
  QVERIFY(processes.out.startsWith("Devices: ['cpu:0', 'cpu:1']\nDistribution: DataParallel\n"));
  QCOMPARE(without_timing(processes.out), without_timing(threads.out));
  // Rank 0 says every device's share, once each, as the threaded run does; the other rank says
  // nothing.
  const QRegularExpression usage(
      "^(cpu:\\d+)  busy [\\d.]+%  communication [\\d.]+%  idle [\\d.]+%$",
      QRegularExpression::MultilineOption);
  auto devices_said = [&](const QString& err) {
    QStringList names;
    for (auto it = usage.globalMatch(err); it.hasNext();) names << it.next().captured(1);
    return names;
  };
  QCOMPARE(devices_said(processes.err), QStringList({"cpu:0", "cpu:1"}));
  QCOMPARE(devices_said(threads.err), devices_said(processes.err));
  QCOMPARE(processes.err.count('\n'), 2);
}

void TestMpiCli::examples_equal_threads_data() {
  QTest::addColumn<QString>("experiment");
  QTest::addColumn<int>("processes");
  QTest::addColumn<int>("devices");
  QTest::addColumn<QStringList>("options");
  QTest::newRow("seed, 2 processes") << "seed.json" << 2 << 2 << QStringList();
  QTest::newRow("seed, 4 processes") << "seed.json" << 4 << 4 << QStringList();
  QTest::newRow("one_vs_data_parallel, 2 x 2")
      << "one_vs_data_parallel.json" << 2 << 4 << QStringList();
  QTest::newRow("ring_vs_naive, 2 x 2") << "ring_vs_naive.json" << 2 << 4 << QStringList();
  QTest::newRow("uneven_shards, 3 x 1") << "uneven_shards.json" << 3 << 3 << QStringList();
  // ModelParallel: each process hosts whole mesh rows (a 2 x 2 and a 2 x 4 mesh), or each mesh
  // row spans two processes (a 2 x 2 mesh on 4).
  QTest::newRow("model_parallel_2x2, 2 x 2")
      << "model_parallel_2x2.json" << 2 << 4 << QStringList();
  QTest::newRow("model_parallel_2x2, 4 x 1, rows across processes")
      << "model_parallel_2x2.json" << 4 << 4 << QStringList();
#ifndef FITBENCH_SANITIZED
  // Under the sanitizers the rows above run the same code on 2, 3 and 4 processes; these add
  // minutes there (4 processes on 2 cores, a straggler's sleeps, 8 devices, images), CI's time
  // (scripts/test.sh).
  QTest::newRow("one_vs_data_parallel, 4 x 1")
      << "one_vs_data_parallel.json" << 4 << 4 << QStringList();
  QTest::newRow("ring_vs_naive, 4 x 1") << "ring_vs_naive.json" << 4 << 4 << QStringList();
  QTest::newRow("straggler, 2 x 1") << "straggler.json" << 2 << 2 << QStringList();
  QTest::newRow("capacity_model_parallel, 2 x 4")
      << "capacity_model_parallel.json" << 2 << 8 << QStringList();
  // BatchNormalization's global statistics summed across processes, and per device with cpu:0's
  // moving statistics broadcast (one epoch of the lesson: 6,000 images on 8 devices).
  QTest::newRow("batch_norm_statistics, 2 x 4")
      << "batch_norm_statistics.json" << 2 << 8 << QStringList{"--epochs", "1"};
  QTest::newRow("batch_norm_statistics per device, 2 x 4")
      << "batch_norm_statistics.json" << 2 << 8
      << QStringList{"--epochs", "1", "--batch-norm-statistics", "per_device"};
#endif
}

void TestMpiCli::examples_equal_threads() {
  QFETCH(QString, experiment);
  QFETCH(int, processes);
  QFETCH(int, devices);
  QFETCH(QStringList, options);
  QTemporaryDir dir;
  const QString th = dir.filePath("threads.json"), tm = dir.filePath("threads-model.json");
  const QString ph = dir.filePath("processes.json"), pm = dir.filePath("processes-model.json");
  const QString n = QString::number(devices);
  const Result threads = cli(QStringList{"run", example(experiment), "--devices", n, "--verbose",
                                         "0", "--history", th, "--save-model", tm} +
                             options);
  QCOMPARE(threads.code, 0);
  // The devices come from the experiment's devices.count, spread over the processes.
  const Result across = mpi(processes, QStringList{"run", example(experiment), "--verbose", "0",
                                                   "--history", ph, "--save-model", pm} +
                                           options);
  QVERIFY2(across.code == 0, qPrintable(across.err));
  QCOMPARE(read_file(ph), read_file(th));
  // The weights and the optimizer's state, bit for bit (ring_vs_naive shards the update).
  QCOMPARE(read_file(pm), read_file(tm));
  // Rank 0 alone wrote, and only the files asked for.
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 4);
  // --verbose: each process says its devices and rows.
  const Result placed =
      mpi(processes, {"run", example(experiment), "--epochs", "1", "--verbose", "0"});
  QCOMPARE(placed.code, 0);
  for (int p = 0; p < processes; ++p)
    QVERIFY2(placed.err.contains(QString("process %1 of %2 on ").arg(p).arg(processes)),
             qPrintable(placed.err));
}

// A trace's work spans ("X" events other than waiting), per device: "step name rows" in time
// order. (Not their bytes: a collective across processes counts what crosses between them,
// shared by the process's devices, not a ring among all devices.)
QMap<int, QStringList> work_spans(const QJsonArray& events) {
  QMap<int, QList<QPair<double, QString>>> timed;
  for (const QJsonValue& v : events) {
    const QJsonObject e = v.toObject();
    if (e["ph"].toString() != "X" || e["cat"].toString() == "waiting") continue;
    const QJsonObject a = e["args"].toObject();
    timed[e["pid"].toInt()].append({e["ts"].toDouble(), QString("%1 %2 %3")
                                                            .arg(a["step"].toInteger())
                                                            .arg(e["name"].toString())
                                                            .arg(a["rows"].toInteger())});
  }
  QMap<int, QStringList> out;
  for (auto it = timed.begin(); it != timed.end(); ++it) {
    std::stable_sort(it->begin(), it->end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [ts, text] : *it) out[it.key()] << text;
  }
  return out;
}

void TestMpiCli::trace_holds_every_device_data() {
  QTest::addColumn<QString>("experiment");
  QTest::addColumn<int>("processes");
  QTest::addColumn<int>("devices");
  QTest::addColumn<bool>("one_all_reduce");  // a step's all-reduces are the gradients' alone
  QTest::newRow("seed, 2 processes") << "seed.json" << 2 << 2 << true;
  QTest::newRow("one_vs_data_parallel, 2 x 2") << "one_vs_data_parallel.json" << 2 << 4 << true;
  // A mesh row's all-reduces of input gradients are its own, at its own moments.
  QTest::newRow("model_parallel_2x2, 2 x 2") << "model_parallel_2x2.json" << 2 << 4 << false;
  QTest::newRow("model_parallel_2x2, 4 x 1, rows across processes")
      << "model_parallel_2x2.json" << 4 << 4 << false;
}

// One trace for the job: every device of every process, the same spans as the threaded run's,
// on one clock (each step's all-reduce overlaps on every device).
void TestMpiCli::trace_holds_every_device() {
  QFETCH(QString, experiment);
  QFETCH(int, processes);
  QFETCH(int, devices);
  QFETCH(bool, one_all_reduce);
  QTemporaryDir dir;
  const QString tt = dir.filePath("threads-trace.json"), pt = dir.filePath("processes-trace.json");
  QCOMPARE(cli({"run", example(experiment), "--devices", QString::number(devices), "--epochs", "2",
                "--verbose", "0", "--trace", tt})
               .code,
           0);
  const Result across = mpi(
      processes, {"run", example(experiment), "--epochs", "2", "--verbose", "0", "--trace", pt});
  QVERIFY2(across.code == 0, qPrintable(across.err));
  const QJsonObject threads = QJsonDocument::fromJson(read_file(tt)).object();
  const QJsonObject job = QJsonDocument::fromJson(read_file(pt)).object();
  QCOMPARE(job["otherData"].toObject()["devices"].toInt(), devices);
  QCOMPARE(job["otherData"].toObject()["steps"], threads["otherData"].toObject()["steps"]);
  QStringList names;
  for (const QJsonValue& v : job["traceEvents"].toArray())
    if (v.toObject()["name"].toString() == "process_name")
      names << v.toObject()["args"].toObject()["name"].toString();
  QStringList expected;
  for (int d = 0; d < devices; ++d) expected << QString("cpu:%1").arg(d);
  QCOMPARE(names, expected);
  const QMap<int, QStringList> mine = work_spans(job["traceEvents"].toArray());
  QCOMPARE(mine.keys().size(), devices);
  QCOMPARE(mine, work_spans(threads["traceEvents"].toArray()));
  if (!one_all_reduce) return;
  // One clock: in every step, every device is inside the all-reduce at one moment (1 ms for how
  // closely the processes' clocks are put together).
  QMap<qint64, QPair<double, double>> overlap;  // step -> latest begin, earliest end
  for (const QJsonValue& v : job["traceEvents"].toArray()) {
    const QJsonObject e = v.toObject();
    if (e["name"].toString() != "all_reduce") continue;
    const qint64 step = e["args"].toObject()["step"].toInteger();
    QVERIFY(e["args"].toObject()["bytes_sent"].toInteger() > 0);
    const double begin = e["ts"].toDouble(), end = begin + e["dur"].toDouble();
    auto it = overlap.find(step);
    if (it == overlap.end())
      overlap.insert(step, {begin, end});
    else
      *it = {std::max(it->first, begin), std::min(it->second, end)};
  }
  QVERIFY(!overlap.isEmpty());
  for (auto it = overlap.begin(); it != overlap.end(); ++it)
    QVERIFY2(it->first <= it->second + 1000.0,
             qPrintable(QString("step %1: the last device enters the all-reduce at %2 us, the "
                                "first leaves it at %3 us")
                            .arg(it.key())
                            .arg(it->first)
                            .arg(it->second)));
}

// --events - under mpirun: rank 0's stream alone on standard output, every line an event; the
// begin event counts the processes and the job's devices, a step event holds rank 0's devices,
// the end event every device's usage.
void TestMpiCli::events_come_from_rank_0() {
  const Result r =
      mpi(2, {"run", example("one_vs_data_parallel.json"), "--epochs", "1", "--events", "-"});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  QStringList kinds;
  for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts)) {
    const QJsonObject o = QJsonDocument::fromJson(line.toUtf8()).object();
    QVERIFY2(!o.isEmpty(), qPrintable(line));
    const QString kind = o["event"].toString();
    kinds << kind;
    if (kind == "begin") {
      QCOMPARE(o["processes"].toInt(), 2);
      QCOMPARE(o["devices"].toInt(), 4);
    } else if (kind == "step") {
      QCOMPARE(o["spans"].toArray().size(), 2);
    } else if (kind == "end") {
      QCOMPARE(o["usage"].toArray().size(), 4);
    }
  }
  QCOMPARE(kinds.first(), QString("begin"));
  QCOMPARE(kinds.last(), QString("end"));
  QCOMPARE(kinds.count("begin"), 1);
  QCOMPARE(kinds.count("epoch"), 1);
  QVERIFY(kinds.count("step") > 0);
}

// A 2 x 2 mesh on 4 processes: each mesh row spans two processes, each process says its device
// and its row's rows.
void TestMpiCli::mesh_rows_span_processes() {
  const Result r =
      mpi(4, {"run", example("model_parallel_2x2.json"), "--epochs", "1", "--verbose", "0"});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  for (int p = 0; p < 4; ++p)
    QVERIFY2(QRegularExpression(QString("process %1 of 4 on .*: devices cpu:%1; rows %2 of every "
                                        "batch of 32")
                                    .arg(p)
                                    .arg(p < 2 ? "0-15" : "16-31"))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
}

// A 2 x 3 mesh on 3 processes of 2 devices would split each mesh row 2 and 1: every rank stops
// and rank 0 says why.
void TestMpiCli::uneven_mesh_is_refused() {
  QTemporaryDir dir;
  QJsonObject e = QJsonDocument::fromJson(read_file(example("model_parallel_2x2.json"))).object();
  QJsonObject d = e["distribution"].toObject(), mesh = d["mesh"].toObject();
  mesh["shape"] = QJsonArray{2, 3};
  d["mesh"] = mesh;
  e["distribution"] = d;
  e["devices"] = QJsonObject{{"type", "cpu"}, {"count", 6}};
  QJsonObject model = e["model"].toObject(), config = model["config"].toObject();
  QJsonArray layers = config["layers"].toArray();
  for (int i : {1, 2}) {
    QJsonObject layer = layers[i].toObject(), c = layer["config"].toObject();
    c["units"] = 12;  // split 3 ways
    layer["config"] = c;
    layers[i] = layer;
  }
  config["layers"] = layers;
  model["config"] = config;
  e["model"] = model;
  const QString path = dir.filePath("mesh_2x3.json");
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(QJsonDocument(e).toJson());
  f.close();
  const Result r = mpi(3, {"run", path, "--verbose", "0"});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("mesh_2x3.json: distribution.mesh: the mesh's 2 x 3 devices (batch x "
                          "model) place batch group 0 on cpu:0, cpu:1, cpu:2 unevenly over "
                          "processes 0 to 1 (2 and 1 devices)"),
           qPrintable(r.err));
  QVERIFY(r.out.isEmpty());
}

// Without a distribution every process trains the whole run on a device of its own (rank 0
// speaks), and --verbose says so rather than listing a share.
void TestMpiCli::no_distribution_runs_whole_everywhere() {
  const Result r = mpi(2, {"run", example("xor.json"), "--epochs", "1", "--verbose", "0"});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  QVERIFY(r.out.contains("Final accuracy: "));
  QVERIFY2(r.err.contains("note: the experiment has no distribution, so each of the 2 processes "
                          "trains the whole model on one device"),
           qPrintable(r.err));
  for (int p = 0; p < 2; ++p)
    QVERIFY2(QRegularExpression(QString("process %1 of 2 on .*: the whole run on a device of its "
                                        "own, every row of every batch of 16 \\(the experiment "
                                        "has no distribution\\)")
                                    .arg(p))
                 .match(r.err)
                 .hasMatch(),
             qPrintable(r.err));
}

void TestMpiCli::examples_without_distribution_equal_one_process_data() {
  QTest::addColumn<QString>("experiment");
  // The examples with a distribution are in examples_equal_threads.
  for (const char* e :
       {"blobs.json", "overfitting_early_stopping.json", "regression.json", "spiral.json",
        "spiral_lr_sweep.json", "xor.json", "image_folder_shapes.json"})
    QTest::newRow(e) << QString(e);
#ifndef FITBENCH_SANITIZED
  // 60,000 images in every process; minutes under the sanitizers.
  for (const char* e : {"fashion_mnist_mlp.json", "fashion_mnist_cnn.json"})
    QTest::newRow(e) << QString(e);
#endif
}

// Every example without a distribution under mpirun -np 2: each process trains the whole run,
// and rank 0 writes the History of one process's run, value for value (one epoch each).
void TestMpiCli::examples_without_distribution_equal_one_process() {
  QFETCH(QString, experiment);
  QTemporaryDir dir;
  const QString one = dir.filePath("one.json"), two = dir.filePath("two.json");
  const QStringList args{"run", example(experiment), "--epochs", "1", "--verbose",
                         "0",   "--history"};
  const Result alone = cli(args + QStringList{one});
  QVERIFY2(alone.code == 0, qPrintable(alone.err));
  const Result across = mpi(2, args + QStringList{two});
  QVERIFY2(across.code == 0, qPrintable(across.err));
  QVERIFY(!read_file(one).isEmpty());
  QCOMPARE(read_file(two), read_file(one));
  QCOMPARE(across.out, alone.out);
}

// A process bound to one core that hosts 2 devices is told how to give it more; unbound, not.
void TestMpiCli::crowded_process_is_warned() {
  const QStringList run_args{
      FITBENCH_CLI, "run", example("one_vs_data_parallel.json"), "--epochs", "1", "--verbose", "0"};
  const Result bound =
      run(FITBENCH_MPIRUN, mpirun_args(2) + QStringList{"--bind-to", "core"} + run_args);
  QVERIFY2(bound.code == 0, qPrintable(bound.err));
  QVERIFY2(bound.err.contains("warning: process 0 may run on 1 CPU (its binding) but hosts 2 "
                              "devices") &&
               bound.err.contains("--bind-to none"),
           qPrintable(bound.err));
  const Result unbound =
      run(FITBENCH_MPIRUN, mpirun_args(2) + QStringList{"--bind-to", "none"} + run_args);
  QVERIFY2(unbound.code == 0, qPrintable(unbound.err));
  QVERIFY2(!unbound.err.contains("warning: process"), qPrintable(unbound.err));
}

void TestMpiCli::mismatched_ranks_are_named() {
  const Result r =
      run(FITBENCH_MPIRUN, {"--oversubscribe", "--timeout", "60", "-np", "1", FITBENCH_CLI, "run",
                            example("seed.json"), ":", "-np", "1", FITBENCH_CLI, "run",
                            example("seed.json"), "--epochs", "3"});
  QVERIFY(r.code != 0);
  QVERIFY2(r.err.contains("fitbench-cli: rank 1 differs from rank 0 in the options; every "
                          "process must run the same fitbench build"),
           qPrintable(r.err));
  QCOMPARE(r.err.count("differs from rank 0"), 1);  // said once, by rank 0
  QVERIFY(r.out.isEmpty());
}

void TestMpiCli::other_commands_refuse_processes() {
  QTemporaryDir dir;
  const Result r =
      mpi(2, {"export", example("seed.json"), "--format", "python", "-o", dir.filePath("seed.py")});
  QVERIFY(r.code != 0);
  QCOMPARE(r.err.count("fitbench-cli: export runs in one process; start it without mpirun (only "
                       "run spreads over processes)"),
           1);
  QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());
}

// Starts a seed run of a million epochs on 2 processes, writing a History into `dir` at its end,
// and returns what the processes said once both said which devices they hold (with --verbose:
// their pids too), after half a second of training.
QString start_long_run(QProcess& p, const QTemporaryDir& dir) {
  clean_environment(p);
  p.start(FITBENCH_MPIRUN, mpirun_args(2) + QStringList{FITBENCH_CLI, "run", example("seed.json"),
                                                        "--epochs", "1000000", "--verbose", "0",
                                                        "--history", dir.filePath("h.json")});
  QString err;
  for (int i = 0; i < 200 && err.count("fitbench-cli: process") < 2; ++i) {
    p.waitForReadyRead(100);
    err += QString::fromUtf8(p.readAllStandardError());
  }
  QTest::qWait(500);
  return err;
}

// Waits for the job to end after a signal: within 10 s, not successfully, no file written.
void ends_within_10s(QProcess& p, const QTemporaryDir& dir, QString& err) {
  QElapsedTimer t;
  t.start();
  QVERIFY(p.waitForFinished(10000));
  QVERIFY(t.elapsed() < 10000);
  err += QString::fromUtf8(p.readAllStandardError());
  QVERIFY(p.exitCode() != 0 || p.exitStatus() != QProcess::NormalExit);
  QVERIFY(QDir(dir.path()).entryList(QDir::Files).isEmpty());  // no half-written history
}

void TestMpiCli::killed_rank_ends_the_job() {
  QTemporaryDir dir;
  QProcess p;
  QString err = start_long_run(p, dir);
  const QRegularExpressionMatch m =
      QRegularExpression("process 1 of 2 on \\S+ \\(local rank \\d+, pid (\\d+)\\)").match(err);
  QVERIFY2(m.hasMatch(), qPrintable(err));
  QCOMPARE(::kill(m.captured(1).toInt(), SIGKILL), 0);
  ends_within_10s(p, dir, err);
  QVERIFY2(err.contains("rank 1"), qPrintable(err));  // Open MPI names the rank that died
  // Rank 0 says what happened (after SIGINT to mpirun it does too, but mpirun may have stopped
  // passing on its output by then, so only this case is held to it).
  QVERIFY2(err.contains("fitbench-cli: rank 0: the job was ended by mpirun (another rank died or "
                        "failed, or it was interrupted) before the run ended; no output file was "
                        "written"),
           qPrintable(err));
}

void TestMpiCli::sigint_stops_every_rank() {
  QTemporaryDir dir;
  QProcess p;
  QString err = start_long_run(p, dir);
  QCOMPARE(err.count("fitbench-cli: process"), 2);
  QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGINT), 0);
  ends_within_10s(p, dir, err);
}

// SIGUSR1 to mpirun (the window's Stop): every rank stops after the same batch, rank 0 writes
// the History and model of the epochs run, and the events end with "stopped".
void TestMpiCli::sigusr1_stops_with_files() {
  QTemporaryDir dir;
  QProcess p;
  clean_environment(p);
  p.start(FITBENCH_MPIRUN, mpirun_args(2) + QStringList{FITBENCH_CLI, "run", example("seed.json"),
                                                        "--epochs", "1000000", "--events", "-",
                                                        "--history", dir.filePath("h.json"),
                                                        "--save-model", dir.filePath("m.json")});
  // Up to a minute (not a count of reads: a slow build's stream comes in many small reads).
  QByteArray out;
  QElapsedTimer started;
  started.start();
  while (started.elapsed() < 60000 && out.count("\"event\":\"epoch\"") < 20) {
    p.waitForReadyRead(100);
    out += p.readAllStandardOutput();
  }
  QVERIFY2(out.count("\"event\":\"epoch\"") >= 20, out.right(400).constData());
  QCOMPARE(::kill(static_cast<pid_t>(p.processId()), SIGUSR1), 0);
  QElapsedTimer t;
  t.start();
  QVERIFY(p.waitForFinished(10000));
  QVERIFY(t.elapsed() < 10000);
  out += p.readAllStandardOutput();
  const QString err = QString::fromUtf8(p.readAllStandardError());
  QVERIFY2(p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0, qPrintable(err));
  const QList<QByteArray> lines = out.trimmed().split('\n');
  const QJsonObject end = QJsonDocument::fromJson(lines.last()).object();
  QCOMPARE(end["event"].toString(), QString("end"));
  QCOMPARE(end["stop_reason"].toString(), QString("stopped"));
  const int epochs = end["epochs_run"].toInt();
  QVERIFY(epochs >= 20 && epochs < 1000000);
  QCOMPARE(out.count("\"event\":\"epoch\""), epochs);
  // The files hold what was trained: one History row per epoch run, and the model.
  const QJsonObject history = QJsonDocument::fromJson(read_file(dir.filePath("h.json"))).object();
  QCOMPARE(history["epoch"].toArray().size(), epochs);
  QVERIFY(!QJsonDocument::fromJson(read_file(dir.filePath("m.json"))).isNull());
}

QTEST_GUILESS_MAIN(TestMpiCli)
#include "tst_mpi_cli.moc"
