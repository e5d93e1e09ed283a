// The Sweep view on its own, with trials made here: a grid over a string Choice (activation), a
// Boolean (shuffle) and a numeric Choice (learning rate). Its axes follow the parameters' kinds;
// dragging over a category keeps that category's trials; the filter box and sorting keep trials
// without an objective last; the table follows a running trial live; a click on a dot in the
// objective's scatter plot selects its trial.
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableView>
#include <QTest>
#include <memory>

#include "core/io/new_experiment.h"
#include "core/run/sweep.h"
#include "ui/rehearsal/objective_scatter.h"
#include "ui/rehearsal/parallel_coordinates.h"
#include "ui/rehearsal/sweep_view.h"
#include "ui/rehearsal/trials_filter.h"
#include "ui/rehearsal/trials_model.h"

using namespace fitbench;

namespace {

std::shared_ptr<SweepPlan> makePlan() {
  ExperimentSpec base = new_experiment();
  base.sweep = nlohmann::ordered_json::parse(R"({
    "method": "grid", "objective": {"name": "loss", "direction": "min"},
    "parameters": {
      "model.layers[1].config.activation": {"class_name": "Choice",
                                            "config": {"values": ["relu", "tanh"]}},
      "fit.shuffle": {"class_name": "Boolean", "config": {}},
      "compile.optimizer.config.learning_rate": {"class_name": "Choice",
                                                 "config": {"values": [0.001, 0.01, 0.1]}}}})");
  return std::make_shared<SweepPlan>(plan_sweep(base, PlanContext{}));
}

// Trials 0..count-1 completed, objective 0.9 - 0.05 * number (the last is the best); the others
// pending.
std::vector<TrialResult> results(int count) {
  std::vector<TrialResult> out;
  for (int t = 0; t < count; ++t) {
    TrialResult r;
    r.number = t;
    r.status = TrialResult::Status::kCompleted;
    r.objectives = {0.9 - 0.05 * t};
    r.objective = r.objectives[0];
    r.best_epoch = 2;
    r.epochs_run = 4;
    out.push_back(r);
  }
  return out;
}

QString activation(const SweepPlan& plan, int trial) {
  return QString::fromStdString(plan.trials[size_t(trial)].values[0].get<std::string>());
}

}  // namespace

class TestSweepView : public QObject {
  Q_OBJECT
 private slots:
  void axesFollowTheParametersKinds();
  void draggingOverACategoryKeepsItsTrials();
  void filterBoxAndSortingKeepMissingObjectivesLast();
  void tableFollowsARunningTrial();
  void clickOnAScatterDotSelectsItsTrial();
};

void TestSweepView::axesFollowTheParametersKinds() {
  TrialsModel model;
  const auto plan = makePlan();
  QCOMPARE(plan->trials.size(), size_t(12));
  model.setPlan(plan, results(12));
  QCOMPARE(int(model.axes().size()), 4);
  QCOMPARE(model.axes()[0].kind, SweepAxis::Kind::kCategory);
  QCOMPARE(model.axes()[0].categories, QStringList({"relu", "tanh"}));
  QCOMPARE(model.axes()[1].kind, SweepAxis::Kind::kCategory);
  QCOMPARE(model.axes()[1].categories, QStringList({"false", "true"}));
  QCOMPARE(model.axes()[2].kind, SweepAxis::Kind::kLinear);
  QCOMPARE(model.axes()[2].ticks(5), std::vector<double>({0.001, 0.01, 0.1}));
  QCOMPARE(model.axes()[3].name, QStringLiteral("loss"));
  QCOMPARE(model.bestTrial(), 11);
  QCOMPARE(model.objectiveShade(11), 0.0);
  QCOMPARE(model.objectiveShade(0), 1.0);
  QCOMPARE(model.headerData(model.parameterColumn(0), Qt::Horizontal, Qt::DisplayRole).toString(),
           QStringLiteral("activation"));
}

void TestSweepView::draggingOverACategoryKeepsItsTrials() {
  SweepView view;
  const auto plan = makePlan();
  view.model()->setPlan(plan, results(12));
  view.resize(900, 640);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  ParallelCoordinates* plot = view.parallel();
  const SweepAxis& axis = view.model()->axes()[0];
  const auto yAt = [&](double value) {
    return int(plot->axisBottom() - axis.fraction(value) * (plot->axisBottom() - plot->axisTop()));
  };
  // Around "tanh" (index 1), not reaching "relu" (index 0).
  QTest::mousePress(plot, Qt::LeftButton, {}, QPoint(plot->axisX(0), yAt(1.3)));
  QTest::mouseMove(plot, QPoint(plot->axisX(0), yAt(1.0)));
  QTest::mouseRelease(plot, Qt::LeftButton, {}, QPoint(plot->axisX(0), yAt(0.7)));
  QCOMPARE(view.table()->model()->rowCount(), 6);
  for (int row = 0; row < 6; ++row)
    QCOMPARE(activation(*plan,
                        view.table()->model()->index(row, 0).data(TrialsModel::kTrialRole).toInt()),
             QStringLiteral("tanh"));
  QVERIFY(view.findChild<QLabel*>(QStringLiteral("sweepSummary"))->text().contains("6 shown"));
  QTest::mouseClick(view.clearBrushesButton(), Qt::LeftButton);
  QCOMPARE(view.table()->model()->rowCount(), 12);
}

void TestSweepView::filterBoxAndSortingKeepMissingObjectivesLast() {
  SweepView view;
  view.model()->setPlan(makePlan(), results(8));  // trials 8..11 pending
  view.resize(900, 640);
  view.show();
  QTableView* table = view.table();
  const int column = view.model()->objectiveColumn();
  const auto trialAt = [table](int row) {
    return table->model()->index(row, 0).data(TrialsModel::kTrialRole).toInt();
  };
  table->sortByColumn(column, Qt::AscendingOrder);
  QCOMPARE(trialAt(0), 7);  // the best
  QVERIFY(trialAt(11) >= 8);
  table->sortByColumn(column, Qt::DescendingOrder);
  QCOMPARE(trialAt(0), 0);  // the worst of those with an objective
  QVERIFY(trialAt(11) >= 8);
  QTest::keyClicks(view.filterEdit(), QStringLiteral("TANH"));
  QCOMPARE(table->model()->rowCount(), 6);
  view.filterEdit()->clear();
  QCOMPARE(table->model()->rowCount(), 12);
}

void TestSweepView::tableFollowsARunningTrial() {
  TrialsModel model;
  model.setPlan(makePlan());
  const auto cell = [&](int column) { return model.index(3, column).data().toString(); };
  QCOMPARE(cell(model.statusColumn()), QStringLiteral("pending"));
  model.trialBegan(3);
  QCOMPARE(cell(model.statusColumn()), QStringLiteral("running"));
  model.trialEpoch(3, 0, 0, {{"loss", 0.5}});
  model.trialEpoch(3, 0, 1, {{"loss", 0.4}});
  model.trialEpoch(3, 0, 2, {{"loss", 0.45}});
  QCOMPARE(cell(model.statusColumn()), QStringLiteral("running · epoch 3"));
  QCOMPARE(cell(model.objectiveColumn()), QStringLiteral("0.4"));  // the best so far
  QVERIFY(model.index(3, model.objectiveColumn()).data(Qt::FontRole).value<QFont>().italic());
  QCOMPARE(model.history(3).history.at("loss").size(), size_t(3));
  TrialResult done = results(4)[3];
  model.trialEnded(done);
  QCOMPARE(cell(model.statusColumn()), QStringLiteral("completed"));
  QCOMPARE(cell(model.objectiveColumn()), QString::number(done.objective, 'g', 4));
}

void TestSweepView::clickOnAScatterDotSelectsItsTrial() {
  SweepView view;
  view.model()->setPlan(makePlan(), results(12));
  view.resize(900, 640);
  view.show();
  QVERIFY(QTest::qWaitForWindowExposed(&view));
  QSignalSpy selected(&view, &SweepView::selectionChanged);
  ObjectiveScatter* scatter = view.scatter();
  // In the learning-rate plot (third), trial 5's dot.
  const std::optional<QPointF> dot = scatter->dotOf(5, 2);
  QVERIFY(dot);
  QTest::mouseClick(scatter, Qt::LeftButton, {}, dot->toPoint());
  QCOMPARE(view.selectedTrials(), QList<int>({5}));
  QVERIFY(!selected.isEmpty());
  QCOMPARE(selected.last().first().value<QList<int>>(), QList<int>({5}));
  QVERIFY(view.openButton()->isEnabled());
}

QTEST_MAIN(TestSweepView)
#include "tst_sweep_view.moc"
