// The Sweep view's data: a sweep plan's trials and what each has done so far, as a table model
// (trial, status, one column per parameter, the objective, best epoch, epochs, time) and as the
// plots' axes (one per parameter, then the objective) with each trial's value on each.
// Live: the window feeds it each trial's begin, epochs and end as value copies. UI thread only.
#pragma once

#include <QAbstractTableModel>
#include <memory>
#include <vector>

#include "core/run/sweep.h"
#include "ui/rehearsal/sweep_axis.h"

namespace fitbench {

class TrialsModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  // Sorting: numbers as numbers, a trial without a value last in either direction.
  static constexpr int kSortRole = Qt::UserRole + 1;
  static constexpr int kTrialRole = Qt::UserRole + 2;  // the row's trial number

  explicit TrialsModel(QObject* parent = nullptr);

  // A new sweep: every trial pending (or `results`, e.g. a sweep that ran elsewhere).
  void setPlan(std::shared_ptr<const SweepPlan> plan, std::vector<TrialResult> results = {});
  void clear();
  const SweepPlan* plan() const { return m_plan.get(); }
  std::shared_ptr<const SweepPlan> sharedPlan() const { return m_plan; }
  int trialCount() const { return int(m_rows.size()); }
  const TrialResult& result(int trial) const { return m_rows[size_t(trial)].result; }
  std::vector<TrialResult> results() const;
  // Execution 0's History so far (the result's once it ended).
  const History& history(int trial) const;
  // "trial 3: learning_rate=0.01, units=8".
  QString trialLabel(int trial) const;
  // The best finished trial (completed, else pruned), or -1.
  int bestTrial() const;
  // The objective's key and whether larger is better.
  QString objectiveName() const;
  bool maximize() const;

  // Live updates from the window.
  void trialBegan(int trial);
  void trialEpoch(int trial, int execution, int epoch, const Logs& logs);
  void trialEnded(const TrialResult& result);

  // The plots' axes: one per parameter (in the sweep's order), the objective last.
  const std::vector<SweepAxis>& axes() const { return m_axes; }
  int objectiveAxis() const { return int(m_axes.size()) - 1; }
  // Trial `trial`'s value on axis `axis` in axis units; NaN when it has none (an objective not
  // reached yet). While running, the objective is the best value so far.
  double axisValue(int trial, int axis) const;

  // Where a trial's objective lies among the others': 0 the best, 1 the worst (NaN: none yet).
  double objectiveShade(int trial) const;

  // Columns.
  int statusColumn() const { return 1; }
  int parameterColumn(int parameter) const { return 2 + parameter; }
  int objectiveColumn() const { return 2 + parameterCount(); }
  int parameterCount() const { return m_plan ? int(m_plan->spec.parameters.size()) : 0; }

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 signals:
  // The axes' spans changed (a new plan, an objective outside the span so far).
  void axesChanged();

 private:
  struct Row {
    TrialResult result;
    History live;           // execution 0's epochs while it runs
    double liveBest = 0.0;  // its best objective so far (NaN: none)
  };
  void updateObjectiveAxis();
  void rowChanged(int trial);
  QVariant cell(const Row& row, int column, bool forSort) const;

  std::shared_ptr<const SweepPlan> m_plan;
  std::vector<Row> m_rows;
  std::vector<SweepAxis> m_axes;
  std::vector<std::vector<double>> m_parameterValues;  // [trial][parameter], axis units
};

}  // namespace fitbench
