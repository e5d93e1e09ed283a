// Sweeps in the window, as a person uses them: Run > Sweep on the learning-rate sweep example
// fills the Sweep view and the runs list; clicking the objective's header sorts the trials by it;
// dragging along the learning-rate axis keeps the trials in that range; selecting two trials
// overlays their two labelled curves, best epochs marked, in the charts; Open as experiment puts
// a trial's settings in the panels; a bad sweep section is refused with every problem; a running
// trial's curves are drawn live once selected, and Stop ends a sweep; the sweep section survives
// Save.
#include <QAction>
#include <QFile>
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QToolButton>
#include <cmath>

#include "core/io/experiment.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/session_runs.h"
#include "ui/rehearsal/parallel_coordinates.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/rehearsal/trials_filter.h"
#include "ui/rehearsal/trials_model.h"
#include "ui/window/experiment_document.h"
#include "ui/window/main_window.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::example;
using fixtures::makeWindow;

namespace {

// The Sweep view's button for the window's action `name` ("sweepAction", ...).
QToolButton* viewButton(MainWindow& w, const QString& name) {
  for (QToolButton* button : w.sweepView()->findChildren<QToolButton*>())
    if (button->defaultAction() && button->defaultAction()->objectName() == name) return button;
  return nullptr;
}

// Brings the Sweep view forward, clicks its Sweep button and waits for the sweep to end.
bool sweepToEnd(MainWindow& w) {
  w.showView(QStringLiteral("sweep"));
  QSignalSpy ended(&w, &MainWindow::sweepEnded);
  QToolButton* sweep = viewButton(w, QStringLiteral("sweepAction"));
  if (!sweep || !sweep->isVisible() || !sweep->isEnabled()) return false;
  QTest::mouseClick(sweep, Qt::LeftButton);
  return ended.wait(120000) && ended.first().first().toBool();
}

// A window that has run the learning-rate sweep example, its Sweep view in front; null if not.
std::unique_ptr<MainWindow> sweptWindow() {
  auto w = makeWindow();
  if (!w->openFile(example("spiral_lr_sweep.json")) || !sweepToEnd(*w)) return nullptr;
  return w;
}

// Clicks row `row` of the trials table (with `modifier`, e.g. Ctrl to add to the selection).
void clickRow(QTableView* table, int row, Qt::KeyboardModifiers modifier = Qt::NoModifier) {
  const QModelIndex index = table->model()->index(row, 0);
  table->scrollTo(index);
  QTest::mouseClick(table->viewport(), Qt::LeftButton, modifier, table->visualRect(index).center());
}

int rowOfTrial(QTableView* table, int trial) {
  for (int row = 0; row < table->model()->rowCount(); ++row)
    if (table->model()->index(row, 0).data(TrialsModel::kTrialRole).toInt() == trial) return row;
  return -1;
}

double learningRate(const TrialsModel& model, int trial) {
  return model.plan()->trials[size_t(trial)].values[0].get<double>();
}

}  // namespace

class TestSweepWindow : public QObject {
  Q_OBJECT
 private slots:
  void runsTheSweepLiveIntoTheViewAndTheRunsList();
  void clickingTheObjectivesHeaderSortsByIt();
  void draggingAlongAnAxisFiltersTheTable();
  void selectingTwoTrialsOverlaysTheirLabelledCurves();
  void openAsExperimentLoadsTheTrialsSettings();
  void badSweepSectionIsRefusedWithEveryProblem();
  void stopEndsARunningSweep();
  void sweepSectionSurvivesSave();
  void exportsTheTrialsTable();
};

void TestSweepWindow::runsTheSweepLiveIntoTheViewAndTheRunsList() {
  auto w = makeWindow();
  QVERIFY(w->openFile(example("spiral_lr_sweep.json")));
  TrialsModel* model = w->sweepView()->model();
  QCOMPARE(model->trialCount(), 0);
  QSignalSpy changed(model, &QAbstractItemModel::dataChanged);
  QVERIFY(sweepToEnd(*w));
  QCOMPARE(model->trialCount(), 12);
  QVERIFY(changed.count() > 12);  // each trial's begin and epochs, not just its end
  int finished = 0;
  for (int t = 0; t < 12; ++t) {
    const auto status = model->result(t).status;
    finished += status == TrialResult::Status::kCompleted || status == TrialResult::Status::kPruned;
  }
  QCOMPARE(finished, 12);
  QCOMPARE(w->sweepView()->table()->model()->rowCount(), 12);
  // Every trial is a run of the session, named by its values.
  int trials = 0;
  for (const SessionRun& run : w->sessionRuns()->runs()) {
    trials += run.fromSweep;
    QVERIFY(run.label.startsWith(QStringLiteral("trial ")));
    QVERIFY(run.label.contains(QStringLiteral("learning_rate=")));
    QVERIFY(!run.history.epoch.empty());
  }
  QCOMPARE(trials, 12);
  // The three best are selected and drawn.
  QCOMPARE(w->sweepView()->selectedTrials().size(), 3);
  QVERIFY(w->sweepView()->selectedTrials().contains(model->bestTrial()));
  QCOMPARE(w->lossChart()->shownRunLabels().size(), 3);
  QVERIFY(w->lastRunError().isEmpty());
}

void TestSweepWindow::clickingTheObjectivesHeaderSortsByIt() {
  auto w = sweptWindow();
  QVERIFY(w);
  QTableView* table = w->sweepView()->table();
  TrialsModel* model = w->sweepView()->model();
  QHeaderView* header = table->horizontalHeader();
  const auto centre = [header](int column) {
    return QPoint(header->sectionViewportPosition(column) + header->sectionSize(column) / 2,
                  header->height() / 2);
  };
  // A finished sweep is sorted best first; back to trial order with the Trial header.
  QCOMPARE(header->sortIndicatorSection(), model->objectiveColumn());
  QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, centre(0));
  for (int row = 0; row < table->model()->rowCount(); ++row)
    QCOMPARE(table->model()->index(row, 0).data(TrialsModel::kTrialRole).toInt(), row);
  const int column = model->objectiveColumn();
  const QPoint at = centre(column);
  const auto objectives = [&] {
    std::vector<double> values;
    for (int row = 0; row < table->model()->rowCount(); ++row)
      values.push_back(table->model()->index(row, column).data(TrialsModel::kSortRole).toDouble());
    return values;
  };
  QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
  std::vector<double> ascending = objectives();
  QVERIFY(std::is_sorted(ascending.begin(), ascending.end()));
  QCOMPARE(table->model()->index(0, 0).data(TrialsModel::kTrialRole).toInt(), model->bestTrial());
  QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, at);
  std::vector<double> descending = objectives();
  QVERIFY(std::is_sorted(descending.rbegin(), descending.rend()));
  QVERIFY(descending.front() > ascending.front());
}

void TestSweepWindow::draggingAlongAnAxisFiltersTheTable() {
  auto w = sweptWindow();
  QVERIFY(w);
  ParallelCoordinates* plot = w->sweepView()->parallel();
  TrialsModel* model = w->sweepView()->model();
  QTRY_VERIFY(plot->isVisible() && plot->height() > 100);
  // From 0.01 down to 0.001 on the learning-rate axis (log: equal steps per decade).
  const SweepAxis& axis = model->axes()[0];
  QCOMPARE(axis.kind, SweepAxis::Kind::kLog);
  const auto yOf = [&](double rate) {
    const double f = axis.fraction(std::log10(rate));
    return int(std::lround(plot->axisBottom() - f * (plot->axisBottom() - plot->axisTop())));
  };
  const int x = plot->axisX(0);
  QTest::mousePress(plot, Qt::LeftButton, {}, QPoint(x, yOf(0.01)));
  QTest::mouseMove(plot, QPoint(x, yOf(0.003)));
  QTest::mouseRelease(plot, Qt::LeftButton, {}, QPoint(x, yOf(0.001)));
  int inside = 0;
  for (int t = 0; t < model->trialCount(); ++t) {
    const double rate = learningRate(*model, t);
    // A pixel's rounding either side of the ends.
    if (rate > 0.00105 && rate < 0.0095) QVERIFY(w->sweepView()->filter()->accepts(t));
    inside += w->sweepView()->filter()->accepts(t);
  }
  QTableView* table = w->sweepView()->table();
  QVERIFY(inside > 0 && inside < model->trialCount());
  QCOMPARE(table->model()->rowCount(), inside);
  for (int row = 0; row < table->model()->rowCount(); ++row) {
    const double rate =
        learningRate(*model, table->model()->index(row, 0).data(TrialsModel::kTrialRole).toInt());
    QVERIFY2(rate > 0.0009 && rate < 0.011, qPrintable(QString::number(rate)));
  }
  QVERIFY(w->sweepView()->clearBrushesButton()->isVisible());
  // A click on the axis clears its brush.
  QTest::mouseClick(plot, Qt::LeftButton, {}, QPoint(x, yOf(0.01)));
  QCOMPARE(table->model()->rowCount(), model->trialCount());
}

void TestSweepWindow::selectingTwoTrialsOverlaysTheirLabelledCurves() {
  auto w = sweptWindow();
  QVERIFY(w);
  QTableView* table = w->sweepView()->table();
  TrialsModel* model = w->sweepView()->model();
  clickRow(table, rowOfTrial(table, 4));
  clickRow(table, rowOfTrial(table, 9), Qt::ControlModifier);
  QCOMPARE(w->sweepView()->selectedTrials().size(), 2);
  w->lossChart()->flushNow();
  w->metricChart()->flushNow();
  const QString four = QStringLiteral("trial 4: learning_rate=%1, units=%2")
                           .arg(learningRate(*model, 4), 0, 'g', 4)
                           .arg(model->plan()->trials[4].values[1].get<int>());
  QCOMPARE(model->trialLabel(4), four);
  for (MetricChart* chart : {w->lossChart(), w->metricChart()}) {
    QStringList labels = chart->shownRunLabels();
    labels.sort();
    QCOMPARE(labels, QStringList({model->trialLabel(4), model->trialLabel(9)}));
    QVERIFY(chart->runsLegendText().contains(four));
  }
  // Each curve's best epoch is marked where its objective (val_loss) was best.
  for (const int trial : {4, 9}) {
    const SessionRun* run = w->sessionRuns()->findTrial(trial);
    QVERIFY(run);
    const QPointF mark = w->lossChart()->bestMark(run->id);
    QCOMPARE(mark.x(), double(model->result(trial).best_epoch + 1));
    QCOMPARE(mark.y(),
             run->history.history.at("val_loss")[size_t(model->result(trial).best_epoch)]);
  }
  // Another selection replaces them.
  clickRow(table, rowOfTrial(table, 0));
  w->lossChart()->flushNow();
  QCOMPARE(w->lossChart()->shownRunLabels(), QStringList({model->trialLabel(0)}));
}

void TestSweepWindow::openAsExperimentLoadsTheTrialsSettings() {
  auto w = sweptWindow();
  QVERIFY(w);
  QTableView* table = w->sweepView()->table();
  TrialsModel* model = w->sweepView()->model();
  clickRow(table, rowOfTrial(table, 5));
  QPushButton* open = w->sweepView()->openButton();
  QVERIFY(open->isEnabled());
  QTest::mouseClick(open, Qt::LeftButton);
  const ExperimentSpec spec = w->currentSpec();
  QVERIFY(w->filePath().isEmpty());  // untitled
  QCOMPARE(spec.compile.optimizer.learning_rate.value_or(-1.0), learningRate(*model, 5));
  // model.layers[1] in Keras's get_config, whose layers[0] is the InputLayer.
  QCOMPARE(spec.model.layers[1].units, model->plan()->trials[5].values[1].get<int64_t>());
  QVERIFY(spec.sweep.is_null());
  // The sweep and the runs stay to compare with.
  QCOMPARE(model->trialCount(), 12);
  QCOMPARE(int(w->sessionRuns()->runs().size()), 12);
}

void TestSweepWindow::badSweepSectionIsRefusedWithEveryProblem() {
  auto w = makeWindow();
  ExperimentSpec spec = ExperimentDocument::read(example("spiral_lr_sweep.json"));
  spec.sweep["parameters"]["compile.optimizer.config.learning_rate"]["config"]["min_value"] = -1;
  spec.sweep["parameters"]["fit.batch_size"] = {{"class_name", "Int"},
                                                {"config", {{"min_value", 8}}}};
  w->loadSpec(spec, QString());
  QSignalSpy ended(w.get(), &MainWindow::sweepEnded);
  w->runSweep();
  QCOMPARE(ended.count(), 1);
  QCOMPARE(ended.first().first().toBool(), false);
  const QStringList lines = w->lastRunError().split('\n');
  QVERIFY2(lines.size() >= 2, qPrintable(w->lastRunError()));
  QVERIFY(w->lastRunError().contains(QStringLiteral("learning_rate")));
  QVERIFY(w->lastRunError().contains(QStringLiteral("fit.batch_size")));
  QCOMPARE(w->sweepView()->errorText(), w->lastRunError());
  QCOMPARE(w->sweepView()->model()->trialCount(), 0);
  QVERIFY(!w->isSweeping());
}

void TestSweepWindow::stopEndsARunningSweep() {
  auto w = makeWindow();
  ExperimentSpec spec = ExperimentDocument::read(example("spiral_lr_sweep.json"));
  spec.fit.epochs = 100000;  // far longer than the test waits
  spec.sweep.erase("pruning");
  w->loadSpec(spec, QString());
  QSignalSpy ended(w.get(), &MainWindow::sweepEnded);
  w->showView(QStringLiteral("sweep"));
  w->sweepView()->jobsSpin()->setValue(1);
  QTest::mouseClick(viewButton(*w, QStringLiteral("sweepAction")), Qt::LeftButton);
  QVERIFY(w->isSweeping());
  QTRY_VERIFY(w->sweepView()->model()->result(0).epochs_run > 2);
  // A running trial is listed, and selecting it draws its curves as they grow.
  const SessionRun* running = w->sessionRuns()->findTrial(0);
  QVERIFY(running && !running->ended);
  QTableView* table = w->sweepView()->table();
  clickRow(table, rowOfTrial(table, 0));
  const QString label = w->sweepView()->model()->trialLabel(0);
  QTRY_VERIFY(w->lossChart()->shownRunLabels().contains(label));
  QToolButton* stop = viewButton(*w, QStringLiteral("stopAction"));
  QVERIFY(stop && stop->isVisible() && stop->isEnabled());
  QTest::mouseClick(stop, Qt::LeftButton);
  QVERIFY(ended.wait(30000));
  QCOMPARE(ended.first().first().toBool(), true);
  QVERIFY(!w->isSweeping());
  QCOMPARE(w->sweepView()->model()->result(0).status, TrialResult::Status::kStopped);
  // One job: the last trial never started.
  QCOMPARE(w->sweepView()->model()->result(11).epochs_run, 0);
  QVERIFY(w->sweepView()->model()->result(11).status != TrialResult::Status::kCompleted);
  // Only trials that ran are runs of the session.
  for (const SessionRun& run : w->sessionRuns()->runs()) QVERIFY(!run.history.epoch.empty());
  QVERIFY(w->sessionRuns()->findTrial(0) != nullptr);
  QVERIFY(w->sessionRuns()->findTrial(11) == nullptr);
}

void TestSweepWindow::sweepSectionSurvivesSave() {
  auto w = makeWindow();
  QVERIFY(w->openFile(example("spiral_lr_sweep.json")));
  const nlohmann::ordered_json sweep = w->currentSpec().sweep;
  QVERIFY(!sweep.is_null());
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("mine.json"));
  QVERIFY(w->saveTo(path));
  QVERIFY2(ExperimentDocument::read(path).sweep == sweep,
           ExperimentDocument::read(path).sweep.dump().c_str());
  QVERIFY(w->openFile(path));
  QVERIFY(w->currentSpec().sweep == sweep);
  QVERIFY(!w->isModified());
}

void TestSweepWindow::exportsTheTrialsTable() {
  QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs);
  auto w = sweptWindow();
  QVERIFY(w);
  QAction* exportTrials = w->findChild<QAction*>(QStringLiteral("exportTrialsAction"));
  QVERIFY(exportTrials && exportTrials->isEnabled());
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("trials.csv"));
  fixtures::answerFileDialog(path);
  exportTrials->trigger();
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QStringList lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
  QCOMPARE(lines.size(), 1 + 12);
  QVERIFY2(lines[0].contains(QStringLiteral("learning_rate")), qPrintable(lines[0]));
  QVERIFY(lines[0].contains(QStringLiteral("val_loss")));
}

QTEST_MAIN(TestSweepWindow)
#include "tst_sweep_window.moc"
