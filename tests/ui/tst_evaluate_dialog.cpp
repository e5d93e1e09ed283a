// Run > Evaluate on CSV... and Predict on CSV... driven as a person does it: the shortcut on the
// window after a run, the path typed, the buttons clicked. The numbers are model.evaluate's and
// model.predict's for the same model (and fitbench-cli evaluate's), the exports hold every row,
// and bad input is a sentence in the dialog naming its place.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLineEdit>
#include <QProcess>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "core/data/dataset.h"
#include "core/io/model_file.h"
#include "core/run/run.h"
#include "core/training/sequential.h"
#include "ui/window/evaluate_dialog.h"
#include "ui/window/main_window.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::makeWindow;

namespace {

void writeFile(const QString& path, const QByteArray& text) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  f.write(text);
}

QByteArray readFile(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// The window's visible Evaluate/Predict dialog, once it shows.
EvaluateDialog* shownDialog(MainWindow& w) {
  for (EvaluateDialog* d : w.findChildren<EvaluateDialog*>())
    if (d->isVisible()) return d;
  return nullptr;
}

template <class T>
T* child(QWidget* parent, const char* name) {
  return parent->findChild<T*>(QLatin1String(name));
}

// Types `path` into the dialog's CSV field (replacing what it held), then clicks its Run button
// and waits for the job to end; true when it ended well.
bool typeAndRun(EvaluateDialog* d, const QString& path) {
  auto* field = child<QLineEdit>(d, "csvPath");
  field->selectAll();
  QTest::keyClick(field, Qt::Key_Delete);
  QTest::keyClicks(field, path);
  QSignalSpy ended(d, &EvaluateDialog::jobFinished);
  QTest::mouseClick(child<QPushButton>(d, "runButton"), Qt::LeftButton);
  if (!ended.wait(60000)) return false;
  return ended.first().first().toBool();
}

// The trained model as Sequential (weights set, compiled).
std::unique_ptr<Sequential> trained(const ModelFile& file, Index features) {
  auto model = std::make_unique<Sequential>(file.config);
  if (!model->built()) model->build(features);
  model->set_weights(file.weights, "model");
  model->compile(*file.compile);
  return model;
}

// `csv`'s columns b and a (the model's features, in its order), standardized as trained.
Dataset readAsTrained(const ModelFile& file, const QString& csv) {
  DataSpec spec;
  spec.generator.clear();
  spec.csv = csv.toStdString();
  spec.target = {"y"};
  spec.features_columns = {"b", "a"};
  Dataset data = read_csv_dataset(spec, "/");
  for (Index j = 0; j < data.x.cols(); ++j)
    data.x.col(j) = (data.x.col(j).array() - float(file.data->mean[size_t(j)])) /
                    float(file.data->stddev[size_t(j)]);
  return data;
}

}  // namespace

class TestEvaluateDialog : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  std::unique_ptr<MainWindow> m_window;  // trained once on train.csv

  QString path(const char* name) const { return m_dir.filePath(QLatin1String(name)); }

  // The trained window, active, with its Evaluate (or Predict) dialog opened by its shortcut.
  EvaluateDialog* openByShortcut(bool predict) {
    MainWindow& w = *m_window;
    w.activateWindow();
    if (!QTest::qWaitForWindowActive(&w)) return nullptr;
    if (predict)
      QTest::keyClick(&w, Qt::Key_P, Qt::ControlModifier | Qt::ShiftModifier);
    else
      QTest::keyClick(&w, Qt::Key_E, Qt::ControlModifier);
    EvaluateDialog* d = nullptr;
    for (int i = 0; i < 100 && !(d = shownDialog(w)); ++i) QTest::qWait(20);
    return d;
  }

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
    QApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
    QVERIFY(m_dir.isValid());
    // 250 rows: y is 1 where b > 0; a is large and shifted (standardization matters), noise is
    // a column the model does not read.
    QByteArray rows = "a,b,noise,y\n";
    QByteArray reversed = "extra,y,noise,b,a\n";
    for (int i = 0; i < 250; ++i) {
      const int a = 500 + 37 * (i % 7), b = i % 5 - 2, noise = i % 3, y = b > 0 ? 1 : 0;
      rows += QByteArray::number(a) + "," + QByteArray::number(b) + "," +
              QByteArray::number(noise) + "," + QByteArray::number(y) + "\n";
      reversed += "9," + QByteArray::number(y) + "," + QByteArray::number(noise) + "," +
                  QByteArray::number(b) + "," + QByteArray::number(a) + "\n";
    }
    writeFile(path("train.csv"), rows);
    writeFile(path("reversed.csv"), reversed);
    writeFile(path("exp.json"), R"({"name": "evaluate",
      "data": {"csv": "train.csv", "target": "y", "features": ["b", "a"], "standardize": true},
      "model": {"class_name": "Sequential", "config": {"layers": [
        {"class_name": "InputLayer", "config": {"batch_shape": [null, 2]}},
        {"class_name": "Dense", "config": {"units": 1, "activation": "sigmoid"}}]}},
      "compile": {"optimizer": {"class_name": "SGD", "config": {"learning_rate": 0.5}},
                  "loss": "binary_crossentropy", "metrics": ["accuracy"]},
      "fit": {"epochs": 3, "batch_size": 16, "verbose": 0}, "seed": 3})");
    m_window = makeWindow();
    QVERIFY(m_window->openFile(path("exp.json")));
    QVERIFY(fixtures::runToEnd(*m_window));
    QVERIFY(m_window->lastResult());
  }

  void cleanup() {
    if (EvaluateDialog* d = shownDialog(*m_window)) d->close();
    QTest::qWait(1);
  }

  // Before any run there is no model: both actions are disabled and say why; the shortcut opens
  // nothing.
  void actionsDisabledBeforeRun() {
    auto w = makeWindow();
    QVERIFY(w->openFile(path("exp.json")));
    for (const char* name : {"evaluateAction", "predictAction"}) {
      auto* act = w->findChild<QAction*>(QLatin1String(name));
      QVERIFY(act);
      QVERIFY(!act->isEnabled());
      QVERIFY2(act->toolTip().startsWith("Train first"), qPrintable(act->toolTip()));
    }
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QTest::keyClick(w.get(), Qt::Key_E, Qt::ControlModifier);
    QTest::qWait(50);
    QVERIFY(!shownDialog(*w));
    QVERIFY(m_window->findChild<QAction*>(QStringLiteral("evaluateAction"))->isEnabled());
  }

  // Ctrl+E, the path typed, Evaluate: the table holds model.evaluate's loss and accuracy for the
  // same model on the same rows (read by name, whatever the column order), printed as
  // fitbench-cli evaluate prints them.
  void evaluateEqualsModelEvaluateAndCli() {
    EvaluateDialog* d = openByShortcut(false);
    QVERIFY(d);
    QCOMPARE(d->mode(), EvaluateDialog::Mode::kEvaluate);
    QCOMPARE(d->csvPath(), QDir::toNativeSeparators(path("train.csv")));  // the experiment's
    QVERIFY2(typeAndRun(d, path("reversed.csv")), qPrintable(d->statusText()));
    QCOMPARE(d->statusText(), QStringLiteral("Evaluated on 250 rows of reversed.csv."));
    auto* table = child<QTableWidget>(d, "resultsTable");
    QCOMPARE(table->rowCount(), 2);
    QCOMPARE(table->item(0, 0)->text(), QStringLiteral("accuracy"));
    QCOMPARE(table->item(1, 0)->text(), QStringLiteral("loss"));

    const ModelFile& file = m_window->lastResult()->model;
    const Dataset data = readAsTrained(file, path("reversed.csv"));
    const Logs expected = trained(file, 2)->evaluate(data.x, data.y, 32, 0);
    QCOMPARE(table->item(0, 1)->data(Qt::UserRole).toDouble(), expected.at("accuracy"));
    QCOMPARE(table->item(1, 1)->data(Qt::UserRole).toDouble(), expected.at("loss"));
    QVERIFY(expected.at("loss") > 0.0 && expected.at("loss") < 0.7);

    write_model_file(file, path("model.json").toStdString());
    QProcess cli;
    cli.start(FITBENCH_CLI,
              {"evaluate", path("model.json"), "--data", path("reversed.csv"), "--verbose", "0"});
    QVERIFY(cli.waitForFinished(60000));
    QCOMPARE(cli.exitCode(), 0);
    QCOMPARE(QString::fromUtf8(cli.readAllStandardOutput()),
             QStringLiteral("accuracy: %1\nloss: %2\n")
                 .arg(table->item(0, 1)->text(), table->item(1, 1)->text()));
  }

  // Ctrl+Shift+P: the first 100 rows of features and predictions (model.predict's), the count
  // said; Export writes every row as CSV and as JSON, by the file's name.
  void predictEqualsModelPredictAndExports() {
    EvaluateDialog* d = openByShortcut(true);
    QVERIFY(d);
    QCOMPARE(d->mode(), EvaluateDialog::Mode::kPredict);
    QVERIFY(!child<QComboBox>(d, "targetColumn")->isVisible());  // features by name
    QVERIFY(!child<QPushButton>(d, "exportButton")->isEnabled());
    QVERIFY2(typeAndRun(d, path("reversed.csv")), qPrintable(d->statusText()));
    QCOMPARE(d->statusText(), QStringLiteral("Showing 100 of 250 rows; Export writes them all."));

    const ModelFile& file = m_window->lastResult()->model;
    const Dataset data = readAsTrained(file, path("reversed.csv"));
    const Matrix expected = trained(file, 2)->predict(data.x, 32, 0);
    auto* table = child<QTableWidget>(d, "resultsTable");
    QCOMPARE(table->rowCount(), 100);
    QCOMPARE(table->columnCount(), 3);
    QCOMPARE(table->horizontalHeaderItem(0)->text(), QStringLiteral("b"));
    QCOMPARE(table->horizontalHeaderItem(1)->text(), QStringLiteral("a"));
    QCOMPARE(table->horizontalHeaderItem(2)->text(), QStringLiteral("output_0"));
    for (int r = 0; r < 100; ++r) {
      QCOMPARE(table->item(r, 0)->data(Qt::UserRole).toDouble(), double(r % 5 - 2));
      QCOMPARE(table->item(r, 1)->data(Qt::UserRole).toDouble(), double(500 + 37 * (r % 7)));
      QCOMPARE(table->item(r, 2)->data(Qt::UserRole).toDouble(), double(expected(r, 0)));
    }

    // CSV, through the Export button and its file dialog.
    fixtures::answerFileDialog(path("predictions.csv"));
    QSignalSpy ended(d, &EvaluateDialog::jobFinished);
    QTest::mouseClick(child<QPushButton>(d, "exportButton"), Qt::LeftButton);
    QVERIFY(ended.wait(30000));
    QVERIFY2(ended.first().first().toBool(), qPrintable(d->statusText()));
    QVERIFY2(d->statusText().startsWith("Wrote 250 rows to"), qPrintable(d->statusText()));
    const QList<QByteArray> lines = readFile(path("predictions.csv")).split('\n');
    QCOMPARE(lines.size(), 252);  // header, 250 rows, the final newline
    QCOMPARE(lines[0], QByteArray("b,a,output_0"));
    for (int r = 0; r < 250; ++r) {
      const QList<QByteArray> cells = lines[r + 1].split(',');
      QCOMPARE(cells.size(), 3);
      QCOMPARE(cells[0].toDouble(), double(r % 5 - 2));
      QCOMPARE(cells[1].toDouble(), double(500 + 37 * (r % 7)));
      QCOMPARE(cells[2].toFloat(), expected(r, 0));  // "%.9g": the float exactly
    }

    // JSON, by the name.
    QSignalSpy again(d, &EvaluateDialog::jobFinished);
    QVERIFY(d->exportTo(path("predictions.json")));
    QVERIFY(!d->exportTo(path("second.json")));  // one job at a time
    QVERIFY(again.wait(30000));
    const QJsonObject doc = QJsonDocument::fromJson(readFile(path("predictions.json"))).object();
    QCOMPARE(doc["columns"].toArray(), QJsonArray({"b", "a", "output_0"}));
    const QJsonArray rows = doc["data"].toArray();
    QCOMPARE(rows.size(), 250);
    for (int r : {0, 1, 137, 249}) {
      QCOMPARE(rows[r].toArray()[1].toDouble(), double(500 + 37 * (r % 7)));
      QCOMPARE(float(rows[r].toArray()[2].toDouble()), expected(r, 0));
    }
    QVERIFY(!QFile::exists(path("second.json")));
  }

  // Evaluate's export: name,value rows, or Keras's return_dict as JSON; a file that cannot be
  // written is said in the dialog.
  void evaluateExports() {
    EvaluateDialog* d = openByShortcut(false);
    QVERIFY(d);
    QVERIFY(typeAndRun(d, path("train.csv")));
    auto* table = child<QTableWidget>(d, "resultsTable");
    const double accuracy = table->item(0, 1)->data(Qt::UserRole).toDouble();
    const double loss = table->item(1, 1)->data(Qt::UserRole).toDouble();
    QSignalSpy ended(d, &EvaluateDialog::jobFinished);
    QVERIFY(d->exportTo(path("evaluation.csv")));
    QVERIFY(ended.wait(30000));
    const QList<QByteArray> lines = readFile(path("evaluation.csv")).split('\n');
    QCOMPARE(lines.size(), 4);
    QCOMPARE(lines[0], QByteArray("name,value"));
    QVERIFY(lines[1].startsWith("accuracy,"));
    QCOMPARE(lines[1].mid(9).toFloat(), float(accuracy));
    QVERIFY(lines[2].startsWith("loss,"));
    QCOMPARE(lines[2].mid(5).toFloat(), float(loss));
    QVERIFY(d->exportTo(path("evaluation.json")));
    QVERIFY(ended.wait(30000));
    const QJsonObject doc = QJsonDocument::fromJson(readFile(path("evaluation.json"))).object();
    QCOMPARE(doc.keys(), QStringList({"accuracy", "loss"}));
    QCOMPARE(float(doc["loss"].toDouble()), float(loss));

    const QString unwritable = path("no-such-folder/evaluation.csv");
    QVERIFY(d->exportTo(unwritable));
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.last().first().toBool(), false);
    QVERIFY2(d->errorText().startsWith("Could not export: " + unwritable),
             qPrintable(d->errorText()));
    // The results stay, to export elsewhere.
    QVERIFY(child<QPushButton>(d, "exportButton")->isEnabled());
  }

  // Bad input is one sentence in the dialog that names the place; the results are cleared.
  void errorsNameThePlace_data() {
    QTest::addColumn<QString>("file");
    QTest::addColumn<QByteArray>("content");  // none: the file is not written
    QTest::addColumn<QString>("expected");
    // %1: the CSV's path as typed.
    QTest::newRow("missing file") << "missing.csv" << QByteArray()
                                  << "%1: cannot be opened: No such file or directory";
    QTest::newRow("missing feature column")
        << "short.csv" << QByteArray("a,y\n1,0\n")
        << "%1: column \"b\" is not in %1; its header has: a, y (a feature the trained model "
           "was trained on)";
    QTest::newRow("bad cell") << "cell.csv" << QByteArray("a,b,y\n500,1,1\n510,oops,0\n")
                              << "%1:3:2 (b): is not a number: \"oops\"";
    QTest::newRow("empty file") << "empty.csv" << QByteArray("")
                                << "%1: is empty: a header row is required";
    QTest::newRow("binary file") << "image.csv" << QByteArray("\x89PNG\r\n\x1a\n\0\0\0", 11)
                                 << "%1: is not a text file";
  }

  void errorsNameThePlace() {
    QFETCH(QString, file);
    QFETCH(QByteArray, content);
    QFETCH(QString, expected);
    const QString csv = path(file.toUtf8().constData());
    if (!content.isNull()) writeFile(csv, content);
    expected = expected.arg(csv);
    EvaluateDialog* d = openByShortcut(false);
    QVERIFY(d);
    QVERIFY(typeAndRun(d, path("train.csv")));  // results, to be cleared
    QVERIFY(!typeAndRun(d, csv));
    QVERIFY2(d->errorText().startsWith(expected),
             qPrintable(d->errorText() + "\nexpected: " + expected));
    QCOMPARE(child<QTableWidget>(d, "resultsTable")->rowCount(), 0);
    QVERIFY(!child<QPushButton>(d, "exportButton")->isEnabled());
    QVERIFY(child<QPushButton>(d, "runButton")->isEnabled());  // ready for the next file
  }

  // While a job runs, the fields and Run are disabled and a second start is refused.
  void oneJobAtATime() {
    EvaluateDialog* d = openByShortcut(true);
    QVERIFY(d);
    QSignalSpy ended(d, &EvaluateDialog::jobFinished);
    d->setCsvPath(path("train.csv"));
    QTest::mouseClick(child<QPushButton>(d, "runButton"), Qt::LeftButton);
    QVERIFY(d->isBusy());
    QVERIFY(!child<QPushButton>(d, "runButton")->isEnabled());
    QVERIFY(!child<QLineEdit>(d, "csvPath")->isEnabled());
    QVERIFY(!d->start());
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.size(), 1);
    QVERIFY(!d->isBusy());
    QVERIFY(child<QPushButton>(d, "runButton")->isEnabled());
  }

  // docs/screenshots/evaluate-dialog.png (Predict) and evaluate-dialog-metrics.png (Evaluate),
  // when FITBENCH_SCREENSHOTS names a directory.
  void screenshot_data() {
    QTest::addColumn<bool>("predict");
    QTest::addColumn<QString>("name");
    QTest::newRow("predict") << true << "evaluate-dialog.png";
    QTest::newRow("evaluate") << false << "evaluate-dialog-metrics.png";
  }

  void screenshot() {
    QFETCH(bool, predict);
    QFETCH(QString, name);
    const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
    if (dir.isEmpty()) QSKIP("FITBENCH_SCREENSHOTS is not set");
    EvaluateDialog* d = openByShortcut(predict);
    QVERIFY(d);
    QVERIFY(typeAndRun(d, path("reversed.csv")));
    child<QLineEdit>(d, "csvPath")->setText(QStringLiteral("/home/ada/data/reversed.csv"));
    QVERIFY(d->grab().save(QDir(dir).filePath(name)));
  }

  void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestEvaluateDialog)
#include "tst_evaluate_dialog.moc"
