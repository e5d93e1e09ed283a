#include "ui/rehearsal/trials_model.h"

#include <QColor>
#include <QFont>
#include <cmath>
#include <limits>

namespace fitbench {
namespace {

constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

QColor statusColor(TrialResult::Status status) {
  switch (status) {
    case TrialResult::Status::kCompleted:
      return QColor(46, 125, 50);
    case TrialResult::Status::kRunning:
      return QColor(21, 101, 192);
    case TrialResult::Status::kPruned:
      return QColor(160, 90, 0);
    case TrialResult::Status::kFailed:
      return QColor(176, 0, 32);
    default:
      return QColor(110, 110, 110);
  }
}

}  // namespace

TrialsModel::TrialsModel(QObject* parent) : QAbstractTableModel(parent) {}

void TrialsModel::setPlan(std::shared_ptr<const SweepPlan> plan, std::vector<TrialResult> results) {
  beginResetModel();
  m_plan = std::move(plan);
  m_rows.clear();
  m_axes.clear();
  m_parameterValues.clear();
  if (m_plan) {
    for (const SweepTrial& trial : m_plan->trials) {
      Row row;
      row.result.number = trial.number;
      row.liveBest = kNoValue;
      m_rows.push_back(std::move(row));
    }
    for (TrialResult& r : results)
      if (r.number >= 0 && r.number < trialCount()) m_rows[size_t(r.number)].result = std::move(r);
    const auto& parameters = m_plan->spec.parameters;
    for (size_t p = 0; p < parameters.size(); ++p) {
      std::vector<nlohmann::ordered_json> values;
      for (const SweepTrial& trial : m_plan->trials)
        if (p < trial.values.size()) values.push_back(trial.values[p]);
      m_axes.push_back(SweepAxis::forParameter(parameters[p], values));
    }
    m_axes.push_back(SweepAxis::forObjective(objectiveName(), {}));
    for (const SweepTrial& trial : m_plan->trials) {
      std::vector<double> row;
      for (size_t p = 0; p < parameters.size(); ++p)
        row.push_back(p < trial.values.size() ? m_axes[p].toAxis(trial.values[p]) : kNoValue);
      m_parameterValues.push_back(std::move(row));
    }
    updateObjectiveAxis();
  }
  endResetModel();
  emit axesChanged();
}

void TrialsModel::clear() { setPlan(nullptr); }

std::vector<TrialResult> TrialsModel::results() const {
  std::vector<TrialResult> out;
  for (const Row& row : m_rows) out.push_back(row.result);
  return out;
}

const History& TrialsModel::history(int trial) const {
  const Row& row = m_rows[size_t(trial)];
  return row.result.histories.empty() ? row.live : row.result.histories.front();
}

QString TrialsModel::trialLabel(int trial) const {
  if (!m_plan || trial < 0 || trial >= trialCount()) return {};
  const std::string values = describe_values(m_plan->spec, m_plan->trials[size_t(trial)]);
  return values.empty() ? tr("trial %1").arg(trial)
                        : tr("trial %1: %2").arg(trial).arg(QString::fromStdString(values));
}

QString TrialsModel::objectiveName() const {
  return m_plan ? QString::fromStdString(m_plan->spec.objective.name) : QString();
}

bool TrialsModel::maximize() const { return m_plan && m_plan->spec.objective.maximize; }

int TrialsModel::bestTrial() const {
  int best = -1;
  for (const auto status : {TrialResult::Status::kCompleted, TrialResult::Status::kPruned}) {
    for (const Row& row : m_rows) {
      const TrialResult& r = row.result;
      if (r.status != status || !r.has_objective() || !std::isfinite(r.objective)) continue;
      if (best < 0) {
        best = r.number;
        continue;
      }
      const double b = m_rows[size_t(best)].result.objective;
      if (maximize() ? r.objective > b : r.objective < b) best = r.number;
    }
    if (best >= 0) return best;
  }
  return best;
}

void TrialsModel::trialBegan(int trial) {
  if (trial < 0 || trial >= trialCount()) return;
  m_rows[size_t(trial)].result.status = TrialResult::Status::kRunning;
  rowChanged(trial);
}

void TrialsModel::trialEpoch(int trial, int execution, int epoch, const Logs& logs) {
  if (trial < 0 || trial >= trialCount() || execution != 0) return;
  Row& row = m_rows[size_t(trial)];
  row.result.status = TrialResult::Status::kRunning;
  row.live.epoch.push_back(epoch);
  for (const auto& [key, value] : logs) row.live.history[key].push_back(value);
  row.result.epochs_run = epoch + 1;
  const auto it = logs.find(objectiveName().toStdString());
  if (it != logs.end() && std::isfinite(it->second) &&
      (std::isnan(row.liveBest) ||
       (maximize() ? it->second > row.liveBest : it->second < row.liveBest)))
    row.liveBest = it->second;
  rowChanged(trial);
}

void TrialsModel::trialEnded(const TrialResult& result) {
  if (result.number < 0 || result.number >= trialCount()) return;
  Row& row = m_rows[size_t(result.number)];
  row.result = result;
  row.live = History{};
  rowChanged(result.number);
}

void TrialsModel::rowChanged(int trial) {
  emit dataChanged(index(trial, 0), index(trial, columnCount() - 1));
  updateObjectiveAxis();
}

void TrialsModel::updateObjectiveAxis() {
  if (m_axes.empty()) return;
  std::vector<double> values;
  for (int t = 0; t < trialCount(); ++t) values.push_back(axisValue(t, objectiveAxis()));
  const SweepAxis axis = SweepAxis::forObjective(objectiveName(), values);
  SweepAxis& now = m_axes.back();
  if (axis.lo == now.lo && axis.hi == now.hi) return;
  now = axis;
  emit axesChanged();
}

double TrialsModel::axisValue(int trial, int axis) const {
  if (trial < 0 || trial >= trialCount() || axis < 0 || axis >= int(m_axes.size())) return kNoValue;
  if (axis < objectiveAxis()) return m_parameterValues[size_t(trial)][size_t(axis)];
  const Row& row = m_rows[size_t(trial)];
  if (row.result.has_objective()) return row.result.objective;
  return row.result.status == TrialResult::Status::kRunning ? row.liveBest : kNoValue;
}

double TrialsModel::objectiveShade(int trial) const {
  const double v = axisValue(trial, objectiveAxis());
  if (!std::isfinite(v) || m_axes.empty()) return kNoValue;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (int t = 0; t < trialCount(); ++t) {
    const double o = axisValue(t, objectiveAxis());
    if (!std::isfinite(o)) continue;
    lo = std::min(lo, o);
    hi = std::max(hi, o);
  }
  const double f = hi > lo ? (v - lo) / (hi - lo) : 0.0;
  return maximize() ? 1.0 - f : f;
}

int TrialsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : trialCount();
}

int TrialsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() || !m_plan ? 0 : parameterCount() + 6;
}

QVariant TrialsModel::cell(const Row& row, int column, bool forSort) const {
  const TrialResult& r = row.result;
  const bool running = r.status == TrialResult::Status::kRunning;
  if (column == 0) return r.number;
  if (column == statusColumn()) {
    if (forSort) return int(r.status);
    const QString name = QString::fromStdString(status_name(r.status));
    return running && r.epochs_run > 0 ? tr("%1 · epoch %2").arg(name).arg(r.epochs_run) : name;
  }
  if (column < objectiveColumn()) {
    const int p = column - parameterColumn(0);
    const auto& values = m_plan->trials[size_t(r.number)].values;
    if (size_t(p) >= values.size()) return {};
    if (forSort && values[size_t(p)].is_number()) return values[size_t(p)].get<double>();
    return valueText(values[size_t(p)]);
  }
  if (column == objectiveColumn()) {
    const double v = r.has_objective() ? r.objective : running ? row.liveBest : kNoValue;
    if (!std::isfinite(v)) return forSort ? QVariant() : QVariant(QString());
    if (forSort) return v;
    QString text = QString::number(v, 'g', 4);
    if (r.objectives.size() > 1) text += QStringLiteral(" ± %1").arg(r.spread, 0, 'g', 2);
    return text;
  }
  const int extra = column - objectiveColumn();
  if (extra == 1) {
    if (r.best_epoch < 0) return forSort ? QVariant() : QVariant(QString());
    return r.best_epoch + 1;
  }
  if (extra == 2) return r.epochs_run;
  if (r.status == TrialResult::Status::kPending || running)
    return forSort ? QVariant() : QVariant(QString());
  return forSort ? QVariant(r.seconds) : QVariant(QString::number(r.seconds, 'f', 2));
}

QVariant TrialsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= trialCount()) return {};
  const Row& row = m_rows[size_t(index.row())];
  const int column = index.column();
  switch (role) {
    case Qt::DisplayRole:
      return cell(row, column, false);
    case kSortRole:
      return cell(row, column, true);
    case kTrialRole:
      return row.result.number;
    case Qt::TextAlignmentRole:
      return column == statusColumn() ? int(Qt::AlignLeft | Qt::AlignVCenter)
                                      : int(Qt::AlignRight | Qt::AlignVCenter);
    case Qt::ForegroundRole:
      if (column == statusColumn()) return statusColor(row.result.status);
      return {};
    case Qt::FontRole:
      if (column == objectiveColumn() && (row.result.status == TrialResult::Status::kRunning ||
                                          row.result.number == bestTrial())) {
        QFont font;
        font.setItalic(row.result.status == TrialResult::Status::kRunning);
        font.setBold(row.result.number == bestTrial());
        return font;
      }
      return {};
    case Qt::ToolTipRole:
      if (!row.result.error.empty()) return QString::fromStdString(row.result.error);
      return trialLabel(row.result.number);
    default:
      return {};
  }
}

QVariant TrialsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || !m_plan) return {};
  if (role == Qt::ToolTipRole && section >= parameterColumn(0) && section < objectiveColumn())
    return QString::fromStdString(m_plan->spec.parameters[size_t(section - 2)].path);
  if (role == Qt::ToolTipRole && section == objectiveColumn())
    return maximize() ? tr("The objective (larger is better); mean ± spread over executions")
                      : tr("The objective (smaller is better); mean ± spread over executions");
  if (role != Qt::DisplayRole) return {};
  if (section == 0) return tr("Trial");
  if (section == statusColumn()) return tr("Status");
  if (section < objectiveColumn()) return m_axes[size_t(section - 2)].name;
  if (section == objectiveColumn())
    return objectiveName() + (maximize() ? QStringLiteral(" ↑") : QStringLiteral(" ↓"));
  const int extra = section - objectiveColumn();
  return extra == 1 ? tr("Best epoch") : extra == 2 ? tr("Epochs") : tr("Time (s)");
}

}  // namespace fitbench
