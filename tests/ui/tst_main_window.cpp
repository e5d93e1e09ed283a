// The workbench window as a user drives it: open an example, choose devices and a strategy, run,
// pause, step, stop, save and reopen, a bad data file, closing during training, and the window's
// command line (--run --screenshot --quit).
#include <QApplication>
#include <QChart>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QLabel>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProcess>
#include <QPushButton>
#include <QSet>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <QValueAxis>

#include "core/distribution/collectives/collective_schedule.h"
#include "core/io/experiment.h"
#include "tests/core/idx_fixtures.h"
#include "ui/charts/metric_chart.h"
#include "ui/images/images_view.h"
#include "ui/panels/data_panel.h"
#include "ui/panels/devices_panel.h"
#include "ui/panels/strategy_panel.h"
#include "ui/rehearsal/batch_split_view.h"
#include "ui/rehearsal/collectives_view.h"
#include "ui/rehearsal/decision_view.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/window/experiment_document.h"
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

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
  }

  void runSeedOnTwoDevices() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    // Two devices and DataParallel, through the widgets.
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    QVERIFY(count);
    count->setValue(2);
    auto* strategy = w->strategyPanel()->findChild<QComboBox*>(QStringLiteral("strategy"));
    QVERIFY(strategy);
    strategy->setCurrentIndex(strategy->findText(QStringLiteral("DataParallel")));
    QVERIFY(w->isModified());
    QVERIFY(w->windowTitle().contains(QStringLiteral("[*]")));

    QSignalSpy started(w->session(), &TrainingSession::started);
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.first().first().toBool(), true);
    QCOMPARE(started.size(), 1);
    QCOMPARE(started.first().at(0).toInt(), 2);
    QCOMPARE(started.first().at(2).toString(), QStringLiteral("DataParallel"));
    // One point per epoch on both charts; the log holds Keras's lines.
    QCOMPARE(w->lossChart()->epochPointCount(false), 4);
    QCOMPARE(w->metricChart()->epochPointCount(false), 4);
    QVERIFY(w->lossChart()->batchPointCount() >= 4 * 8);
    const QString log = w->logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("Devices: ['cpu:0', 'cpu:1']")), qPrintable(log));
    QVERIFY(log.contains(QStringLiteral("Distribution: DataParallel")));
    QVERIFY(log.contains(QStringLiteral("Epoch 4/4")));
    QVERIFY(w->lastResult());
    QCOMPARE(int(w->lastResult()->history.epoch.size()), 4);
    // Loss falls over the run.
    const auto& loss = w->lastResult()->history.history.at("loss");
    QVERIFY(loss.back() < loss.front());
    // A second run keeps the first as an overlay.
    w->run();
    QVERIFY(ended.wait(30000));
    QCOMPARE(w->lossChart()->overlayCount(), 1);
  }

  // A run that trains every epoch before the window sees it begin (its started signal is
  // queued, and the feed timer can fire first) is still the window's run 1: its own curves, not
  // a faded "earlier run", and the log's run line before its epochs.
  void fastRunIsNotAnEarlierRun() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("xor.json"), nullptr, true));
    auto* feedTimer = w->runs()->findChild<QTimer*>(QStringLiteral("feedTimer"));
    QVERIFY(feedTimer);
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    // The UI thread is busy while the training thread trains xor's 30 epochs (milliseconds);
    // then the timer fires before the queued started signal is delivered.
    QThread::msleep(1500);
    QVERIFY(QMetaObject::invokeMethod(feedTimer, "timeout"));
    QVERIFY(ended.wait(30000));
    QCOMPARE(ended.first().first().toBool(), true);
    QCOMPARE(w->lossChart()->overlayCount(), 0);
    QCOMPARE(w->lossChart()->epochPointCount(false), 30);
    QCOMPARE(w->metricChart()->overlayCount(), 0);
    const QString log = w->logView()->toPlainText();
    const auto header = log.indexOf(QStringLiteral("── run 1 "));
    QVERIFY2(header >= 0 && header < log.indexOf(QStringLiteral("Epoch 1/30")), qPrintable(log));
  }

  // The rehearsal views follow a distributed run: one timeline lane per device with every step
  // of the run kept and every phase drawn, the batch split view showing the last step's shards
  // as the engine split them, and the collectives view the measured all-reduce.
  void rehearsalViewsFollowTheRun() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("uneven_shards.json"), nullptr, true));
    const ExperimentSpec spec = read_experiment(example("uneven_shards.json").toStdString());
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(ended.wait(60000));
    QCOMPARE(ended.first().first().toBool(), true);
    // 95 samples in batches of 10: 10 steps per epoch.
    const int steps = spec.fit.epochs * 10;
    QCOMPARE(w->timelineView()->laneCount(), 3);
    QCOMPARE(int(w->timelineView()->store().size()), steps);
    const StepTrace& last = w->timelineView()->store().step(size_t(steps - 1));
    QCOMPARE(last.shard_rows, (std::vector<int64_t>{2, 2, 1}));  // the partial batch of 5
    w->timelineView()->showStep(0);
    QSet<int> kinds;
    for (const auto& box : w->timelineView()->visibleSpans()) kinds.insert(int(box.kind));
    for (SpanKind k : {SpanKind::kShardCopy, SpanKind::kForward, SpanKind::kBackward,
                       SpanKind::kCollective, SpanKind::kUpdate})
      QVERIFY2(kinds.contains(int(k)), span_name(k));
    const auto& batches = w->batchSplitView()->batches();
    QCOMPARE(batches.size(), size_t(1));
    QCOMPARE(batches.front().parts, (std::vector<int64_t>{2, 2, 1}));
    QVERIFY(!w->collectivesView()->message().contains(QStringLiteral("one device")));
    // The split the timeline shows is the one the run recorded (what fitbench-cli prints).
    const std::vector<DeviceUsage> shown = w->timelineView()->store().usage();
    const std::vector<DeviceUsage>& recorded = w->lastResult()->usage;
    QCOMPARE(shown.size(), recorded.size());
    for (size_t d = 0; d < shown.size(); ++d)
      QCOMPARE(QString::fromStdString(usage_line("cpu", shown[d])),
               QString::fromStdString(usage_line("cpu", recorded[d])));
  }

  // A run whose loss goes NaN and stays so ends in red, saying since when; the loss chart keeps
  // every epoch on its x axis and the decision boundary says its predictions are NaN.
  // An experiment on Fashion-MNIST (a folder of a few made-up images) opens with its settings on
  // the Data tab and trains, validated on the test images.
  void fashionMnistTrainsInTheWindow() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("xor.json"), nullptr, true));
    ExperimentSpec spec = w->currentSpec();
    QTemporaryDir dir;
    QVERIFY(QDir(dir.path()).mkdir(QStringLiteral("images")));
    test::write_fashion_mnist(dir.filePath("images").toStdString(), 40, 10);
    spec.data = DataSpec{};
    spec.data.generator.clear();
    spec.data.dataset = "fashion_mnist";
    spec.data.dataset_dir = dir.filePath("images").toStdString();
    spec.data.validation_test = true;
    spec.fit.validation_split = 0.0;
    if (spec.model.layers.front().class_name == "InputLayer")
      spec.model.layers.front().shape = {784};
    spec.model.layers.back().units = 10;
    spec.model.layers.back().activation = "softmax";
    spec.compile.loss.name = "sparse_categorical_crossentropy";
    spec.fit.epochs = 2;
    const QString path = dir.filePath(QStringLiteral("fm.json"));
    write_experiment(spec, path.toStdString());
    QString error;
    QVERIFY2(w->openFile(path, &error, true), qPrintable(error));
    QCOMPARE(w->currentSpec().data.dataset, std::string("fashion_mnist"));
    QVERIFY(w->currentSpec().data.validation_test);
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY2(ended.wait(30000), qPrintable(w->logView()->toPlainText()));
    const QString log = w->logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("Finished after 2 epochs")), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("val_accuracy: ")), qPrintable(log));
    QCOMPARE(w->lastResult()->history.history.count("val_loss"), size_t{1});
    // The Images view predicts the test images once shown: right as often as val_accuracy says.
    ImagesView* images = w->imagesView();
    w->showView(QStringLiteral("images"));
    QTRY_VERIFY_WITH_TIMEOUT(images->part() != nullptr, 30000);
    QCOMPARE(images->part()->predictions.size(), Index{10});
    QCOMPARE(static_cast<float>(images->part()->predictions.accuracy()),
             static_cast<float>(w->lastResult()->history.last("val_accuracy")));
    QVERIFY2(images->status().contains(QStringLiteral("of the 10 test images")),
             qPrintable(images->status()));
    // The next run empties it until it ends.
    w->run();
    QVERIFY(images->part() == nullptr);
    QVERIFY(ended.wait(30000));
    QTRY_VERIFY_WITH_TIMEOUT(images->part() != nullptr, 30000);
  }

  void divergedRunSaysSo() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("xor.json"), nullptr, true));
    ExperimentSpec spec = w->currentSpec();
    spec.compile.optimizer = OptimizerSpec{};
    spec.compile.optimizer.class_name = "SGD";
    spec.compile.optimizer.learning_rate = 1e6;
    spec.compile.loss.name = "mean_squared_error";
    spec.compile.metrics = {"mae"};
    spec.compile.metric_names.clear();
    spec.model.layers.back().activation = "linear";
    spec.fit.epochs = 6;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("diverging.json"));
    write_experiment(spec, path.toStdString());
    QVERIFY(w->openFile(path, nullptr, true));
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(ended.wait(30000));
    const QString log = w->logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("Finished after 6 epochs")), qPrintable(log));
    QVERIFY2(log.contains(QStringLiteral("the loss has not been a finite number since epoch 1")),
             qPrintable(log));
    auto* x = qobject_cast<QValueAxis*>(w->lossChart()->chart()->axes(Qt::Horizontal).value(0));
    QVERIFY(x && x->max() >= 6.0);
    QVERIFY2(w->decisionView()->caption().endsWith(QStringLiteral("every prediction is NaN")),
             qPrintable(w->decisionView()->caption()));
    // The metric's NaN batches are counted as not drawn, as the loss's are (a NaN metric is not
    // "no metric").
    const auto note = [](MetricChart* chart) {
      auto* label = chart->findChild<QLabel*>(QStringLiteral("chartNote"));
      return label ? label->text().section(QLatin1Char(' '), 0, 0).toInt() : -1;
    };
    QVERIFY2(note(w->metricChart()) >= note(w->lossChart()) - 2 && note(w->metricChart()) > 6,
             qPrintable(
                 QStringLiteral("%1 / %2").arg(note(w->metricChart())).arg(note(w->lossChart()))));
    // The run has ended when the notice is read: no "Stop" in it.
    QVERIFY2(log.contains(QStringLiteral("the weights diverged; try a smaller learning rate")),
             qPrintable(log));
  }

  // Opening an experiment whose data has another width than the open one's (16 features after
  // the 2 of the seed) sets the rehearsal views up for the new model before any run: the
  // collectives view counts its 273,412 gradient floats (16*512+512 + 512*512+512 + 512*4+4), and
  // a model with BatchNormalization its trainable ones.
  void viewsFollowAnOpenedModelOfAnotherWidth() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    QVERIFY(w->openFile(example("ring_vs_naive.json"), nullptr, true));
    QCOMPARE(w->collectivesView()->schedule(CollectiveAlgorithm::kRing).elements(),
             int64_t{16 * 512 + 512 + 512 * 512 + 512 + 512 * 4 + 4});
    // Every trainable variable, BatchNormalization's gamma and beta among them (not its moving
    // statistics): 784 * 64 (no bias), 64 + 64, 64 * 10 + 10.
    QVERIFY(w->openFile(example("batch_norm_statistics.json"), nullptr, true));
    QCOMPARE(w->collectivesView()->schedule(CollectiveAlgorithm::kRing).elements(),
             int64_t{784 * 64 + 64 + 64 + 64 * 10 + 10});
    // The Batch split view says whose statistics normalize the shards; a frozen
    // BatchNormalization normalizes by its moving statistics, so there is nothing to say.
    QVERIFY(!w->batchSplitView()->statisticsNote().isEmpty());
    ExperimentSpec frozen = read_experiment(example("batch_norm_statistics.json").toStdString());
    for (LayerSpec& layer : frozen.model.layers)
      if (layer.class_name == "BatchNormalization") layer.trainable = false;
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("frozen.json"));
    write_experiment(frozen, path.toStdString());
    QVERIFY(w->openFile(path, nullptr, true));
    QCOMPARE(w->batchSplitView()->statisticsNote(), QString());
  }

  // Before any run the prediction view says whether it can draw the setup, and its title
  // follows the task.
  void predictionViewSaysWhatItCanDrawBeforeARun() {
    auto w = makeWindow();
    auto* dock = w->findChild<QDockWidget*>(QStringLiteral("DecisionDock"));
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    QCOMPARE(w->decisionView()->message(),
             QStringLiteral("The model has 4 features; the decision boundary needs 2."));
    QCOMPARE(dock->windowTitle(), QStringLiteral("Decision boundary"));
    QVERIFY(w->openFile(example("regression.json"), nullptr, true));
    QVERIFY2(w->decisionView()->message().startsWith(QStringLiteral("Run the experiment")),
             qPrintable(w->decisionView()->message()));
    QCOMPARE(dock->windowTitle(), QStringLiteral("Predictions"));
  }

  // A teaching example's instructions are not left below the fold: opening one grows the About
  // dock (from the decision boundary below it) up to the text's height, and never shrinks it.
  void aboutDockGrowsToItsText() {
    auto w = makeWindow();
    QVERIFY(QTest::qWaitForWindowExposed(w.get()));
    auto* about = w->findChild<QDockWidget*>(QStringLiteral("AboutDock"));
    auto* decision = w->findChild<QDockWidget*>(QStringLiteral("DecisionDock"));
    QVERIFY(about && decision);
    QCoreApplication::processEvents();
    const int before = about->height(), total = about->height() + decision->height();
    QVERIFY(w->openFile(example("straggler.json"), nullptr, true));
    QTRY_VERIFY(about->height() > before);
    // The boundary keeps half the column or 340 px.
    QVERIFY(decision->height() >= std::min(total / 2, 340) - 8);
    QVERIFY(std::abs(about->height() + decision->height() - total) <= 8);
    const int grown = about->height();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));  // a shorter text
    QCoreApplication::processEvents();
    QCOMPARE(about->height(), grown);
  }

  // --show names the Experiment dock's tabs too.
  void showViewSelectsExperimentTabs() {
    auto w = makeWindow();
    auto* tabs = w->findChild<QTabWidget*>(QStringLiteral("experimentTabs"));
    QVERIFY(tabs);
    const QStringList names = MainWindow::viewNames();
    const char* const tabNames[] = {"data", "model", "training", "devices"};
    for (int i = 3; i >= 0; --i) {
      QVERIFY(names.contains(QLatin1String(tabNames[i])));
      w->showView(QLatin1String(tabNames[i]));
      QCOMPARE(tabs->currentIndex(), i);
    }
  }

  void stopPauseAndStep() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    ExperimentSpec spec = w->currentSpec();
    spec.fit.epochs = 1000000;  // long enough to be stopped
    w->loadSpec(spec, QString());
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(*w) > 10, 10000);
    w->togglePause();
    QVERIFY(w->session()->isPaused());
    QTest::qWait(100);  // the batch in flight, if any, ends
    const int64_t held = stepsDone(*w);
    QTest::qWait(200);
    QCOMPARE(stepsDone(*w), held);  // nothing runs while paused
    w->step();
    QTRY_COMPARE_WITH_TIMEOUT(stepsDone(*w), held + 1, 5000);
    QTest::qWait(100);
    QCOMPARE(stepsDone(*w), held + 1);  // exactly one batch
    w->togglePause();
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(*w) > held + 100, 10000);
    w->stop();
    QVERIFY(ended.wait(10000));
    QVERIFY(w->lastResult());
    QCOMPARE(w->lastResult()->stop_reason, std::string("stopped"));
    // Settings are editable again.
    QVERIFY(w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->isEnabled());
  }

  void settingsReadOnlyWhileTraining() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    ExperimentSpec spec = w->currentSpec();
    spec.fit.epochs = 1000000;
    w->loadSpec(spec, QString());
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QVERIFY(!w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->isEnabled());
    QVERIFY(!w->strategyPanel()->findChild<QComboBox*>(QStringLiteral("strategy"))->isEnabled());
    w->stop();
    QVERIFY(ended.wait(10000));
  }

  void saveOpenRoundTrip() {
    QTemporaryDir dir;
    auto w = makeWindow();
    QVERIFY(w->openFile(example("spiral.json"), nullptr, true));
    auto* count = w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"));
    count->setValue(3);
    const ExperimentSpec before = w->currentSpec();
    const QString path = dir.filePath(QStringLiteral("copy.json"));
    QVERIFY(w->saveTo(path));
    QVERIFY(!w->isModified());
    // The file is exactly what the spec writes, and reads back to the same spec.
    const ExperimentSpec read = read_experiment(path.toStdString());
    QCOMPARE(experiment_to_json(read).dump(), experiment_to_json(before).dump());
    auto w2 = makeWindow();
    QVERIFY(w2->openFile(path, nullptr, true));
    QCOMPARE(experiment_to_json(w2->currentSpec()).dump(), experiment_to_json(before).dump());
    QCOMPARE(w2->devicesPanel()->deviceCount(), 3);
    QVERIFY(!w2->isModified());
  }

  // Closing the window keeps its experiment, unsaved edits and all (the unsaved-changes prompt
  // answered with Discard); the next start's restoreLastSession brings them back, still unsaved
  // against the file, and the file is the most recent one in File > Recent. A window run by
  // automation (--quit, --screenshot: "batch") leaves all of that alone.
  void lastSessionComesBack() {
    const QString path = QFileInfo(example("spiral.json")).absoluteFilePath();
    {
      auto w = makeWindow();
      w->setProperty("batch", false);  // a person's window
      QVERIFY(w->openFile(path, nullptr, true));
      w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->setValue(3);
      QVERIFY(w->isModified());
      QTimer::singleShot(0, [] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        QVERIFY(box);
        QTest::mouseClick(box->button(QMessageBox::Discard), Qt::LeftButton);
      });
      QVERIFY(w->close());
    }
    QCOMPARE(ExperimentDocument::recentFiles().value(0), path);
    {
      auto batch = makeWindow();  // opens and closes another experiment, leaving no trace
      QVERIFY(batch->openFile(example("xor.json"), nullptr, true));
      QVERIFY(batch->close());
    }
    QCOMPARE(ExperimentDocument::recentFiles().value(0), path);
    auto w2 = makeWindow();
    w2->restoreLastSession();
    QCOMPARE(w2->filePath(), path);
    QCOMPARE(w2->devicesPanel()->deviceCount(), 3);
    QVERIFY(w2->isModified());
    QVERIFY(w2->windowTitle().startsWith(QStringLiteral("spiral.json")));
  }

  void csvPathStaysRelative() {
    QTemporaryDir dir;
    QFile csv(dir.filePath(QStringLiteral("good.csv")));
    QVERIFY(csv.open(QIODevice::WriteOnly));
    csv.write("x1,x2,y\n0.5,1.0,1\n0.25,0.75,0\n1.5,0.5,1\n-1,2,0\n");
    csv.close();
    auto w = makeWindow();
    ExperimentSpec spec = w->currentSpec();
    spec.data = DataSpec{};
    spec.data.generator.clear();
    spec.data.csv = "good.csv";
    spec.data.target = {"y"};
    spec.fit.validation_split = 0.0;
    const QString path = dir.filePath(QStringLiteral("exp.json"));
    write_experiment(spec, path.toStdString());
    QVERIFY(w->openFile(path, nullptr, true));
    QCOMPARE(w->dataPanel()->errorText(), QString());
    QCOMPARE(w->dataPanel()->featureCount(), 2);
    const QString copy = dir.filePath(QStringLiteral("copy.json"));
    QVERIFY(w->saveTo(copy));
    QVERIFY(!w->isModified());
    QFile saved(copy);
    QVERIFY(saved.open(QIODevice::ReadOnly));
    const QByteArray text = saved.readAll();
    QVERIFY2(text.contains("\"csv\": \"good.csv\""), text.constData());
  }

  void badCsvShowsItsMessage() {
    QTemporaryDir dir;
    QFile csv(dir.filePath(QStringLiteral("bad.csv")));
    QVERIFY(csv.open(QIODevice::WriteOnly));
    csv.write("x1,x2,y\n0.5,1.0,1\n0.25,oops,0\n");
    csv.close();
    auto w = makeWindow();
    ExperimentSpec spec = w->currentSpec();
    spec.data = DataSpec{};
    spec.data.generator.clear();
    spec.data.csv = "bad.csv";
    spec.data.target = {"y"};
    const QString path = dir.filePath(QStringLiteral("bad.json"));
    write_experiment(spec, path.toStdString());
    QVERIFY(w->openFile(path, nullptr, true));
    const QString error = w->dataPanel()->errorText();
    QVERIFY2(error.contains(QStringLiteral("3")), qPrintable(error));  // names line 3
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();  // refused, with the message in the log
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().first().toBool(), false);
    QVERIFY(w->logView()->toPlainText().contains(QStringLiteral("Cannot run")));
    QVERIFY(!w->session()->isRunning());
  }

  // An experiment's values the window cannot show are said, not changed: 40 devices (the
  // command line runs up to 64, the window 16) refuse to run until a count is chosen; the
  // rehearsal knobs' whole range is shown as it is.
  void valuesBeyondTheWindowAreSaidNotChanged() {
    QTemporaryDir dir;
    auto w = makeWindow();
    ExperimentSpec spec = w->currentSpec();
    spec.devices.count = 40;
    spec.devices.link_gbps = 0.015;
    spec.devices.link_latency_us = 100000.0;
    spec.distribution.class_name = "DataParallel";
    const QString path = dir.filePath(QStringLiteral("many.json"));
    write_experiment(spec, path.toStdString());
    QVERIFY(w->openFile(path, nullptr, true));
    const QString error = w->devicesPanel()->errorText();
    QVERIFY2(error.startsWith(QStringLiteral("devices.count: 40 devices are more than")),
             qPrintable(error));
    // In sight on opening: the Devices tab is marked and says why, the log says what to fix.
    auto* tabs = w->findChild<QTabWidget*>();
    QVERIFY(tabs && tabs->tabText(3) == QStringLiteral("Devices"));
    QVERIFY(!tabs->tabIcon(3).isNull());
    QVERIFY(tabs->tabIcon(0).isNull());
    QVERIFY2(tabs->tabToolTip(3).startsWith(QStringLiteral("Cannot run: ") + error),
             qPrintable(tabs->tabToolTip(3)));
    QVERIFY2(w->logView()->toPlainText().contains(
                 QStringLiteral("To run many.json, fix the Devices tab: ") + error),
             qPrintable(w->logView()->toPlainText()));
    QCOMPARE(w->currentSpec().devices.link_gbps, 0.015);
    QCOMPARE(w->currentSpec().devices.link_latency_us, 100000.0);
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    w->run();
    QCOMPARE(ended.size(), 1);
    QCOMPARE(ended.first().first().toBool(), false);
    QCOMPARE(w->lastRunError(), error);
    w->devicesPanel()->findChild<QSpinBox*>(QStringLiteral("deviceCount"))->setValue(4);
    QVERIFY(w->devicesPanel()->errorText().isEmpty());
    QCOMPARE(w->currentSpec().devices.count, std::optional<int>(4));
    QVERIFY(tabs->tabIcon(3).isNull());  // fixed: the mark goes
    QVERIFY(!tabs->tabToolTip(3).startsWith(QStringLiteral("Cannot run")));
  }

  void closeDuringTraining() {
    auto w = makeWindow();
    QVERIFY(w->openFile(example("seed.json"), nullptr, true));
    ExperimentSpec spec = w->currentSpec();
    spec.fit.epochs = 1000000;
    spec.devices.count = 2;
    w->loadSpec(spec, QString());
    w->run();
    QTRY_VERIFY_WITH_TIMEOUT(stepsDone(*w) > 10, 10000);
    QVERIFY(w->close());  // stops training and joins the thread
    QVERIFY(!w->session()->isRunning());
    w.reset();  // destroying the window after close must not hang or crash
  }

  void commandLineRunsAndSavesAScreenshot() {
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("window.png"));
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
    env.insert(QStringLiteral("XDG_CONFIG_HOME"), dir.path());
    p.setProcessEnvironment(env);
    p.start(
        QStringLiteral(FITBENCH_GUI),
        {example("seed.json"), QStringLiteral("--devices"), QStringLiteral("2"),
         QStringLiteral("--run"), QStringLiteral("--screenshot"), png, QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QImage image(png);
    QVERIFY(!image.isNull());
    QCOMPARE(image.size(), QSize(1440, 900));
    // --size sets the window's size (a projector's 1280x720); a bad one is a usage error.
    p.start(QStringLiteral(FITBENCH_GUI),
            {example("xor.json"), QStringLiteral("--size"), QStringLiteral("1280x720"),
             QStringLiteral("--screenshot"), png, QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    QCOMPARE(QImage(png).size(), QSize(1280, 720));
    p.start(QStringLiteral(FITBENCH_GUI), {example("xor.json"), QStringLiteral("--size"),
                                           QStringLiteral("320x200"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString sizeErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(sizeErr.contains(QStringLiteral("--size: expected WIDTHxHEIGHT")) &&
                 sizeErr.contains(QStringLiteral("\"320x200\"")),
             qPrintable(sizeErr));
    p.start(QStringLiteral(FITBENCH_GUI),
            {example("xor.json"), QStringLiteral("--size"), QStringLiteral("800x600"),
             QStringLiteral("--size"), QStringLiteral("1280x720"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString twiceErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(twiceErr.contains(
                 QStringLiteral("--size is given 2 times (800x600, 1280x720); give it once")),
             qPrintable(twiceErr));

    // A bad experiment: exit 2 with the file named.
    const QString bad = dir.filePath(QStringLiteral("bad.json"));
    QFile seed(example("seed.json"));
    QVERIFY(seed.open(QIODevice::ReadOnly));
    QByteArray text = seed.readAll();
    QVERIFY(text.contains("\"epochs\": 4"));
    text.replace("\"epochs\": 4", "\"epochs\": -1");
    QFile f(bad);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
    f.close();
    p.start(QStringLiteral(FITBENCH_GUI), {bad, QStringLiteral("--run"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(QStringLiteral("bad.json")) && err.contains(QStringLiteral("epochs")),
             qPrintable(err));

    // An error found when the run starts (a bad CSV cell): exit 2, and the window's message on
    // stderr too.
    QFile csv(dir.filePath(QStringLiteral("cells.csv")));
    QVERIFY(csv.open(QIODevice::WriteOnly));
    csv.write("a,b,y\n1,2,0\n3,x,1\n");
    csv.close();
    text = seed.seek(0) ? seed.readAll() : QByteArray();
    const QByteArray generator =
        "{\"generator\": \"seed\", \"samples\": 128, \"features\": 4, \"seed\": 7}";
    QVERIFY(text.contains(generator));
    text.replace(generator, "{\"csv\": \"cells.csv\", \"target\": \"y\"}");
    text.replace("[null, 4]", "[null, 2]");
    QFile cells(dir.filePath(QStringLiteral("cells.json")));
    QVERIFY(cells.open(QIODevice::WriteOnly));
    cells.write(text);
    cells.close();
    p.start(QStringLiteral(FITBENCH_GUI),
            {cells.fileName(), QStringLiteral("--run"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString cellErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(cellErr.contains(QStringLiteral("cells.csv:3:2 (b)")), qPrintable(cellErr));
    // Without --run too: what Run would refuse is exit 2, named after the experiment file.
    p.start(QStringLiteral(FITBENCH_GUI), {cells.fileName(), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString setupErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(setupErr.contains(cells.fileName() + QStringLiteral(": ")) &&
                 setupErr.contains(QStringLiteral("cells.csv:3:2 (b)")),
             qPrintable(setupErr));

    // A ModelCheckpoint from the file that would write over the experiment: Run refuses it, as
    // fitbench-cli does, and the file is left as it was.
    text = seed.seek(0) ? seed.readAll() : QByteArray();
    QVERIFY(text.contains("\"fit\": {"));
    const QString self = dir.filePath(QStringLiteral("self.json"));
    text.replace("\"fit\": {",
                 "\"fit\": {\"callbacks\": [{\"class_name\": \"ModelCheckpoint\", "
                 "\"config\": {\"filepath\": \"" +
                     self.toUtf8() + "\"}}], ");
    QFile selfFile(self);
    QVERIFY(selfFile.open(QIODevice::WriteOnly));
    selfFile.write(text);
    selfFile.close();
    p.start(QStringLiteral(FITBENCH_GUI),
            {self, QStringLiteral("--run"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString selfErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(selfErr.contains(QStringLiteral("fit.callbacks[0].config.filepath: ") + self +
                              QStringLiteral(" is the experiment file; write to another file")),
             qPrintable(selfErr));
    QVERIFY(selfFile.open(QIODevice::ReadOnly));
    QCOMPARE(selfFile.readAll(), text);
    selfFile.close();

    // A run that TerminateOnNaN stops: exit 1, and why on stderr.
    const QString diverges = QStringLiteral(FITBENCH_SOURCE_DIR "/tests/data/diverges.json");
    p.start(QStringLiteral(FITBENCH_GUI),
            {diverges, QStringLiteral("--run"), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 1);
    const QString nanErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(nanErr.contains(QStringLiteral("diverges.json: Stopped by TerminateOnNaN")),
             qPrintable(nanErr));

    // A usage error and a screenshot that cannot be written: exit 2 before any training.
    p.start(QStringLiteral(FITBENCH_GUI), {example("seed.json"), QStringLiteral("--bogus")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    p.start(QStringLiteral(FITBENCH_GUI),
            {example("seed.json"), QStringLiteral("--run"), QStringLiteral("--screenshot"),
             dir.filePath(QStringLiteral("no/folder/w.png")), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString shotErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(shotErr.contains(QStringLiteral("w.png: cannot be written")), qPrintable(shotErr));
    p.start(QStringLiteral(FITBENCH_GUI),
            {example("seed.json"), QStringLiteral("--run"), QStringLiteral("--screenshot"),
             dir.filePath(QStringLiteral("w.txt")), QStringLiteral("--quit")});
    QVERIFY(p.waitForFinished(30000));
    QCOMPARE(p.exitCode(), 2);
    const QString typeErr = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(typeErr.contains(QStringLiteral("cannot save a picture as '.txt'")),
             qPrintable(typeErr));
    QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("w.txt"))));
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
