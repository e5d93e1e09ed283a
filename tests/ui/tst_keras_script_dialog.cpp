// File > Export > Keras script as a user drives it: the action opens a dialog holding the open
// experiment's script (read-only, monospace), Copy puts it on the clipboard, Save writes the .py
// file, and an experiment that cannot be planned shows its problem as a sentence. With
// FITBENCH_SCREENSHOT_DIR set, the dialog is saved there as keras-script.png.
#include <QClipboard>
#include <QFontMetrics>
#include <QGuiApplication>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QScrollBar>
#include <QTemporaryDir>
#include <QTest>

#include "core/io/experiment.h"
#include "ui/window/keras_script_dialog.h"
#include "ui/window/main_window.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::example;
using fixtures::makeWindow;

namespace {

// Triggers File > Export > Keras script... and returns the dialog it opens.
KerasScriptDialog* openDialog(MainWindow& w) {
  QAction* action = w.findChild<QAction*>(QStringLiteral("exportKerasScriptAction"));
  if (action == nullptr || action->text() != QStringLiteral("Keras script…")) return nullptr;
  action->trigger();
  return w.findChild<KerasScriptDialog*>();
}

QPushButton* button(QWidget& dialog, const QString& text) {
  for (QPushButton* b : dialog.findChildren<QPushButton*>())
    if (b->text() == text) return b;
  return nullptr;
}

}  // namespace

class TestKerasScriptDialog : public QObject {
  Q_OBJECT

 private slots:
  void showsCopiesAndSaves() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("model_parallel_2x2.json"), nullptr, true));
    KerasScriptDialog* dialog = openDialog(*w);
    QVERIFY(dialog != nullptr);
    QTRY_VERIFY(dialog->isVisible());
    auto* text = dialog->findChild<QPlainTextEdit*>(QStringLiteral("kerasScriptText"));
    QVERIFY(text != nullptr);
    QVERIFY(text->isReadOnly());
    // Monospace: every character as wide as another (Qt's fixedPitch() says no for some
    // monospace fonts, Noto Sans Mono among them).
    const QFontMetrics metrics(text->font());
    QCOMPARE(metrics.horizontalAdvance(QStringLiteral("iiii")),
             metrics.horizontalAdvance(QStringLiteral("WWWW")));
    const QString script = text->toPlainText();
    for (const char* part :
         {"keras.utils.set_random_seed(", "keras.distribution.DeviceMesh(shape=(2, 2)",
          "layout_map[\"hidden.*kernel\"] = (None, \"model\")",
          "keras.distribution.ModelParallel(layout_map=layout_map", "model.fit("})
      QVERIFY2(script.contains(QLatin1String(part)), part);
    QVERIFY(dialog->errorText().isEmpty());

    if (const QString shots = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR"); !shots.isEmpty()) {
      dialog->resize(820, 680);
      text->verticalScrollBar()->setValue(0);
      QVERIFY(dialog->grab().save(shots + QStringLiteral("/keras-script.png")));
    }

    QGuiApplication::clipboard()->clear();
    QPushButton* copy = button(*dialog, QStringLiteral("&Copy"));
    QVERIFY(copy != nullptr && copy->isEnabled());
    QTest::mouseClick(copy, Qt::LeftButton);
    QCOMPARE(QGuiApplication::clipboard()->text(), script);
    QVERIFY(
        dialog->findChild<QLabel*>(QStringLiteral("kerasScriptStatus"))->text().contains("Copied"));

    QTemporaryDir dir;
    const QString path = dir.filePath("mp.py");
    QVERIFY(dialog->saveTo(path));
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(f.readAll()), script);
    // A folder is not a file: the reason is a sentence in the dialog.
    QVERIFY(!dialog->saveTo(dir.path()));
    QVERIFY2(dialog->errorText().startsWith("Could not save: "), qPrintable(dialog->errorText()));

    QPushButton* close = button(*dialog, QStringLiteral("Close"));
    QVERIFY(close != nullptr);
    QTest::mouseClick(close, Qt::LeftButton);
    QTRY_VERIFY(w->findChild<KerasScriptDialog*>() == nullptr);  // closed and deleted
  }

  // An experiment whose data file is missing: no script, the sentence names the file.
  void showsWhyThereIsNoScript() {
    QTemporaryDir dir;
    ExperimentSpec spec = read_experiment(example("seed.json").toStdString());
    spec.data.generator.clear();
    spec.data.csv = dir.filePath("missing.csv").toStdString();
    spec.data.target = {"y"};
    auto w = makeWindow();
    w->loadSpec(spec, QString());
    KerasScriptDialog* dialog = openDialog(*w);
    QVERIFY(dialog != nullptr);
    QVERIFY2(dialog->errorText().contains("missing.csv"), qPrintable(dialog->errorText()));
    QVERIFY(dialog->script().isEmpty());
    QVERIFY(!button(*dialog, QStringLiteral("&Copy"))->isEnabled());
    QVERIFY(!button(*dialog, QStringLiteral("&Save…"))->isEnabled());
  }
};

QTEST_MAIN(TestKerasScriptDialog)
#include "tst_keras_script_dialog.moc"
