// What a hands-on trial of the window found (issue 25), driven as a person does it: keys, the
// menus' actions and the dialogs they open. Step from idle, examples as read-only templates,
// results that belong to their experiment, Save As's shortcut, and the smaller texts.
#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QLabel>
#include <QLayout>
#include <QLineEdit>
#include <QListWidget>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QTimer>
#include <functional>

#include "core/io/experiment.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/zoom.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/model_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/panels/training_panel.h"
#include "ui/rehearsal/batch_split_view.h"
#include "ui/rehearsal/decision_view.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/window/experiment_document.h"
#include "ui/window/lesson_dialog.h"
#include "ui/window/main_window.h"
#include "ui/window/run_controller.h"
#include "ui/window/training_session.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::example;
using fixtures::makeWindow;

namespace {

int64_t stepsDone(MainWindow& w) {
  // The feed's counters carry over between takes; a take with nothing new still reports them.
  return w.session()->feed().take().stepsDone;
}

// The menu bar's menu (or submenu) titled `title` ("&Examples").
QMenu* menu(MainWindow& w, const QString& title) {
  for (QMenu* m : w.findChildren<QMenu*>())
    if (m->title() == title) return m;
  return nullptr;
}

QAction* menuAction(MainWindow& w, const QString& menuTitle, const QString& text) {
  if (QMenu* m = menu(w, menuTitle))
    for (QAction* a : m->actions())
      if (a->text() == text) return a;
  return nullptr;
}

// File > Examples' entry for resources/examples/<file> (listed by the experiment's name).
QAction* exampleAction(MainWindow& w, const char* file) {
  const std::string name = read_experiment(example(file).toStdString()).name;
  return menuAction(w, QStringLiteral("&Examples"), QString::fromStdString(name));
}

// The status bar's texts (its labels), joined by " | ".
QString statusTexts(MainWindow& w) {
  QStringList texts;
  for (QLabel* label : w.statusBar()->findChildren<QLabel*>())
    if (label->isVisible() && !label->text().isEmpty()) texts << label->text();
  return texts.join(QStringLiteral(" | "));
}

QByteArray bytesOf(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}

// Writes `bytes` to `name` in `dir`; returns its path ("" when it cannot).
QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size()) return {};
  return path;
}

// Hands the first modal dialog that opens in the next `ms` to `handle`, which must close it.
class ModalCatcher : public QObject {
 public:
  explicit ModalCatcher(std::function<void(QWidget*)> handle, int ms = 5000)
      : m_handle(std::move(handle)), m_ms(ms) {
    m_timer.setInterval(10);
    connect(&m_timer, &QTimer::timeout, this, [this] {
      if (QWidget* modal = QApplication::activeModalWidget()) {
        m_timer.stop();
        m_seen = true;
        m_handle(modal);
      } else if (m_clock.elapsed() > m_ms) {
        m_timer.stop();
      }
    });
    m_clock.start();
    m_timer.start();
  }
  bool seen() const { return m_seen; }

 private:
  std::function<void(QWidget*)> m_handle;
  int m_ms;
  QTimer m_timer;
  QElapsedTimer m_clock;
  bool m_seen = false;
};

// Restores a file's bytes when it goes (a failing test must not leave an example changed).
struct KeepBytes {
  explicit KeepBytes(QString p) : path(std::move(p)), bytes(bytesOf(path)) {}
  ~KeepBytes() {
    if (bytesOf(path) == bytes) return;
    QFile f(path);
    if (f.open(QIODevice::WriteOnly)) f.write(bytes);
  }
  QString path;
  QByteArray bytes;
};

}  // namespace

class TestWindowTrial : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
  }

  // F10 from idle trains one batch and holds, every time, on one device and on several; F10
  // while held trains one more; the status bar says it is paused.
  void stepFromIdleTrainsOneBatch_data() {
    QTest::addColumn<QString>("file");
    QTest::newRow("xor, one device") << QStringLiteral("xor.json");
    QTest::newRow("uneven shards, 3 devices") << QStringLiteral("uneven_shards.json");
  }
  void stepFromIdleTrainsOneBatch() {
    QFETCH(QString, file);
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QVERIFY(w->openFile(example(file.toLatin1().constData()), nullptr, true));
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    for (int round = 1; round <= 3; ++round) {
      QTest::keyClick(w.get(), Qt::Key_F10);
      QVERIFY(w->runs()->isRunning());
      // (The status first: stepsDone() takes the feed's news before the window could.)
      QTRY_VERIFY_WITH_TIMEOUT(
          statusTexts(*w).contains(QStringLiteral("Paused at epoch 1, step 1/")), 5000);
      QTest::qWait(150);
      QCOMPARE(stepsDone(*w), int64_t(1));  // held after exactly one batch
      QVERIFY(w->runs()->isRunning());
      QVERIFY(w->runs()->isPaused());
      QTest::keyClick(w.get(), Qt::Key_F10);
      QTRY_VERIFY_WITH_TIMEOUT(statusTexts(*w).contains(QStringLiteral("step 2/")), 5000);
      QTRY_COMPARE_WITH_TIMEOUT(stepsDone(*w), int64_t(2), 5000);
      QTest::qWait(100);
      QCOMPARE(stepsDone(*w), int64_t(2));
      QVERIFY(w->runs()->isPaused());
      QTest::keyClick(w.get(), Qt::Key_Period, Qt::ControlModifier);  // Stop
      QTRY_COMPARE_WITH_TIMEOUT(ended.count(), round, 10000);
      QCOMPARE(w->lastResult()->stop_reason, std::string("stopped"));
      QVERIFY(!w->runs()->isPaused());
    }
  }

  // Every example opens unmodified, whichever experiment (other data, another width) was open.
  void examplesOpenUnmodified() {
    auto w = makeWindow();
    const QStringList files = QDir(QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples"))
                                  .entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 10);
    for (const char* before : {"seed.json", "spiral.json", "regression.json", "blobs.json",
                               "model_parallel_2x2.json", "ring_vs_naive.json"}) {
      for (const QString& file : files) {
        QAction* first = exampleAction(*w, before);
        QAction* second = exampleAction(*w, file.toLatin1().constData());
        QVERIFY(first && second);
        first->trigger();
        QTest::qWait(20);
        QVERIFY2(!w->isWindowModified(), before);
        second->trigger();
        QTest::qWait(20);
        QVERIFY2(!w->isWindowModified(),
                 qPrintable(QStringLiteral("%1 after %2").arg(file, before)));
        QCOMPARE(w->filePath(), example(file.toLatin1().constData()));
        // Every example's values are in its fields' ranges: no sentence, Run allowed.
        QVERIFY2(w->setupError().isEmpty(),
                 qPrintable(QStringLiteral("%1: %2").arg(file, w->setupError())));
      }
    }
  }

  // A stray Enter in "Unsaved changes" does not write the file.
  void enterInUnsavedChangesDoesNotSave() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("mine.json"));
    QVERIFY(QFile::copy(example("xor.json"), path));
    const QByteArray before = bytesOf(path);
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QVERIFY(w->openFile(path, nullptr, true));
    w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->setValue(3);
    QVERIFY(w->isWindowModified());
    bool saveIsDefault = true;
    ModalCatcher catcher([&](QWidget* modal) {
      auto* box = qobject_cast<QMessageBox*>(modal);
      saveIsDefault = box && static_cast<QAbstractButton*>(box->defaultButton()) ==
                                 box->button(QMessageBox::Save);
      QTest::keyClick(modal, Qt::Key_Return);
    });
    QTest::keyClick(w.get(), Qt::Key_N, Qt::ControlModifier);  // New
    QVERIFY(catcher.seen());
    QVERIFY(!saveIsDefault);
    QCOMPARE(bytesOf(path), before);
    QCOMPARE(w->filePath(), path);  // Enter cancelled New
    QVERIFY(w->isWindowModified());
  }

  // Ctrl+S on an example asks where to save a copy (the home folder), never writes over it.
  void saveOnAnExampleGoesToSaveAs() {
    const QString path = example("spiral.json");
    const KeepBytes keep(path);
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    exampleAction(*w, "spiral.json")->trigger();
    QCOMPARE(w->filePath(), path);
    w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->setValue(3);
    QString suggested;
    ModalCatcher catcher([&](QWidget* modal) {
      if (auto* dialog = qobject_cast<QFileDialog*>(modal)) {
        suggested = dialog->directory().absolutePath();
        dialog->reject();
      } else {
        QTest::keyClick(modal, Qt::Key_Escape);
      }
    });
    QTest::keyClick(w.get(), Qt::Key_S, Qt::ControlModifier);
    QVERIFY(catcher.seen());
    QCOMPARE(suggested, QDir::homePath());
    QCOMPARE(bytesOf(path), keep.bytes);
  }

  // Opening another experiment (or New) starts without the previous one's results.
  void resultsBelongToTheirExperiment() {
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    exampleAction(*w, "one_vs_data_parallel.json")->trigger();
    for (int i = 1; i <= 2; ++i) {  // the first run becomes an overlay of the second
      QTest::keyClick(w.get(), Qt::Key_R, Qt::ControlModifier);
      QTRY_COMPARE_WITH_TIMEOUT(ended.count(), i, 60000);
    }
    QCOMPARE(w->lossChart()->overlayCount(), 1);
    QVERIFY(w->timelineView()->store().size() > 0);
    QVERIFY(!w->decisionView()->caption().isEmpty());
    QVERIFY(w->lastResult());

    // What a fresh window shows for seed.json (4 features, no boundary to draw).
    auto fresh = makeWindow();
    exampleAction(*fresh, "seed.json")->trigger();
    const QString freshMessage = fresh->decisionView()->message();
    const QString freshSplit = fresh->batchSplitView()->caption();
    fresh.reset();
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    const auto expectClean = [&](const char* when) {
      QVERIFY2(w->lossChart()->overlayCount() == 0, when);
      QVERIFY2(w->metricChart()->overlayCount() == 0, when);
      QVERIFY2(w->lossChart()->batchPointCount() == 0, when);
      QVERIFY2(w->lossChart()->epochPointCount(false) == 0, when);
      QVERIFY2(w->decisionView()->caption().isEmpty(), when);
      QVERIFY2(w->timelineView()->store().size() == 0, when);
      QVERIFY2(!w->lastResult(), when);
      for (const char* name : {"exportKerasModelAction", "exportKerasWeightsAction"})
        QVERIFY2(!w->findChild<QAction*>(QLatin1String(name))->isEnabled(), when);
    };
    exampleAction(*w, "seed.json")->trigger();
    expectClean("after opening seed.json");
    QCOMPARE(w->decisionView()->message(), freshMessage);
    QCOMPARE(w->batchSplitView()->caption(), freshSplit);

    // A run of this experiment has no overlay from the last one; New clears it too.
    QTest::keyClick(w.get(), Qt::Key_R, Qt::ControlModifier);
    QTRY_COMPARE_WITH_TIMEOUT(ended.count(), 3, 60000);
    QCOMPARE(w->lossChart()->overlayCount(), 0);
    QVERIFY(w->lossChart()->epochPointCount(false) > 0);
    QTest::keyClick(w.get(), Qt::Key_N, Qt::ControlModifier);
    expectClean("after New");
  }

  // Ctrl+Shift+S is Save As on every platform, and the menus show every action's shortcut.
  void saveAsHasItsShortcut() {
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QAction* saveAs = menuAction(*w, QStringLiteral("&File"), QStringLiteral("Save &As…"));
    QVERIFY(saveAs);
    QCOMPARE(saveAs->shortcut(), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_S));
    for (const auto& [title, text] : {std::pair{"&File", "&New"},
                                      {"&File", "&Open…"},
                                      {"&File", "&Save"},
                                      {"&File", "&Quit"},
                                      {"&Run", "&Run"},
                                      {"&Run", "S&tep"},
                                      {"&Run", "St&op"}}) {
      QAction* a = menuAction(*w, QLatin1String(title), QString::fromUtf8(text));
      QVERIFY2(a && !a->shortcut().isEmpty() && a->isShortcutVisibleInContextMenu(), text);
    }
    bool dialog = false;
    ModalCatcher catcher([&](QWidget* modal) {
      dialog = qobject_cast<QFileDialog*>(modal) != nullptr;
      if (auto* d = qobject_cast<QDialog*>(modal)) d->reject();
    });
    QTest::keyClick(w.get(), Qt::Key_S, Qt::ControlModifier | Qt::ShiftModifier);
    QVERIFY(catcher.seen());
    QVERIFY(dialog);
  }

  // Open Recent tells two files of the same name apart by their folders.
  void recentFilesShowTheirFolders() {
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkpath(QStringLiteral("a")) &&
            QDir(dir.path()).mkpath(QStringLiteral("b")));
    const QString a = dir.filePath(QStringLiteral("a/seed.json"));
    const QString b = dir.filePath(QStringLiteral("b/seed.json"));
    QVERIFY(QFile::copy(example("seed.json"), a) && QFile::copy(example("seed.json"), b));
    ExperimentDocument::addRecentFile(a);
    ExperimentDocument::addRecentFile(b);
    auto w = makeWindow();
    QMenu* recent = menu(*w, QStringLiteral("Open &Recent"));
    QVERIFY(recent && recent->actions().size() >= 2);
    const QString first = recent->actions()[0]->text(), second = recent->actions()[1]->text();
    QVERIFY2(first != second, qPrintable(first));
    QVERIFY2(first.contains(QDir::toNativeSeparators(QFileInfo(b).absolutePath())),
             qPrintable(first));
    QVERIFY2(second.contains(QDir::toNativeSeparators(QFileInfo(a).absolutePath())),
             qPrintable(second));
    recent->actions()[1]->trigger();
    QCOMPARE(w->filePath(), QFileInfo(a).absoluteFilePath());
  }

  // Four devices without a strategy: the status bar says training uses cpu:0.
  void statusSaysWhatDevicesTrain() {
    auto w = makeWindow();
    exampleAction(*w, "xor.json")->trigger();
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    count->selectAll();
    QTest::keyClicks(count, QStringLiteral("4"));
    QCOMPARE(count->value(), 4);
    const QString status = statusTexts(*w);
    QVERIFY2(status.contains(QStringLiteral("4 devices")), qPrintable(status));
    QVERIFY2(!status.contains(QStringLiteral("single device")), qPrintable(status));
    QVERIFY2(
        status.contains(QStringLiteral("no strategy")) && status.contains(QStringLiteral("cpu:0")),
        qPrintable(status));
  }

  // ModelParallel chosen with the keyboard on 4 devices gets a 2 x 2 mesh that runs, follows the
  // device count until the mesh is edited, and Fill default says why it splits nothing.
  void modelParallelDefaultsWork() {
    auto w = makeWindow();
    exampleAction(*w, "xor.json")->trigger();
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    auto* strategy = w->strategyPanel()->findChild<QComboBox*>(QStringLiteral("strategy"));
    auto* rows = w->strategyPanel()->findChild<QSpinBox*>(QStringLiteral("meshRows"));
    auto* cols = w->strategyPanel()->findChild<QSpinBox*>(QStringLiteral("meshCols"));
    auto* messages = w->strategyPanel()->findChild<QLabel*>(QStringLiteral("layoutMessages"));
    QVERIFY(count && strategy && rows && cols && messages);
    w->showView(QStringLiteral("devices"));
    count->selectAll();
    QTest::keyClicks(count, QStringLiteral("4"));
    QCOMPARE(count->value(), 4);
    const int modelParallel = strategy->findData(QStringLiteral("ModelParallel"));
    QVERIFY(modelParallel > 0);
    strategy->setFocus();
    while (strategy->currentIndex() < modelParallel) QTest::keyClick(strategy, Qt::Key_Down);
    QCOMPARE(strategy->currentIndex(), modelParallel);
    QCOMPARE(rows->value(), 2);
    QCOMPARE(cols->value(), 2);
    QVERIFY2(w->setupError().isEmpty(), qPrintable(w->setupError()));
    // xor's hidden layer (8 units) splits over 2; its 1-unit output is never split.
    const ExperimentSpec spec = w->currentSpec();
    QCOMPARE(spec.distribution.mesh_shape, (std::vector<int>{2, 2}));
    for (const auto& [key, axes] : spec.distribution.layout_map)
      QVERIFY2(key.find("dense_1") == std::string::npos, key.c_str());
    QVERIFY(fixtures::runToEnd(*w));
    // The mesh follows the device count: 8 devices, 2 x 4.
    count->selectAll();
    QTest::keyClicks(count, QStringLiteral("8"));
    QCOMPARE(rows->value(), 2);
    QCOMPARE(cols->value(), 4);
    QVERIFY2(w->setupError().isEmpty(), qPrintable(w->setupError()));
    // Edited by hand, it stays as the user left it (and says when it does not cover the devices).
    rows->selectAll();
    QTest::keyClicks(rows, QStringLiteral("1"));
    count->selectAll();
    QTest::keyClicks(count, QStringLiteral("6"));
    QCOMPARE(rows->value(), 1);
    QCOMPARE(cols->value(), 4);
    QVERIFY(!w->setupError().isEmpty());
    // A model axis no unit count divides: Fill default says why it split nothing.
    rows->selectAll();
    QTest::keyClicks(rows, QStringLiteral("2"));
    cols->selectAll();
    QTest::keyClicks(cols, QStringLiteral("3"));
    auto* fill = w->strategyPanel()->findChild<QPushButton*>(QStringLiteral("fillDefaultLayout"));
    QVERIFY(fill && fill->isVisible());
    QTest::mouseClick(fill, Qt::LeftButton);
    QVERIFY2(messages->text().contains(QStringLiteral("split nothing")) &&
                 messages->text().contains(QStringLiteral("(8, 1)")),
             qPrintable(messages->text()));
    if (const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS"); !dir.isEmpty())
      QVERIFY(
          w->strategyPanel()->grab().save(dir + QStringLiteral("/model_parallel_defaults.png")));
  }

  // A file's values the fields cannot take are shown as they are, with a sentence beside the
  // field and Run refused; values typed are kept as typed (no clamp to the field's range).
  void fieldsShowValuesAsTheyAre() {
    QTemporaryDir dir;
    QByteArray text = bytesOf(example("xor.json"));
    text.replace("\"units\": 8", "\"units\": 1000000000");
    text.replace("\"samples\": 400", "\"samples\": 100000000");
    text.replace("\"seed\": 1,\n  \"data\"",
                 "\"seed\": 1,\n  \"devices\": {\"count\": 32},\n  \"data\"");
    const QString file = writeFile(dir, QStringLiteral("big.json"), text);
    QVERIFY(!file.isEmpty());
    auto w = makeWindow();
    QVERIFY(w->openFile(file, nullptr, true));
    auto* samples = w->dataPanel()->findChild<QSpinBox*>(QStringLiteral("samples"));
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    auto* units = w->modelPanel()->findChild<QSpinBox*>(QStringLiteral("units"));
    QVERIFY(samples && count && units);
    QCOMPARE(samples->value(), 100000000);
    QVERIFY2(w->dataPanel()->errorText().contains(QStringLiteral("at most 10000000")),
             qPrintable(w->dataPanel()->errorText()));
    QCOMPARE(count->value(), 32);
    QVERIFY2(w->devicesPanel()->errorText().contains(QStringLiteral("at most 16")),
             qPrintable(w->devicesPanel()->errorText()));
    w->showView(QStringLiteral("model"));
    w->modelPanel()->layerList()->setCurrentRow(1);  // the hidden layer
    QCOMPARE(units->value(), 1000000000);
    auto* unitsError = w->modelPanel()->findChild<QLabel*>(QStringLiteral("unitsRangeError"));
    QVERIFY(unitsError && unitsError->isVisibleTo(w->modelPanel()));
    QVERIFY2(unitsError->text().contains(QStringLiteral("at most 1,048,576")),
             qPrintable(unitsError->text()));
    QVERIFY(!w->setupError().isEmpty());
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(!w->runs()->isRunning());  // refused, with the sentence
    QCOMPARE(ended.count(), 1);
    QCOMPARE(ended.first().first().toBool(), false);

    // Typed: -5 units and 100 devices are shown as typed and refused with a sentence.
    units->selectAll();
    QTest::keyClicks(units, QStringLiteral("-5"));
    QCOMPARE(units->value(), -5);
    QVERIFY2(w->modelPanel()->errorText().contains(QStringLiteral("at least 1")),
             qPrintable(w->modelPanel()->errorText()));
    w->showView(QStringLiteral("devices"));
    count->selectAll();
    QTest::keyClicks(count, QStringLiteral("100"));
    QCOMPARE(count->value(), 100);
    QVERIFY2(w->devicesPanel()->errorText().contains(QStringLiteral("100 devices")),
             qPrintable(w->devicesPanel()->errorText()));

    // Learning rates a file may hold are kept as typed: 1e9 and 1e-30; -5 is refused.
    w->showView(QStringLiteral("training"));
    auto* rate = w->trainingPanel()->findChild<QDoubleSpinBox*>(QStringLiteral("learning_rate"));
    QVERIFY(rate);
    for (const auto& [typed, value] : {std::pair{"1e9", 1e9}, std::pair{"1e-30", 1e-30}}) {
      rate->selectAll();
      QTest::keyClicks(rate, QLatin1String(typed));
      QTest::keyClick(rate, Qt::Key_Tab);
      QCOMPARE(rate->value(), value);
      QCOMPARE(*w->currentSpec().compile.optimizer.learning_rate, value);
      QVERIFY2(w->trainingPanel()->errorText().isEmpty(),
               qPrintable(w->trainingPanel()->errorText()));
    }
    rate->selectAll();
    QTest::keyClicks(rate, QStringLiteral("-5"));
    QTest::keyClick(rate, Qt::Key_Tab);
    QCOMPARE(rate->value(), -5.0);
    QVERIFY2(
        w->trainingPanel()->errorText().startsWith(QStringLiteral("Learning rate must be above 0")),
        qPrintable(w->trainingPanel()->errorText()));
    // The sentence is under the field, with the room its lines take.
    auto* rateError =
        w->trainingPanel()->findChild<QLabel*>(QStringLiteral("learning_rateRangeError"));
    QVERIFY(rateError);
    QTRY_VERIFY(rateError->isVisible() && rateError->height() >= rateError->fontMetrics().height());
    QVERIFY(rateError->geometry().top() >= rate->geometry().bottom());
    if (const QString shots = qEnvironmentVariable("FITBENCH_SCREENSHOTS"); !shots.isEmpty())
      QVERIFY(w->grab().save(shots + QStringLiteral("/values_as_they_are.png")));
  }

  // Presentation zoom: Ctrl++ makes every text and chart larger, Ctrl+- smaller, Ctrl+0 actual
  // size; the next window starts at the zoom the last one had.
  void presentationZoom() {
    // From actual size, and back to it whatever happens (other tests share the settings).
    struct Reset {
      Reset() { reset(); }
      ~Reset() { reset(); }
      static void reset() {
        QSettings().remove(QStringLiteral("view/zoom"));
        setZoom(1.0);
      }
    } reset;
    const double base = QApplication::font().pointSizeF();
    {
      auto w = makeWindow();
      QVERIFY(QTest::qWaitForWindowActive(w.get()));
      exampleAction(*w, "spiral.json")->trigger();
      QVERIFY(fixtures::runToEnd(*w));
      auto* chart = w->findChild<MetricChart*>();
      QVERIFY(chart);
      const double title = chart->chart()->titleFont().pointSizeF();
      const double axis = chart->chart()->axes().front()->labelsFont().pointSizeF();
      QTest::keyClick(w.get(), Qt::Key_Equal, Qt::ControlModifier);
      QTest::keyClick(w.get(), Qt::Key_Equal, Qt::ControlModifier);
      QTest::keyClick(w.get(), Qt::Key_Equal, Qt::ControlModifier);  // 110%, 125%, 150%
      QCOMPARE(QApplication::font().pointSizeF(), base * 1.5);
      QCOMPARE(chart->chart()->titleFont().pointSizeF(), title * 1.5);
      QCOMPARE(chart->chart()->axes().front()->labelsFont().pointSizeF(), axis * 1.5);
      QVERIFY(statusTexts(*w).contains(QStringLiteral("Zoom 150%")));
      // A log scale's new axis comes at the zoom too.
      auto* log = chart->findChild<QCheckBox*>();
      QVERIFY(log);
      QTest::mouseClick(log, Qt::LeftButton);
      for (QAbstractAxis* a : chart->chart()->axes())
        QCOMPARE(a->labelsFont().pointSizeF(), axis * 1.5);
      if (const QString shots = qEnvironmentVariable("FITBENCH_SCREENSHOTS"); !shots.isEmpty()) {
        QTest::qWait(200);  // the charts' layout pass
        QVERIFY(w->grab().save(shots + QStringLiteral("/zoom_150.png")));
      }
      QTest::keyClick(w.get(), Qt::Key_Minus, Qt::ControlModifier);
      QCOMPARE(QApplication::font().pointSizeF(), base * 1.25);
    }
    {
      auto w = makeWindow();  // remembered
      QVERIFY(QTest::qWaitForWindowActive(w.get()));
      QCOMPARE(QApplication::font().pointSizeF(), base * 1.25);
      QTest::keyClick(w.get(), Qt::Key_0, Qt::ControlModifier);
      QCOMPARE(QApplication::font().pointSizeF(), base);
    }
    auto w = makeWindow();
    QCOMPARE(QApplication::font().pointSizeF(), base);
  }

  // The pace, chosen with the keyboard in the toolbar, holds a run to at most 30 steps a second
  // (a lower bound on its time: a loaded machine only makes it longer).
  void paceSlowsTraining() {
    QTemporaryDir dir;
    QByteArray text = bytesOf(example("xor.json"));
    text.replace("\"epochs\": 30", "\"epochs\": 1");  // 25 batches
    const QString file = writeFile(dir, QStringLiteral("xor1.json"), text);
    QVERIFY(!file.isEmpty());
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QVERIFY(w->openFile(file, nullptr, true));
    auto* pace = w->findChild<QComboBox*>(QStringLiteral("pace"));
    QVERIFY(pace && pace->isVisible());
    pace->setFocus();
    QTest::keyClick(pace, Qt::Key_Down);
    QCOMPARE(pace->currentText(), QStringLiteral("30 steps/s"));
    QVERIFY(statusTexts(*w).contains(QStringLiteral("Pace: 30 steps/s")));
    QElapsedTimer clock;
    clock.start();
    QVERIFY(fixtures::runToEnd(*w));
    QVERIFY2(clock.elapsed() >= 24 * 1000 / 30, qPrintable(QString::number(clock.elapsed())));
    QCOMPARE(stepsDone(*w), int64_t(25));
    QTest::keyClick(pace, Qt::Key_Up);  // back to real time for the next test
    QCOMPARE(pace->currentData().toDouble(), 0.0);
  }

  // Warnings that teach: features on very different scales (beside Standardize, gone once it is
  // ticked), and a loss that stopped moving (xor without a hidden layer: a coin flip).
  void warningsThatTeach() {
    QTemporaryDir dir;
    {
      QFile csv(dir.filePath(QStringLiteral("scales.csv")));
      QVERIFY(csv.open(QIODevice::WriteOnly));
      csv.write("small,large,label\n");
      for (int i = 0; i < 40; ++i)
        csv.write(QStringLiteral("%1,%2,%3\n")
                      .arg(0.01 * (i % 7))
                      .arg(1000.0 * (i % 5))
                      .arg(i % 2)
                      .toUtf8());
    }
    QByteArray text = bytesOf(example("xor.json"));
    text.replace(
        "\"data\": {\"generator\": \"xor\", \"samples\": 400, \"noise\": 0.05, \"seed\": 1}",
        "\"data\": {\"csv\": \"scales.csv\", \"target\": [\"label\"]}");
    const QString file = writeFile(dir, QStringLiteral("scales.json"), text);
    QVERIFY(!file.isEmpty());
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QVERIFY(w->openFile(file, nullptr, true));
    w->showView(QStringLiteral("data"));
    auto* warning = w->dataPanel()->findChild<QLabel*>(QStringLiteral("scaleWarning"));
    auto* standardize = w->dataPanel()->findChild<QCheckBox*>(QStringLiteral("standardize"));
    QVERIFY(warning && standardize);
    QTRY_VERIFY(warning->isVisible());
    QVERIFY2(warning->text().contains(QStringLiteral("large spreads")) &&
                 warning->text().contains(QStringLiteral("small")) &&
                 warning->text().contains(QStringLiteral("Standardize features")),
             qPrintable(warning->text()));
    QVERIFY(w->setupError().isEmpty());  // a warning: the run is not refused
    QTest::mouseClick(standardize, Qt::LeftButton, {}, QPoint(8, standardize->height() / 2));
    QVERIFY(standardize->isChecked());
    QTRY_VERIFY(!warning->isVisible());

    // xor with its hidden layer taken out: the loss settles at ln 2.
    text = bytesOf(example("xor.json"));
    text.replace(
        "        {\"class_name\": \"Dense\", \"config\": {\"name\": \"hidden\", \"units\": 8, "
        "\"activation\": \"tanh\"}},\n",
        "");
    text.replace("\"epochs\": 30", "\"epochs\": 60");
    const QString linear = writeFile(dir, QStringLiteral("linear.json"), text);
    QVERIFY(!linear.isEmpty());
    QVERIFY(w->openFile(linear, nullptr, true));
    QCOMPARE(w->currentSpec().model.layers.size(), size_t(2));
    QVERIFY(fixtures::runToEnd(*w));
    const QString log = w->findChild<QPlainTextEdit*>(QStringLiteral("log"))->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("the model is not learning")), qPrintable(log.right(600)));
    QVERIFY2(log.contains(QStringLiteral("near ln 2")), qPrintable(log.right(600)));
    QCOMPARE(log.count(QStringLiteral("the model is not learning")), 1);
    // The xor example itself learns: no such warning.
    exampleAction(*w, "xor.json")->trigger();
    QVERIFY(fixtures::runToEnd(*w));
    const QString learned = w->findChild<QPlainTextEdit*>(QStringLiteral("log"))->toPlainText();
    QCOMPARE(learned.count(QStringLiteral("the model is not learning")), 1);  // the old line only
  }

  // File > Name and lesson (Ctrl+L): the name and lesson typed in the dialog show in About this
  // experiment, mark the experiment modified and are saved with it; File > New starts with its
  // own text, which names no data set.
  void nameAndLessonAreEditable() {
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    exampleAction(*w, "xor.json")->trigger();
    QVERIFY(!w->isWindowModified());
    QTimer::singleShot(0, [] {
      auto* dialog = qobject_cast<LessonDialog*>(QApplication::activeModalWidget());
      QVERIFY(dialog);
      auto* name = dialog->findChild<QLineEdit*>(QStringLiteral("experimentName"));
      auto* text = dialog->findChild<QPlainTextEdit*>(QStringLiteral("experimentDescription"));
      name->selectAll();
      QTest::keyClicks(name, QStringLiteral("XOR, lesson 2"));
      text->selectAll();
      QTest::keyClicks(text, QStringLiteral("Take the hidden layer out: what happens?"));
      auto* buttons = dialog->findChild<QDialogButtonBox*>();
      QTest::mouseClick(buttons->button(QDialogButtonBox::Ok), Qt::LeftButton);
    });
    QTest::keyClick(w.get(), Qt::Key_L, Qt::ControlModifier);
    QCOMPARE(w->currentSpec().name, std::string("XOR, lesson 2"));
    QCOMPARE(w->currentSpec().description, std::string("Take the hidden layer out: what happens?"));
    auto* about = w->findChild<QTextBrowser*>();
    QVERIFY(about);
    QVERIFY(about->toPlainText().contains(QStringLiteral("XOR, lesson 2")));
    QVERIFY(about->toPlainText().contains(QStringLiteral("what happens?")));
    QVERIFY(w->isWindowModified());
    // Saved with the experiment (an example saves to a new file).
    QTemporaryDir dir;
    const QString copy = dir.filePath(QStringLiteral("lesson2.json"));
    w->activateWindow();  // the offscreen platform does not give the window back by itself
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    {
      ModalCatcher catcher([&](QWidget* modal) {
        if (auto* dialog = qobject_cast<QFileDialog*>(modal)) {
          // As a person answers it: the name typed into its field, then Enter.
          auto* field = dialog->findChild<QLineEdit*>(QStringLiteral("fileNameEdit"));
          QVERIFY(field);
          field->setText(copy);
          QTest::keyClick(field, Qt::Key_Return);
        }
      });
      QTest::keyClick(w.get(), Qt::Key_S, Qt::ControlModifier);
      QVERIFY(catcher.seen());
    }
    QTRY_VERIFY(QFile::exists(copy));
    const ExperimentSpec saved = read_experiment(copy.toStdString());
    QCOMPARE(saved.name, std::string("XOR, lesson 2"));
    QCOMPARE(saved.description, std::string("Take the hidden layer out: what happens?"));
    QVERIFY(!w->isWindowModified());
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    // Cancel changes nothing.
    QTimer::singleShot(0, [] {
      auto* dialog = qobject_cast<LessonDialog*>(QApplication::activeModalWidget());
      QVERIFY(dialog);
      QTest::keyClicks(dialog->findChild<QLineEdit*>(QStringLiteral("experimentName")),
                       QStringLiteral(" (draft)"));
      QTest::keyClick(dialog, Qt::Key_Escape);
    });
    QTest::keyClick(w.get(), Qt::Key_L, Qt::ControlModifier);
    QCOMPARE(w->currentSpec().name, std::string("XOR, lesson 2"));
    QVERIFY(!w->isWindowModified());
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    // New: its own text.
    QTest::keyClick(w.get(), Qt::Key_N, Qt::ControlModifier);
    QTRY_COMPARE(w->currentSpec().name, std::string("Untitled"));
    QVERIFY(about->toPlainText().contains(QStringLiteral("Name and lesson")));
    QVERIFY(!about->toPlainText().contains(QStringLiteral("circle")));
  }

  // File > Export > History as JSON suggests history.json.
  void historyAsJsonSuggestsJson() {
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    exampleAction(*w, "seed.json")->trigger();
    QTest::keyClick(w.get(), Qt::Key_R, Qt::ControlModifier);
    QVERIFY(ended.wait(60000));
    for (const auto& [text, name] : {std::pair{"History as CSV…", "history.csv"},
                                     std::pair{"History as JSON…", "history.json"}}) {
      QAction* history = menuAction(*w, QStringLiteral("&Export"), QString::fromUtf8(text));
      QVERIFY(history && history->isEnabled());
      QString suggested;
      ModalCatcher catcher([&](QWidget* modal) {
        if (auto* dialog = qobject_cast<QFileDialog*>(modal)) {
          suggested = dialog->selectedFiles().value(0);
          dialog->reject();
        }
      });
      history->trigger();
      QVERIFY(catcher.seen());
      QVERIFY2(QFileInfo(suggested).fileName() == QLatin1String(name), qPrintable(suggested));
    }
  }

  // An empty CSV file says it is empty; a binary one that it is not text.
  void unreadableCsvSaysWhy_data() {
    QTest::addColumn<QByteArray>("bytes");
    QTest::addColumn<QString>("says");
    QTest::newRow("empty") << QByteArray() << QStringLiteral("is empty");
    QTest::newRow("blank lines") << QByteArray("\n\n  \n") << QStringLiteral("is empty");
    QTest::newRow("NUL bytes") << QByteArray("PK\x03\x04\x00\x00\n\x01\x02(\x00\xff", 13)
                               << QStringLiteral("is not a text file");
    QTest::newRow("not UTF-8") << QByteArray("a,b\n\xff\xfe\x80,1\n")
                               << QStringLiteral("is not UTF-8 text");
  }
  void unreadableCsvSaysWhy() {
    QFETCH(QByteArray, bytes);
    QFETCH(QString, says);
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("binary.csv"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(bytes);
    f.close();
    auto w = makeWindow();
    w->dataPanel()->loadCsvFile(path);  // what Browse… and a drop on the window do
    const QString error = w->dataPanel()->errorText();
    QVERIFY2(error.contains(says), qPrintable(error));
    QVERIFY2(!error.contains(QStringLiteral("data.target")), qPrintable(error));
  }

  // A batch size beyond the data: before a run the batch split says the rows a batch really
  // has (a CSV file's rows, once read), and after a run that batch is drawn full.
  void batchSplitShowsTheRowsABatchHas() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("points.csv"));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("a,b,label\n");
    for (int i = 0; i < 400; ++i)
      f.write(QStringLiteral("%1,%2,%3\n").arg(i % 7).arg(i % 5).arg(i % 2).toUtf8());
    f.close();
    auto w = makeWindow();
    QVERIFY(w->openFile(example("xor.json"), nullptr, true));
    w->dataPanel()->loadCsvFile(path);
    QVERIFY2(w->dataPanel()->errorText().isEmpty(), qPrintable(w->dataPanel()->errorText()));
    auto* batch = w->trainingPanel()->findChild<QSpinBox*>(QStringLiteral("batch_size"));
    QVERIFY(batch != nullptr);
    batch->selectAll();
    QTest::keyClicks(batch, QStringLiteral("1000"));
    QTest::keyClick(batch, Qt::Key_Return);
    QCOMPARE(batch->value(), 1000);
    QTRY_VERIFY2(w->batchSplitView()->caption().contains(QStringLiteral("one batch of 400 rows")),
                 qPrintable(w->batchSplitView()->caption()));
    QVERIFY(!w->batchSplitView()->caption().contains(QStringLiteral("1000 rows")));
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(ended.wait(60000));
    QVERIFY(!w->batchSplitView()->batches().empty());
    QVERIFY(!w->batchSplitView()->batches().front().partial);
    QCOMPARE(w->batchSplitView()->batches().front().rows, int64_t{400});
  }
};

QTEST_MAIN(TestWindowTrial)
#include "tst_window_trial.moc"
