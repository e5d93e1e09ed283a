// Keras files in the window, as a person uses them: after a run, File > Export > Trained model for
// Keras (.keras) and Trained weights for Keras (.weights.h5) ask for a name in the file dialog
// (the ending is added when left out) and write the trained model; File > Open and a drop of a
// .keras file make it the experiment's model, which Run trains further from its weights and
// optimizer state; a damaged .keras file is refused with a sentence in the log.
#include <QAction>
#include <QApplication>
#include <QDropEvent>
#include <QFileDialog>
#include <QLineEdit>
#include <QMimeData>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <QUrl>
#include <fstream>

#include "core/io/experiment.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/run/run.h"
#include "ui/panels/model_panel.h"
#include "ui/window/main_window.h"
#include "ui/window/training_session.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::answerFileDialog;
using fixtures::example;
using fixtures::makeWindow;
using fixtures::runToEnd;

namespace {

QAction* action(MainWindow& w, const char* name) {
  return w.findChild<QAction*>(QString::fromLatin1(name));
}

}  // namespace

class TestKerasFilesWindow : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // The widget file dialog, which a test can drive, on every platform.
    QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
  }

  void exportsTrainedModelAndWeights() {
    QTemporaryDir dir;
    auto w = makeWindow();
    QVERIFY(w->openFile(example("blobs.json"), nullptr, true));
    QVERIFY(!action(*w, "exportKerasModelAction")->isEnabled());  // nothing trained yet
    QVERIFY(runToEnd(*w));
    QAction* keras = action(*w, "exportKerasModelAction");
    QVERIFY(keras->isEnabled());
    QCOMPARE(keras->text(), QStringLiteral("Trained model for Keras (.keras)…"));
    answerFileDialog(dir.filePath("trained"));  // the ending is added
    keras->trigger();
    const std::string archive = dir.filePath("trained.keras").toStdString();
    QVERIFY(QFileInfo::exists(QString::fromStdString(archive)));
    const ModelFile saved = read_model_file(archive);
    const ModelFile& trained = w->lastResult()->model;
    QCOMPARE(saved.weights.size(), trained.weights.size());
    for (size_t i = 0; i < saved.weights.size(); ++i)
      QVERIFY(saved.weights[i].values == trained.weights[i].values);
    QVERIFY(saved.optimizer);                             // Adam's state travels with it
    QVERIFY(saved.data && saved.data->mean.size() == 2);  // blobs standardizes its inputs

    answerFileDialog(dir.filePath("trained.weights.h5"));
    action(*w, "exportKerasWeightsAction")->trigger();
    const ModelFile weights =
        read_weights_file(dir.filePath("trained.weights.h5").toStdString(), trained);
    QVERIFY(weights.weights[0].values == trained.weights[0].values);
  }

  // Open a .keras file: the model, compile options and weights become the experiment's; Run
  // trains it further from them (the first epoch's loss is the trained model's, far below a
  // fresh model's).
  void opensAndTrainsAKerasModel() {
    QTemporaryDir dir;
    auto w = makeWindow();
    QVERIFY(w->openFile(example("blobs.json"), nullptr, true));
    QVERIFY(runToEnd(*w));
    const double fresh = w->lastResult()->history.history.at("loss").front();
    const double last = w->lastResult()->history.history.at("loss").back();
    const std::string file = dir.filePath("blobs.keras").toStdString();
    write_model_file(w->lastResult()->model, file);

    QVERIFY(w->openFile(QString::fromStdString(file), nullptr, true));
    const ExperimentSpec spec = w->currentSpec();
    QCOMPARE(spec.initial_weights, file);
    QCOMPARE(spec.model.layers.size(), size_t{3});
    QCOMPARE(spec.compile.optimizer.class_name, std::string("Adam"));
    QVERIFY(spec.data.standardize);
    QVERIFY(w->logView()->toPlainText().contains(QStringLiteral("Opened the Keras model")));
    QVERIFY(w->filePath().isEmpty());  // a new, untitled experiment: Save asks for a name
    QVERIFY(runToEnd(*w));
    const double resumed = w->lastResult()->history.history.at("loss").front();
    QVERIFY2(resumed < fresh / 2 && resumed < last * 2,
             qPrintable(QStringLiteral("%1 %2 %3").arg(fresh).arg(last).arg(resumed)));
  }

  void opensADroppedKerasModel() {
    QTemporaryDir dir;
    const std::string file = dir.filePath("xor.keras").toStdString();
    {
      auto trainer = makeWindow();
      QVERIFY(trainer->openFile(example("xor.json"), nullptr, true));
      QVERIFY(runToEnd(*trainer));
      write_model_file(trainer->lastResult()->model, file);
    }
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    QVERIFY(!w->isModified());

    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QString::fromStdString(file))});
    QDragEnterEvent enter(QPoint(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w.get(), &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(50, 50), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(w.get(), &drop);
    QCOMPARE(w->currentSpec().initial_weights, file);
    QCOMPARE(w->currentSpec().model.layers[1].name, std::string("hidden"));
  }

  void refusesADamagedKerasFile() {
    QTemporaryDir dir;
    const QString file = dir.filePath("broken.keras");
    std::ofstream(file.toStdString()) << "PK\x03\x04 not really a zip";
    auto w = makeWindow();
    QVERIFY(w->openFile(example("xor.json"), nullptr, true));
    QString error;
    QVERIFY(!w->openFile(file, &error, true));
    QVERIFY2(error.contains(QStringLiteral("broken.keras: is not a .keras file")),
             qPrintable(error));
    QVERIFY(w->logView()->toPlainText().contains(QStringLiteral("Could not open: ")));
    QCOMPARE(w->filePath(), example("xor.json"));  // the experiment stays
  }
};

QTEST_MAIN(TestKerasFilesWindow)
#include "tst_keras_files_window.moc"
