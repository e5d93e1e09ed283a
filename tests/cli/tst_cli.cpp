// fitbench-cli as a user runs it: the seed example's output, history and model files, evaluate
// and predict, summary, devices, --help, and exit code 2 with one clear line for bad input; the
// rehearsal flags, the per-device summary and the Chrome trace file.
#include <sys/stat.h>

#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

namespace {

struct Result {
  int code;
  QString out, err;
};

Result cli(const QStringList& args, const QStringList& env = {}) {
  QProcess p;
  QProcessEnvironment e = QProcessEnvironment::systemEnvironment();
  e.remove("FITBENCH_CPU_DEVICES");
  e.remove("XLA_FLAGS");
  for (const QString& kv : env) e.insert(kv.section('=', 0, 0), kv.section('=', 1));
  p.setProcessEnvironment(e);
  p.start(FITBENCH_CLI, args);
  p.waitForFinished(120000);
  return {p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()),
          QString::fromUtf8(p.readAllStandardError())};
}

QString example(const char* name) {
  return QString(FITBENCH_SOURCE_DIR "/resources/examples/") + name;
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

void write(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

// Trains the seed example for one epoch and saves it as the model file `path`.
bool save_seed_model(const QString& path) {
  return cli({"run", example("seed.json"), "--epochs", "1", "--verbose", "0", "--save-model", path})
             .code == 0;
}

}  // namespace

class TestCli : public QObject {
  Q_OBJECT
 private slots:
  void seed_example_output();
  void full_disk_is_said();
  void history_and_model_files();
  void fashion_mnist();
  void evaluate_and_predict();
  void evaluate_reads_columns_as_trained();
  void summary();
  void devices();
  void help_on_every_command();
  void bad_input_exits_2();
  void output_files_are_checked_before_training();
  void nan_exits_1();
  void rehearsal_flags_and_trace();
  void rehearsal_flag_errors();
  void layout_map_entry_matching_nothing_warns();
  void single_unit_softmax_and_wrong_delimiter_are_said();
};

// Output to a full disk (/dev/full) ends with exit 1 and a sentence, never exit 0 in silence.
void TestCli::full_disk_is_said() {
  for (const QStringList& args :
       {QStringList{"devices"},
        QStringList{"run", QString(FITBENCH_SOURCE_DIR "/resources/examples/xor.json"), "--epochs",
                    "1"}}) {
    QProcess p;
    p.setStandardOutputFile("/dev/full");
    p.start(FITBENCH_CLI, args);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 1);
    QVERIFY2(QString::fromUtf8(p.readAllStandardError())
                 .contains("fitbench-cli: cannot write the output to standard output"),
             qPrintable(args.join(' ')));
  }
}

void TestCli::seed_example_output() {
  const Result r = cli({"run", example("seed.json")});
  QCOMPARE(r.code, 0);
  QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 11);
  QCOMPARE(lines.takeFirst(), QString("Devices: ['cpu:0']"));
  QCOMPARE(lines.takeFirst(), QString("Distribution: DataParallel"));
  const QRegularExpression epoch_line(
      R"(^8/8 - \d+s - \d+(us|ms|s)/step - accuracy: \d\.\d{4} - loss: \d\.\d{4}$)");
  for (int e = 0; e < 4; ++e) {
    QCOMPARE(lines[2 * e], QString("Epoch %1/4").arg(e + 1));
    QVERIFY2(epoch_line.match(lines[2 * e + 1]).hasMatch(), qPrintable(lines[2 * e + 1]));
  }
  QVERIFY(lines[8].startsWith("Final accuracy: "));
  // Keras 3 on JAX's initial weights and batch order give Keras's numbers: the values printed
  // by tests/reference/seed_keras_rules.py (an independent Python run of the same rules).
  const char* expected[4][2] = {
      {"0.7812", "0.4658"}, {"0.8672", "0.3968"}, {"0.9062", "0.3534"}, {"0.9453", "0.3234"}};
  for (int e = 0; e < 4; ++e) {
    QCOMPARE(lines[2 * e + 1].section("accuracy: ", 1).left(6), QString(expected[e][0]));
    QCOMPARE(lines[2 * e + 1].section("loss: ", 1).left(6), QString(expected[e][1]));
  }
  QCOMPARE(lines[8], QString("Final accuracy: 0.9453"));
  // The seed's own command line: two devices from XLA_FLAGS, DataParallel from the experiment,
  // the same numbers as one device.
  const Result two =
      cli({"run", example("seed.json")}, {"XLA_FLAGS=--xla_force_host_platform_device_count=2"});
  QCOMPARE(two.code, 0);
  QVERIFY(
      two.out.startsWith("Devices: ['cpu:0', 'cpu:1']\nDistribution: DataParallel\nEpoch 1/4\n"));
  QCOMPARE(two.out.section("Final", 1), r.out.section("Final", 1));
  const Result none = cli({"run", example("seed.json"), "--strategy", "none"});
  QVERIFY(none.out.startsWith("Epoch 1/4\n"));
  // Reruns are identical apart from timings.
  const Result again = cli({"run", example("seed.json")});
  QCOMPARE(again.out.section("Final", 1), r.out.section("Final", 1));
}

void TestCli::history_and_model_files() {
  QTemporaryDir dir;
  const QString hist = dir.filePath("h.json"), csv = dir.filePath("h.csv"),
                model = dir.filePath("m.json");
  Result r = cli({"run", example("xor.json"), "--epochs", "3", "--verbose", "0", "--history", hist,
                  "--save-model", model});
  QCOMPARE(r.code, 0);
  QFile f(hist);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QJsonObject doc = QJsonDocument::fromJson(f.readAll()).object();
  QCOMPARE(doc["epoch"].toArray().size(), 3);
  QCOMPARE(doc["history"].toObject()["loss"].toArray().size(), 3);
  QCOMPARE(doc["history"].toObject()["accuracy"].toArray().size(), 3);
  QCOMPARE(doc["params"].toObject()["epochs"].toInt(), 3);
  r = cli({"run", example("xor.json"), "--epochs", "2", "--verbose", "0", "--history", csv});
  QCOMPARE(r.code, 0);
  QFile c(csv);
  QVERIFY(c.open(QIODevice::ReadOnly));
  const QStringList rows = QString(c.readAll()).split('\n', Qt::SkipEmptyParts);
  QCOMPARE(rows.size(), 3);
  QCOMPARE(rows[0], QString("epoch,accuracy,loss"));
  // The extension in any case.
  const QString upper = QFileInfo(csv).dir().filePath("H.CSV");
  r = cli({"run", example("xor.json"), "--epochs", "1", "--verbose", "0", "--history", upper});
  QCOMPARE(r.code, 0);
  QVERIFY(readFile(upper).startsWith("epoch,accuracy,loss\n"));
  // Continuing from the saved weights starts where the first run ended: a lower first loss.
  r = cli({"run", example("xor.json"), "--epochs", "1", "--verbose", "2", "--load-weights", model});
  QCOMPARE(r.code, 0);
  const double first_fresh = doc["history"].toObject()["loss"].toArray().first().toDouble();
  const double continued = r.out.section("loss: ", 1).left(6).toDouble();
  QVERIFY2(continued < first_fresh, qPrintable(r.out));
  // The model file where an experiment belongs: said, not its keys listed.
  r = cli({"run", model});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("m.json: is a model file (\"format\": \"fitbench-model\"), not an "
                          "experiment"),
           qPrintable(r.err));
}

// Fashion-MNIST from Debian's package: an MLP learns it in two epochs on 3,000 images, validated
// on the 10,000 test images, alike on one device and on two DataParallel devices, and alike with
// the images flat (an input of 784) or as they come, (28, 28), through Flatten; a model whose
// input does not fit the images is told how they come.
void TestCli::fashion_mnist() {
  if (!QFileInfo::exists("/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz"))
    QSKIP("dataset-fashion-mnist is not installed (scripts/deps.sh installs it)");
  QTemporaryDir dir;
  const QByteArray experiment = R"({"seed": 1,
    "data": {"dataset": "fashion_mnist", "subset": 3000, "validation_data": "test"},
    "model": {"class_name": "Sequential", "config": {"name": "fm", "layers": [
      {"class_name": "InputLayer", "config": {"batch_shape": [null, INPUT]}},FLATTEN
      {"class_name": "Dense", "config": {"units": 64, "activation": "relu"}},
      {"class_name": "Dense", "config": {"units": 10, "activation": "softmax"}}]}},
    "compile": {"optimizer": "adam", "loss": "sparse_categorical_crossentropy",
                "metrics": ["accuracy"]},
    "fit": {"epochs": 2, "batch_size": 64, "verbose": 2}})";
  const QString file = dir.filePath("fm.json");
  const auto variant = [&](const char* input, bool flatten) {
    write(file,
          QByteArray(experiment)
              .replace("INPUT", input)
              .replace("FLATTEN", flatten ? R"({"class_name": "Flatten", "config": {}},)" : ""));
  };
  variant("784", false);
  const QString h1 = dir.filePath("h1.json"), h2 = dir.filePath("h2.json");
  Result r = cli({"run", file, "--history", h1});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  QVERIFY2(r.out.contains("47/47 - ") && r.out.contains("val_accuracy: "), qPrintable(r.out));
  const QJsonObject one = QJsonDocument::fromJson(readFile(h1)).object()["history"].toObject();
  QVERIFY2(one["val_accuracy"].toArray().last().toDouble() > 0.7, qPrintable(r.out));
  r = cli({"run", file, "--devices", "2", "--history", h2});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  const QJsonObject two = QJsonDocument::fromJson(readFile(h2)).object()["history"].toObject();
  for (const QString key : {"loss", "accuracy", "val_loss", "val_accuracy"})
    for (int e = 0; e < 2; ++e) {
      const double a = one[key].toArray()[e].toDouble(), b = two[key].toArray()[e].toDouble();
      QVERIFY2(std::abs(a - b) <= 1e-5 * std::abs(a),
               qPrintable(key + ": " + QString::number(a) + " vs " + QString::number(b)));
    }
  variant("28, 28", true);
  const QString h3 = dir.filePath("h3.json");
  r = cli({"run", file, "--history", h3});
  QVERIFY2(r.code == 0, qPrintable(r.err));
  QCOMPARE(QJsonDocument::fromJson(readFile(h3)).object()["history"].toObject(), one);
  variant("4", false);
  r = cli({"run", file});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("fm.json: data: the data has 784 feature columns but the model expects "
                          "4 (the images are 28 x 28 = 784 values each: give the model an "
                          "InputLayer of shape [28, 28] and a Flatten layer, or of shape [784])"),
           qPrintable(r.err));
  variant("28, 28", false);
  r = cli({"run", file});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("fm.json: model.config.layers[1]: this Dense layer receives (None, 28, "
                          "28): fitbench's Dense takes one axis of features, so add a Flatten "
                          "layer before it"),
           qPrintable(r.err));
  variant("14, 56", true);
  r = cli({"run", file});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("fm.json: data: the data's samples have shape (None, 28, 28) but the "
                          "model's input has shape (None, 14, 56); give the InputLayer the data's "
                          "shape, or one axis of all 784 values"),
           qPrintable(r.err));
}

void TestCli::evaluate_and_predict() {
  QTemporaryDir dir;
  const QString model = dir.filePath("m.json"), data = dir.filePath("d.csv");
  QCOMPARE(
      cli({"run", example("seed.json"), "--epochs", "20", "--verbose", "0", "--save-model", model})
          .code,
      0);
  write(data, "a,b,c,d,label\n1.5,0.2,-0.3,0.1,1\n-2.0,0.4,0.1,-0.2,0\n0.8,-1.0,0.5,0.3,1\n");
  Result r = cli({"evaluate", model, "--data", data, "--target", "label", "--verbose", "0"});
  QCOMPARE(r.code, 0);
  QVERIFY2(r.out.contains(QRegularExpression(R"(^accuracy: 1\.0000\nloss: 0\.\d{4}\n$)")),
           qPrintable(r.out));
  r = cli({"predict", model, "--data", data, "--target", "label"});
  QCOMPARE(r.code, 0);
  const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 4);
  QCOMPARE(lines[0], QString("output_0"));
  QVERIFY(lines[1].toDouble() > 0.5 && lines[2].toDouble() < 0.5 && lines[3].toDouble() > 0.5);
  // The target still among the columns: the CSV is named, with the fix.
  r = cli({"predict", model, "--data", data});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("d.csv: has 5 columns but the model takes 4 features; if the target "
                          "columns are among them, name them with --target"),
           qPrintable(r.err));
}

void TestCli::evaluate_reads_columns_as_trained() {
  // A model trained on a CSV's named columns with data.standardize: its file keeps the names and
  // the statistics, so evaluate and predict read another CSV by name and standardize it the same
  // way, whatever the column order and extra columns.
  QTemporaryDir dir;
  QString rows = "a,b,noise,y\n";
  for (int i = 0; i < 40; ++i)
    rows += QString("%1,%2,%3,%4\n")
                .arg(500 + 37 * (i % 7))
                .arg(i % 5 - 2)
                .arg(i % 3)
                .arg((i % 5 - 2) > 0 ? 1 : 0);
  write(dir.filePath("train.csv"), rows.toUtf8());
  write(
      dir.filePath("exp.json"),
      R"({"data": {"csv": "train.csv", "target": "y", "features": ["b", "a"], "standardize": true},
            "model": {"class_name": "Sequential", "config": {"layers": [
              {"class_name": "InputLayer", "config": {"batch_shape": [null, 2]}},
              {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
            "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.5}},
                        "loss": "binary_crossentropy", "metrics": ["accuracy"]},
            "fit": {"epochs": 30, "batch_size": 8, "verbose": 0}, "seed": 3})");
  const QString model = dir.filePath("m.json");
  QCOMPARE(cli({"run", dir.filePath("exp.json"), "--save-model", model}).code, 0);
  QVERIFY(readFile(model).contains("\"features\": [\"b\", \"a\"]"));
  // The same rows with the columns reversed and one more column.
  QString reversed = "extra,y,noise,b,a\n";
  for (const QString& line : rows.split('\n', Qt::SkipEmptyParts).mid(1)) {
    const QStringList c = line.split(',');
    reversed += "9," + c[3] + "," + c[2] + "," + c[1] + "," + c[0] + "\n";
  }
  write(dir.filePath("reversed.csv"), reversed.toUtf8());
  const Result a = cli({"evaluate", model, "--data", dir.filePath("train.csv"), "--verbose", "0"});
  const Result b =
      cli({"evaluate", model, "--data", dir.filePath("reversed.csv"), "--verbose", "0"});
  QCOMPARE(a.code, 0);
  QCOMPARE(b.out, a.out);
  QVERIFY2(a.out.startsWith("accuracy: 1.0000"), qPrintable(a.out));  // standardized as trained
  const Result pa = cli({"predict", model, "--data", dir.filePath("train.csv")});
  const Result pb = cli({"predict", model, "--data", dir.filePath("reversed.csv")});
  QCOMPARE(pa.code, 0);
  QCOMPARE(pb.out, pa.out);
  write(dir.filePath("short.csv"), "a,y\n1,0\n");
  const Result missing = cli({"predict", model, "--data", dir.filePath("short.csv")});
  QCOMPARE(missing.code, 2);
  QVERIFY2(missing.err.contains("short.csv: has no column \"b\", a feature"),
           qPrintable(missing.err));
}

void TestCli::summary() {
  const Result r = cli({"summary", example("seed.json")});
  QCOMPARE(r.code, 0);
  QVERIFY(r.out.startsWith("Model: \"sequential\"\n"));
  QVERIFY(r.out.contains(
      "│ dense (Dense)                   │ (None, 1)              │             5 │"));
  QVERIFY(r.out.contains(" Total params: 5 (20.00 B)\n"));
}

void TestCli::devices() {
  QCOMPARE(cli({"devices"}).out, QString("['cpu:0']\n"));
  QCOMPARE(cli({"devices"}, {"XLA_FLAGS=--xla_force_host_platform_device_count=2"}).out,
           QString("['cpu:0', 'cpu:1']\n"));
  QCOMPARE(cli({"devices"}, {"FITBENCH_CPU_DEVICES=3"}).out,
           QString("['cpu:0', 'cpu:1', 'cpu:2']\n"));
  QCOMPARE(cli({"devices", "--devices", "4"}, {"FITBENCH_CPU_DEVICES=3"}).out,
           QString("['cpu:0', 'cpu:1', 'cpu:2', 'cpu:3']\n"));
  QCOMPARE(cli({"devices", "--type", "gpu"}).out, QString("[]\n"));
  const Result bad = cli({"devices"}, {"FITBENCH_CPU_DEVICES=zero"});
  QCOMPARE(bad.code, 2);
  QVERIFY(bad.err.startsWith("fitbench-cli: FITBENCH_CPU_DEVICES: "));
  // XLA_FLAGS as absl reads it: the last of a repeated flag, other flags beside it; no value is
  // an error.
  QCOMPARE(cli({"devices"}, {"XLA_FLAGS=--xla_force_host_platform_device_count=2 --xla_dump_to=x "
                             "--xla_force_host_platform_device_count=3"})
               .out,
           QString("['cpu:0', 'cpu:1', 'cpu:2']\n"));
  const Result bare = cli({"devices"}, {"XLA_FLAGS=--xla_force_host_platform_device_count"});
  QCOMPARE(bare.code, 2);
  QVERIFY2(bare.err.contains("needs a value"), qPrintable(bare.err));
  QCOMPARE(cli({"devices"}, {"FITBENCH_CPU_DEVICES= 3 "}).out,
           QString("['cpu:0', 'cpu:1', 'cpu:2']\n"));  // spaces allowed, as --devices " 3"
  // No command: the usage on stderr, exit 2; --help-all is --help.
  const Result none = cli({});
  QCOMPARE(none.code, 2);
  QVERIFY(none.out.isEmpty() && none.err.startsWith("Usage: fitbench-cli"));
  QCOMPARE(cli({"run", "--help-all"}).code, 0);
}

void TestCli::help_on_every_command() {
  for (const char* c : {"run", "evaluate", "predict", "summary", "devices"}) {
    const Result r = cli({c, "--help"});
    QCOMPARE(r.code, 0);
    QVERIFY2(r.out.contains("Usage:"), c);
  }
  QCOMPARE(cli({"--help"}).code, 0);
  QCOMPARE(cli({}).code, 2);
  QCOMPARE(cli({"frobnicate"}).code, 2);
  QCOMPARE(cli({"run"}).code, 2);
  QCOMPARE(cli({"run", example("seed.json"), "--epochs", "zero"}).code, 2);
  // A weights file that cannot be read is named after its option, not the experiment.
  const Result weights = cli({"run", example("seed.json"), "--load-weights", "/nonexistent.json"});
  QCOMPARE(weights.code, 2);
  QVERIFY2(
      weights.err.startsWith("fitbench-cli: --load-weights: /nonexistent.json: cannot be read"),
      qPrintable(weights.err));
}

void TestCli::bad_input_exits_2() {
  QTemporaryDir dir;
  const QString base = R"({"data": {"generator": "seed", "samples": 32},
    "model": {"class_name": "Sequential", "config": {"layers": [LAYERS]}},
    "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"}})";
  struct Case {
    const char* name;
    QString json;
    const char* expected;  // the start of stderr after the file name
  };
  const Case cases[] = {
      {"units",
       QString(base).replace("LAYERS", R"({"class_name": "Dense", "config": {"units": -3}})"),
       "model.config.layers[0].config.units"},
      {"layer", QString(base).replace("LAYERS", R"({"class_name": "LSTM", "config": {}})"),
       "model.config.layers[0].class_name"},
      {"key",
       QString(base).replace("LAYERS",
                             R"({"class_name": "Dense", "config": {"units": 1, "unitz": 2}})"),
       "model.config.layers[0].config.unitz"},
      {"syntax", "{\"data\": {,}}", ""},
      {"shape",
       QString(base).replace("LAYERS", R"({"class_name": "Dense", "config": {"units": 2}})"),
       "model"},
  };
  for (const Case& c : cases) {
    const QString file = dir.filePath(QString(c.name) + ".json");
    write(file, c.json.toUtf8());
    const Result r = cli({"run", file});
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(r.err.startsWith("fitbench-cli: "), qPrintable(r.err));
    QVERIFY2(r.err.contains(c.expected), qPrintable(r.err));
    QVERIFY2(r.err.contains(QString(c.name) + ".json"), qPrintable(r.err));
  }
  const Result missing = cli({"run", dir.filePath("nope.json")});
  QCOMPARE(missing.code, 2);
  QVERIFY(missing.err.contains("nope.json"));
  write(dir.filePath("bad.csv"), "a,label\n1,0\nx,1\n");
  QTemporaryDir d2;
  const QString model = d2.filePath("m.json");
  QVERIFY(save_seed_model(model));
  const Result csv =
      cli({"evaluate", model, "--data", dir.filePath("bad.csv"), "--target", "label"});
  QCOMPARE(csv.code, 2);
  QVERIFY2(csv.err.contains("bad.csv:3:1"), qPrintable(csv.err));
  // The options are named as the user typed them, not as an experiment's keys.
  write(dir.filePath("good.csv"), "a,b,c,d,label\n1,2,3,4,0\n");
  const QString good = dir.filePath("good.csv");
  const Result target = cli({"evaluate", model, "--data", good, "--target", "nope"});
  QCOMPARE(target.code, 2);
  QVERIFY2(target.err.startsWith("fitbench-cli: --target: column \"nope\""),
           qPrintable(target.err));
  const Result delim =
      cli({"predict", model, "--data", good, "--target", "label", "--delimiter", ";;"});
  QCOMPARE(delim.code, 2);
  QVERIFY2(delim.err.startsWith("fitbench-cli: --delimiter: must be a single ASCII character"),
           qPrintable(delim.err));
  const Result type = cli({"devices", "--type", "foo"});
  QCOMPARE(type.code, 2);
  QVERIFY2(type.err.startsWith("fitbench-cli: --type: "), qPrintable(type.err));
  // An experiment where a model file belongs says which it is.
  const Result wrong = cli({"evaluate", example("seed.json"), "--data", good, "--target", "label"});
  QCOMPARE(wrong.code, 2);
  QVERIFY2(wrong.err.contains("seed.json: is an experiment file, not a model file"),
           qPrintable(wrong.err));
  // An option given twice is refused, not silently decided by its last value.
  const Result twice = cli({"run", example("seed.json"), "--devices", "2", "--devices", "3"});
  QCOMPARE(twice.code, 2);
  QCOMPARE(twice.err,
           QString("fitbench-cli run: --devices is given 2 times (2, 3); give it once\n"));
  const Result twiceEq = cli({"devices", "--devices=2", "--devices", ""});
  QCOMPARE(twiceEq.code, 2);
  QVERIFY2(twiceEq.err.contains("--devices is given 2 times (2, \"\"); give it once"),
           qPrintable(twiceEq.err));
}

void TestCli::output_files_are_checked_before_training() {
  // A file that cannot be written is reported before the first epoch (the run is not lost
  // first), and a FIFO or device is neither read (which would block) nor replaced.
  QTemporaryDir dir;
  for (const char* flag : {"--save-model", "--history", "--trace"}) {
    const Result r = cli({"run", example("seed.json"), "--devices", "2", "--epochs", "1", flag,
                          dir.filePath("no/such/folder/out.json")});
    QCOMPARE(r.code, 2);
    QVERIFY2(!r.out.contains("Epoch"), qPrintable(r.out));
    QVERIFY2(r.err.contains("out.json: cannot be written: No such file or directory"),
             qPrintable(r.err));
  }
  const QString fifo = dir.filePath("fifo.json");
  QCOMPARE(mkfifo(fifo.toLocal8Bit().constData(), 0600), 0);
  const Result save = cli({"run", example("seed.json"), "--epochs", "1", "--save-model", fifo});
  QCOMPARE(save.code, 2);
  QVERIFY2(save.err.contains("fifo.json: is not a regular file"), qPrintable(save.err));
  QVERIFY(QFileInfo(fifo).isFile() == false && QFileInfo::exists(fifo));
  const Result read = cli({"run", fifo});  // would wait for a writer forever
  QCOMPARE(read.code, 2);
  QVERIFY2(read.err.contains("fifo.json: is not a regular file"), qPrintable(read.err));
  // A ModelCheckpoint whose folder does not exist fails before the first epoch too.
  QString experiment = QString::fromUtf8(readFile(example("seed.json")));
  QVERIFY(experiment.contains("\"fit\": {"));
  experiment.replace("\"fit\": {", QString("\"fit\": {\"callbacks\": [{\"class_name\": "
                                           "\"ModelCheckpoint\", \"config\": {\"filepath\": "
                                           "\"%1\"}}], ")
                                       .arg(dir.filePath("none/ck.json")));
  write(dir.filePath("ck.json"), experiment.toUtf8());
  const Result ck = cli({"run", dir.filePath("ck.json")});
  QCOMPARE(ck.code, 2);
  QVERIFY2(!ck.out.contains("Epoch"), qPrintable(ck.out));
  QVERIFY2(ck.err.contains("ck.json: cannot be written"), qPrintable(ck.err));
  // An output that names an input (however spelled) or another output is refused: the
  // experiment file is left as it was.
  const QString exp = dir.filePath("exp.json");
  const QByteArray seed = readFile(example("seed.json"));
  write(exp, seed);
  const QString dotted = dir.path() + "/./exp.json";
  const Result over = cli({"run", exp, "--epochs", "1", "--history", dotted});
  QCOMPARE(over.code, 2);
  QVERIFY2(over.err.contains("--history: " + dotted +
                             " is the experiment file; write to another "
                             "file"),
           qPrintable(over.err));
  QCOMPARE(readFile(exp), seed);
  const Result twice = cli({"run", exp, "--epochs", "1", "--history", dir.filePath("h.json"),
                            "--trace", dir.filePath("h.json")});
  QCOMPARE(twice.code, 2);
  QVERIFY2(twice.err.contains("h.json is --history's file too"), qPrintable(twice.err));
  // The experiment's own callbacks too: a ModelCheckpoint whose {epoch} makes the experiment's
  // name, and a CSVLogger against --history.
  const QString run3 = dir.filePath("run3.json");
  experiment = QString::fromUtf8(seed);
  experiment.replace("\"fit\": {",
                     QString("\"fit\": {\"callbacks\": [{\"class_name\": "
                             "\"ModelCheckpoint\", \"config\": {\"filepath\": "
                             "\"%1\"}}, {\"class_name\": \"CSVLogger\", "
                             "\"config\": {\"filename\": \"%2\"}}], ")
                         .arg(dir.filePath("run{epoch}.json"), dir.filePath("log.csv")));
  write(run3, experiment.toUtf8());
  const Result epoch = cli({"run", run3});
  QCOMPARE(epoch.code, 2);
  QVERIFY2(!epoch.out.contains("Epoch"), qPrintable(epoch.out));
  QVERIFY2(epoch.err.contains(
               "run3.json: fit.callbacks[0].config.filepath: " + dir.filePath("run{epoch}.json") +
               " can make " + run3 + ", the experiment file"),
           qPrintable(epoch.err));
  QCOMPARE(readFile(run3), experiment.toUtf8());
  experiment.replace("run{epoch}.json", "ck-{epoch}.json");
  write(run3, experiment.toUtf8());
  const Result logged = cli({"run", run3, "--history", dir.filePath("log.csv")});
  QCOMPARE(logged.code, 2);
  QVERIFY2(
      logged.err.contains("--history: " + dir.filePath("log.csv") + " is CSVLogger's file too"),
      qPrintable(logged.err));
  QVERIFY(!QFileInfo::exists(dir.filePath("ck-1.json")));
}

void TestCli::nan_exits_1() {
  // The experiment the window's command-line test also runs (tests/data/diverges.json).
  const QString file = FITBENCH_SOURCE_DIR "/tests/data/diverges.json";
  const Result r = cli({"run", file});
  QCOMPARE(r.code, 1);
  QVERIFY2(r.err.contains("not a finite number"), qPrintable(r.err));
  // With --save-model the weights that are not numbers are not written, and the run still says
  // why it failed (exit 1, not 2).
  QTemporaryDir dir;
  const QString model = dir.filePath("m.json");
  const Result saved = cli({"run", file, "--save-model", model});
  QCOMPARE(saved.code, 1);
  QVERIFY2(saved.err.contains("(TerminateOnNaN)") &&
               saved.err.contains("m.json: not written: training diverged"),
           qPrintable(saved.err));
  QVERIFY(!QFileInfo::exists(model));
  // Without TerminateOnNaN the run goes to its end, keeps its History and says it diverged, the
  // same for every model format.
  QFile in(file);
  QVERIFY(in.open(QIODevice::ReadOnly));
  QString text = QString::fromUtf8(in.readAll());
  text.replace(R"("callbacks": [{"class_name": "TerminateOnNaN"}])", R"("callbacks": [])");
  text.replace(R"({"class_name": "Dense", "config": {"units": 16)",
               R"({"class_name": "InputLayer", "config": {"batch_shape": [null, 1]}},
    {"class_name": "Dense", "config": {"units": 16)");
  const QString open_ended = dir.filePath("diverges_to_the_end.json");
  QFile out(open_ended);
  QVERIFY(out.open(QIODevice::WriteOnly));
  out.write(text.toUtf8());
  out.close();
  for (const char* name : {"m.json", "m.keras", "m.weights.h5"}) {
    const Result r2 = cli({"run", open_ended, "--save-model", dir.filePath(name), "--history",
                           dir.filePath("h.json")});
    QCOMPARE(r2.code, 1);
    QVERIFY2(r2.err.contains(QString(name) + ": not written: training diverged") &&
                 r2.err.contains("fitbench-cli: training diverged: the weights are not finite"),
             qPrintable(r2.err));
    QVERIFY(r2.out.contains("Final loss: nan"));
    QVERIFY(!QFileInfo::exists(dir.filePath(name)));
    QVERIFY(QFileInfo::exists(dir.filePath("h.json")));
  }
}

void TestCli::rehearsal_flags_and_trace() {
  QTemporaryDir dir;
  const QString trace = dir.filePath("run.json");
  const Result r =
      cli({"run", example("seed.json"), "--devices", "2", "--allreduce", "naive", "--device-speed",
           "1,0.5", "--link-latency-us", "10", "--link-gbps", "1", "--trace", trace});
  QCOMPARE(r.code, 0);
  // stdout is still the Keras script's output.
  const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 11);
  QCOMPARE(lines[0], QString("Devices: ['cpu:0', 'cpu:1']"));
  QFile f(trace);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
  QVERIFY(doc.isObject());
  // One line per device on stderr.
  const QStringList err = r.err.split('\n', Qt::SkipEmptyParts);
  QCOMPARE(err.size(), 2);
  const QRegularExpression usage(
      R"(^cpu:(\d)  busy (\d+\.\d)%  communication (\d+\.\d)%  idle (\d+\.\d)%$)");
  for (int d = 0; d < 2; ++d) {
    const auto m = usage.match(err[d]);
    QVERIFY2(m.hasMatch(), qPrintable(err[d]));
    QCOMPARE(m.captured(1).toInt(), d);
    const double sum =
        m.captured(2).toDouble() + m.captured(3).toDouble() + m.captured(4).toDouble();
    QVERIFY2(std::abs(sum - 100.0) < 0.2, qPrintable(err[d]));
  }
  // The trace: cpu:0 and cpu:1, 4 epochs x 8 steps x 6 spans per device; every all_reduce is
  // naive and ends at least its modeled 2 x (10 us + 20 bytes at 1 GB/s) after the last device
  // began waiting for it.
  QStringList processes;
  int complete = 0, reductions = 0;
  QMap<int, double> last_arrival, first_end;  // per step
  for (const auto& e : doc.object()["traceEvents"].toArray()) {
    const QJsonObject o = e.toObject();
    if (o["name"] == "process_name") processes << o["args"].toObject()["name"].toString();
    if (o["ph"] != "X") continue;
    ++complete;
    const int step = o["args"].toObject()["step"].toInt();
    if (o["name"] == "waiting")
      last_arrival[step] = std::max(last_arrival.value(step, 0.0), o["ts"].toDouble());
    if (o["name"] == "all_reduce") {
      ++reductions;
      QCOMPARE(o["args"].toObject()["algorithm"].toString(), QString("naive"));
      const double end = o["ts"].toDouble() + o["dur"].toDouble();
      first_end[step] = first_end.contains(step) ? std::min(first_end[step], end) : end;
    }
  }
  QCOMPARE(processes, (QStringList{"cpu:0", "cpu:1"}));
  // Six spans per device and step, less the waiting span of the last device to arrive at each
  // all-reduce (it does not wait).
  QCOMPARE(complete, 2 * 32 * 6 - 32);
  QCOMPARE(reductions, 2 * 32);
  QCOMPARE(first_end.size(), 32);
  for (int step : first_end.keys())
    QVERIFY2(first_end[step] - last_arrival[step] >= 20.0,
             qPrintable(QString::number(first_end[step] - last_arrival[step])));
}

void TestCli::layout_map_entry_matching_nothing_warns() {
  // A LayoutMap key that matches no variable (here a typo) shards nothing: the run goes on, and
  // stderr says which entry it is and what the variables are called.
  QTemporaryDir dir;
  QString text = QString::fromUtf8(readFile(example("model_parallel_2x2.json")));
  const QString entry = "\"hidden.*bias\": [\"model\"]";
  QVERIFY(text.contains(entry));
  text.replace(entry, entry + ", \"hiden.*kernel\": [null, \"model\"]");
  write(dir.filePath("typo.json"), text.toUtf8());
  const Result r = cli({"run", dir.filePath("typo.json"), "--epochs", "1"});
  QCOMPARE(r.code, 0);
  QVERIFY2(r.err.contains("fitbench-cli: warning: ") &&
               r.err.contains("typo.json: distribution.layout_map[\"hiden.*kernel\"]: matches no "
                              "variable of the model"),
           qPrintable(r.err));
  const Result clean = cli({"run", example("model_parallel_2x2.json"), "--epochs", "1"});
  QCOMPARE(clean.code, 0);
  QVERIFY2(!clean.err.contains("warning"), qPrintable(clean.err));
}

void TestCli::single_unit_softmax_and_wrong_delimiter_are_said() {
  QTemporaryDir dir;
  // Valid Keras that cannot learn: the run goes on, with a warning naming the layer.
  write(dir.filePath("soft.json"), R"({"data": {"generator": "seed", "samples": 32},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"units": 1, "activation": "softmax"}}]}},
    "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"}, "fit": {"verbose": 0}})");
  const Result soft = cli({"run", dir.filePath("soft.json")});
  QCOMPARE(soft.code, 0);
  QVERIFY2(soft.err.startsWith("fitbench-cli: warning: ") &&
               soft.err.contains("soft.json: model.config.layers[0]: softmax over a single unit "
                                 "always outputs 1"),
           qPrintable(soft.err));
  // A first layer that gives input_shape (Keras's Sequential adds an InputLayer before it) is
  // still named by its place in the file, in the warning and in errors.
  write(dir.filePath("shaped.json"), R"({"data": {"generator": "seed", "samples": 32},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"units": 3, "input_shape": [4]}},
      {"class_name": "Dense", "config": {"units": 1, "activation": "softmax"}}]}},
    "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"}, "fit": {"verbose": 0}})");
  const Result shaped = cli({"run", dir.filePath("shaped.json")});
  QCOMPARE(shaped.code, 0);
  QVERIFY2(shaped.err.contains("shaped.json: model.config.layers[1]: softmax"),
           qPrintable(shaped.err));
  write(dir.filePath("shaped_bad.json"), R"({"data": {"generator": "seed", "samples": 32},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"units": 3, "input_shape": [4]}},
      {"class_name": "Dense", "config": {"units": 100000000000}}]}},
    "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"}})");
  const Result bad = cli({"run", dir.filePath("shaped_bad.json")});
  QCOMPARE(bad.code, 2);
  QVERIFY2(bad.err.contains("shaped_bad.json: model.config.layers[1].config.units: is too large"),
           qPrintable(bad.err));
  QVERIFY2(!cli({"run", example("seed.json"), "--verbose", "0"}).err.contains("warning"),
           "the seed's sigmoid unit gets no warning");
  // A semicolon file read with the default delimiter: the error says which delimiter to set.
  QTemporaryDir d2;
  const QString model = d2.filePath("m.json");
  QVERIFY(save_seed_model(model));
  write(dir.filePath("semi.csv"), "a;b;c;d;label\n1;2;3;4;0\n");
  const Result semi =
      cli({"evaluate", model, "--data", dir.filePath("semi.csv"), "--target", "label"});
  QCOMPARE(semi.code, 2);
  QVERIFY2(semi.err.contains("its header is one column, \"a;b;c;d;label\", which looks "
                             "\";\"-separated: set the delimiter to \";\""),
           qPrintable(semi.err));
  QCOMPARE(cli({"evaluate", model, "--data", dir.filePath("semi.csv"), "--target", "label",
                "--delimiter", ";"})
               .code,
           0);
}

void TestCli::rehearsal_flag_errors() {
  const QString seed = example("seed.json");
  struct Case {
    QStringList args;
    const char* expected;  // stderr's start after "fitbench-cli: "
  };
  const Case cases[] = {
      {{"--devices", "2", "--device-speed", "1,2"}, "--device-speed: must list"},
      {{"--devices", "2", "--device-speed", "1"}, "--device-speed: lists 1 speed but there are 2"},
      {{"--allreduce", "tree"}, "--allreduce: must be \"ring\" or \"naive\""},
      {{"--batch-norm-statistics", "local"},
       "--batch-norm-statistics: must be global or per_device, got \"local\""},
      {{"--strategy", "none", "--batch-norm-statistics", "per_device"},
       "--batch-norm-statistics: needs a distribution"},
      {{"--link-gbps", "-1"}, "--link-gbps: must be 0 (unlimited) or a bandwidth"},
      {{"--link-gbps", "1e-12"}, "--link-gbps: must be 0 (unlimited) or a bandwidth"},
      {{"--link-latency-us", "1e12"}, "--link-latency-us: must be a number of microseconds from 0"},
      {{"--devices", "2", "--device-speed", "1,1e-9"}, "--device-speed: must list"},
      {{"--link-latency-us", "soon"}, "--link-latency-us: must be a number"},
      {{"--strategy", "none", "--trace", "t.json"}, "--trace: needs a distribution"},
      {{"--devices", "2", "--trace", ""}, "--trace: needs a file name"},
      {{"--strategy", "model_parallel", "--mesh", "2x2", "--devices", "2"},
       "--mesh: 2x2 needs 4 devices, but there are 2"},
  };
  for (const Case& c : cases) {
    const Result r = cli(QStringList{"run", seed} + c.args);
    QCOMPARE(r.code, 2);
    QCOMPARE(r.err.count('\n'), 1);
    QVERIFY2(r.err.startsWith(QString("fitbench-cli: ") + c.expected), qPrintable(r.err));
  }
  // --devices without a distribution trains one device, and says so.
  const Result single = cli({"run", seed, "--strategy", "none", "--devices", "4", "--epochs", "1"});
  QCOMPARE(single.code, 0);
  QVERIFY2(single.err.contains("note: --devices 4 has no effect without a distribution"),
           qPrintable(single.err));
  // A bad knob in the file names the file and the path.
  QTemporaryDir dir;
  const QString file = dir.filePath("slow.json");
  write(file, R"({"devices": {"count": 2, "speed": [1, 0]},
    "distribution": {"class_name": "DataParallel"},
    "data": {"generator": "seed", "samples": 32},
    "model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
    "compile": {"optimizer": "sgd", "loss": "binary_crossentropy"}})");
  const Result r = cli({"run", file});
  QCOMPARE(r.code, 2);
  QVERIFY2(r.err.contains("slow.json: devices.speed[1]: "), qPrintable(r.err));
  // --help documents every flag.
  const QString help = cli({"run", "--help"}).out;
  for (const char* flag : {"--allreduce", "--device-speed", "--link-latency-us", "--link-gbps",
                           "--batch-norm-statistics", "--trace"})
    QVERIFY2(help.contains(flag), flag);
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
