// The trials the Sweep view shows: a text filter (any column's text) and brushed ranges on the
// plots' axes (a trial must lie inside every brush), as a sort/filter proxy of a TrialsModel;
// sorting is by value (TrialsModel::kSortRole), trials without one last. UI thread only.
#pragma once

#include <QSortFilterProxyModel>
#include <map>
#include <utility>

namespace fitbench {

class TrialsModel;

class TrialsFilter : public QSortFilterProxyModel {
  Q_OBJECT
 public:
  explicit TrialsFilter(TrialsModel* model, QObject* parent = nullptr);

  TrialsModel* trials() const { return m_model; }
  // Keeps the trials whose value on `axis` (axis units) lies in [lo, hi] (in either order).
  void setBrush(int axis, double lo, double hi);
  void clearBrush(int axis);
  void clearBrushes();
  const std::map<int, std::pair<double, double>>& brushes() const { return m_brushes; }
  // Shown: passes the text filter and every brush.
  bool accepts(int trial) const;

 signals:
  void brushesChanged();
  // Anything a plot of the trials draws changed: a trial's values or status, the axes, the
  // trials shown.
  void drawingChanged();

 protected:
  bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;
  bool lessThan(const QModelIndex& left, const QModelIndex& right) const override;

 private:
  TrialsModel* m_model;
  std::map<int, std::pair<double, double>> m_brushes;  // axis -> [lo, hi]
};

}  // namespace fitbench
