#include "ui/rehearsal/trials_filter.h"

#include <algorithm>
#include <cmath>

#include "ui/rehearsal/trials_model.h"

namespace fitbench {

TrialsFilter::TrialsFilter(TrialsModel* model, QObject* parent)
    : QSortFilterProxyModel(parent), m_model(model) {
  setSourceModel(model);
  setSortRole(TrialsModel::kSortRole);
  setFilterKeyColumn(-1);
  setFilterCaseSensitivity(Qt::CaseInsensitive);
  setDynamicSortFilter(true);
  connect(model, &QAbstractItemModel::modelReset, this, [this] { clearBrushes(); });
  connect(model, &QAbstractItemModel::modelReset, this, &TrialsFilter::drawingChanged);
  connect(model, &QAbstractItemModel::dataChanged, this, &TrialsFilter::drawingChanged);
  connect(model, &TrialsModel::axesChanged, this, &TrialsFilter::drawingChanged);
  connect(this, &TrialsFilter::brushesChanged, this, &TrialsFilter::drawingChanged);
  connect(this, &QSortFilterProxyModel::rowsInserted, this, &TrialsFilter::drawingChanged);
  connect(this, &QSortFilterProxyModel::rowsRemoved, this, &TrialsFilter::drawingChanged);
}

void TrialsFilter::setBrush(int axis, double lo, double hi) {
  m_brushes[axis] = {std::min(lo, hi), std::max(lo, hi)};
  invalidateFilter();
  emit brushesChanged();
}

void TrialsFilter::clearBrush(int axis) {
  if (m_brushes.erase(axis) == 0) return;
  invalidateFilter();
  emit brushesChanged();
}

void TrialsFilter::clearBrushes() {
  if (m_brushes.empty()) return;
  m_brushes.clear();
  invalidateFilter();
  emit brushesChanged();
}

bool TrialsFilter::accepts(int trial) const { return filterAcceptsRow(trial, QModelIndex()); }

bool TrialsFilter::filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const {
  for (const auto& [axis, range] : m_brushes) {
    const double v = m_model->axisValue(sourceRow, axis);
    // A category's brush takes the categories whose place it covers.
    if (!(v >= range.first && v <= range.second)) return false;
  }
  return QSortFilterProxyModel::filterAcceptsRow(sourceRow, sourceParent);
}

bool TrialsFilter::lessThan(const QModelIndex& left, const QModelIndex& right) const {
  const QVariant a = left.data(TrialsModel::kSortRole), b = right.data(TrialsModel::kSortRole);
  // A trial without a value sorts last whichever the order.
  const bool descending = sortOrder() == Qt::DescendingOrder;
  if (!a.isValid() || !b.isValid()) {
    if (a.isValid() == b.isValid()) return left.row() < right.row();
    return descending ? !a.isValid() : !b.isValid();
  }
  return QVariant::compare(a, b) == QPartialOrdering::Less;
}

}  // namespace fitbench
