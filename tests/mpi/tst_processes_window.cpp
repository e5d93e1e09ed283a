// The window's runs on several processes (Devices tab, Processes), driven as a person drives
// them: Processes typed into its field, Run and Stop pressed with their keys. A job on 2
// processes trains the History the window's threads train, its charts, log and timeline follow
// it, a ModelParallel mesh trains as on threads too, Stop ends it after a batch with the model
// kept, and what cannot run is said: no distribution, a mesh whose rows cannot stay inside
// processes, devices that do not spread evenly, Open MPI missing.
#include <QAction>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "core/io/experiment.h"
#include "tests/ui/window_fixtures.h"
#include "ui/charts/metric_chart.h"
#include "ui/panels/devices_panel.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/window/main_window.h"
#include "ui/window/process_job.h"

using namespace fitbench;
using fitbench::fixtures::example;

// A shown window for automation, active, so that it takes the keys pressed.
std::unique_ptr<MainWindow> makeWindow() {
  auto w = fitbench::fixtures::makeWindow();
  if (!QTest::qWaitForWindowActive(w.get())) return nullptr;
  return w;
}

namespace {

QSpinBox* processesField(MainWindow& w) {
  return w.devicesPanel()->findChild<QSpinBox*>(QStringLiteral("processCount"));
}

void typeProcesses(MainWindow& w, int processes) {
  w.showView(QStringLiteral("devices"));
  QSpinBox* field = processesField(w);
  field->setFocus();
  field->selectAll();
  QTest::keyClicks(field, QString::number(processes));
  QTest::keyClick(field, Qt::Key_Tab);
}

void open(MainWindow& w, const char* name, int epochs = 0) {
  ExperimentSpec spec = read_experiment(example(name).toStdString());
  if (epochs > 0) spec.fit.epochs = epochs;
  w.loadSpec(spec, example(name));
}

// Run with its key; true when the run ended well.
bool runWithKeys(MainWindow& w, int timeoutMs = 120000) {
  QSignalSpy ended(&w, &MainWindow::runEnded);
  QTest::keyClick(&w, Qt::Key_R, Qt::ControlModifier);
  return ended.wait(timeoutMs) && ended.first().first().toBool();
}

}  // namespace

class TestProcessesWindow : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QVERIFY(ProcessLauncher::find().unavailable.isEmpty()); }

  // 4 devices on 2 processes: the History of the run on 4 threads, the charts drawn live, the
  // Keras text in the log, the timeline on process 0's devices, and the model kept.
  void jobTrainsWhatThreadsTrain() {
    auto w = makeWindow();
    QVERIFY(w);
    open(*w, "one_vs_data_parallel.json", 5);
    QVERIFY(runWithKeys(*w));
    const History threads = w->lastResult()->history;

    typeProcesses(*w, 2);
    QCOMPARE(processesField(*w)->value(), 2);
    QVERIFY(w->findChild<QLabel*>(QStringLiteral("processNote"))
                ->text()
                .contains(QStringLiteral("mpirun -np 2")));
    // Step holds one process's fit(): not offered for a job.
    QAction* step = nullptr;
    for (QAction* a : w->findChildren<QAction*>())
      if (a->text() == QStringLiteral("S&tep")) step = a;
    QVERIFY(step && !step->isEnabled());

    QVERIFY2(runWithKeys(*w), qPrintable(w->lastRunError()));
    const RunResult* job = w->lastResult();
    QVERIFY(job);
    QCOMPARE(job->history.epoch, threads.epoch);
    QCOMPARE(job->history.history, threads.history);  // bit for bit, as fitbench-cli's
    QVERIFY(!job->model.weights.empty());
    QCOMPARE(job->usage.size(), size_t(4));
    const QString log = w->logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("Running on 2 processes: mpirun")), qPrintable(log));
    QVERIFY(log.contains(QStringLiteral("Devices: ['cpu:0', 'cpu:1', 'cpu:2', 'cpu:3']")));
    QVERIFY(log.contains(QStringLiteral("Epoch 5/5")));
    QVERIFY(log.contains(QStringLiteral("Finished after 5 epochs")));
    QVERIFY(w->lossChart()->overlayCount() >= 1);
    QVERIFY(w->timelineView()->store().size() > 0);
    QCOMPARE(w->timelineView()->store().devices(), 2);  // process 0's
    QVERIFY2(w->timelineView()->modeText().contains(
                 QStringLiteral("process 0's devices of a job of 2 processes")),
             qPrintable(w->timelineView()->modeText()));
  }

  // A ModelParallel 2 x 2 mesh on 2 processes (a mesh row each): the History of its 4 threads.
  void modelParallelJobTrainsWhatThreadsTrain() {
    auto w = makeWindow();
    QVERIFY(w);
    open(*w, "model_parallel_2x2.json", 5);
    QVERIFY(runWithKeys(*w));
    const History threads = w->lastResult()->history;
    typeProcesses(*w, 2);
    QVERIFY2(runWithKeys(*w), qPrintable(w->lastRunError()));
    const RunResult* job = w->lastResult();
    QVERIFY(job);
    QCOMPARE(job->history.history, threads.history);
    QVERIFY(!job->model.weights.empty());
    QCOMPARE(job->usage.size(), size_t(4));
    const QString log = w->logView()->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("Running on 2 processes: mpirun")), qPrintable(log));
    QVERIFY(log.contains(QStringLiteral("Distribution: ModelParallel")));
    QVERIFY(log.contains(QStringLiteral("Finished after 5 epochs")));
  }

  // Stop (Ctrl+.) ends the job after a batch: the epochs trained are kept, with the model.
  void stopKeepsWhatWasTrained() {
    auto w = makeWindow();
    QVERIFY(w);
    open(*w, "one_vs_data_parallel.json", 1000000);
    typeProcesses(*w, 2);
    QSignalSpy ended(w.get(), &MainWindow::runEnded);
    QTest::keyClick(w.get(), Qt::Key_R, Qt::ControlModifier);
    QTRY_VERIFY_WITH_TIMEOUT(w->logView()->toPlainText().contains(QStringLiteral("Epoch 20/")),
                             60000);
    QTest::keyClick(w.get(), Qt::Key_Period, Qt::ControlModifier);
    QVERIFY(ended.wait(20000));
    QVERIFY2(ended.first().first().toBool(), qPrintable(w->lastRunError()));
    const RunResult* r = w->lastResult();
    QVERIFY(r);
    QCOMPARE(r->stop_reason, std::string("stopped"));
    QVERIFY(r->history.epoch.size() >= 19 && r->history.epoch.size() < 1000000);
    QVERIFY(!r->model.weights.empty());
    QVERIFY(w->logView()->toPlainText().contains(QStringLiteral("Stopped after")));
  }

  // What a job cannot run is said before anything starts, on the Devices tab.
  void refusalsAreSaid() {
    auto w = makeWindow();
    QVERIFY(w);
    open(*w, "xor.json");  // no distribution
    typeProcesses(*w, 2);
    QVERIFY(!runWithKeys(*w, 5000));
    QVERIFY2(w->lastRunError().contains(QStringLiteral("choose DataParallel")),
             qPrintable(w->lastRunError()));

    open(*w, "one_vs_data_parallel.json");
    typeProcesses(*w, 3);  // 4 devices on 3 processes
    QVERIFY(!runWithKeys(*w, 5000));
    QVERIFY2(w->lastRunError().contains(
                 QStringLiteral("4 devices cannot be spread evenly over 3 processes")),
             qPrintable(w->lastRunError()));
    QVERIFY(!w->lastResult());
  }

  // A problem every rank finds once started (here Keras's process settings disagreeing with
  // mpirun's ranks) is said in fitbench-cli's words, without mpirun's frames of dashes.
  void rankErrorIsSaidWithoutFrames() {
    auto w = makeWindow();
    QVERIFY(w);
    open(*w, "one_vs_data_parallel.json", 2);
    typeProcesses(*w, 2);
    qputenv("KERAS_DISTRIBUTION_NUM_PROCESSES", "3");
    qputenv("KERAS_DISTRIBUTION_PROCESS_ID", "0");
    const bool ran = runWithKeys(*w, 60000);
    qunsetenv("KERAS_DISTRIBUTION_NUM_PROCESSES");
    qunsetenv("KERAS_DISTRIBUTION_PROCESS_ID");
    QVERIFY(!ran);
    const QString said = w->lastRunError();
    QVERIFY2(said.contains(QStringLiteral("KERAS_DISTRIBUTION_NUM_PROCESSES: says process 0 of 3 "
                                          "but MPI started this one as rank")),
             qPrintable(said));
    QVERIFY2(!said.contains(QStringLiteral("-----")) &&
                 !said.contains(QStringLiteral("Primary job")) &&
                 !said.contains(QStringLiteral("exited with non-zero status")),
             qPrintable(said));
  }

  // Without mpirun on PATH the control says what to install and stays at 1.
  void missingOpenMpiIsSaid() {
    const QByteArray path = qgetenv("PATH");
    qputenv("PATH", "/nonexistent");
    const ProcessLauncher l = ProcessLauncher::find();
    qputenv("PATH", path);
    QVERIFY2(l.unavailable.contains(QStringLiteral("apt-get install openmpi-bin")),
             qPrintable(l.unavailable));
    auto w = makeWindow();
    QVERIFY(w);
    w->devicesPanel()->setProcessesUnavailable(l.unavailable);
    QVERIFY(!processesField(*w)->isEnabled());
    QCOMPARE(processesField(*w)->value(), 1);
    QCOMPARE(w->findChild<QLabel*>(QStringLiteral("processNote"))->text(), l.unavailable);
    QVERIFY(!w->setProcessCount(2).isEmpty());
  }
};

QTEST_MAIN(TestProcessesWindow)
#include "tst_processes_window.moc"
