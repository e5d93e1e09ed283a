// MainWindow's runs table: every run of the session (Run's, each sweep trial's) in a dock below
// the charts, beside the log and the timeline, and the loss and metric charts kept in step with it
// (shown, hidden, renamed, deleted; a run dropped from the charts is unchecked). The window's other
// parts: main_window.cpp.
#include <QDockWidget>

#include "ui/charts/metric_chart.h"
#include "ui/charts/runs_list.h"
#include "ui/common/session_runs.h"
#include "ui/window/main_window.h"

namespace fitbench {
namespace {

QVector<QPointF> epochPoints(const History& history, const std::string& key) {
  QVector<QPointF> points;
  const auto values = history.history.find(key);
  if (values == history.history.end()) return points;
  for (size_t i = 0; i < history.epoch.size() && i < values->second.size(); ++i)
    points.append(QPointF(history.epoch[i] + 1, values->second[i]));
  return points;
}

}  // namespace

void MainWindow::buildRuns(QDockWidget* besideBottom) {
  m_sessionRuns = new SessionRuns(this);
  m_runsList = new RunsList(m_sessionRuns);
  auto* dock = new QDockWidget(tr("Runs"), this);
  dock->setObjectName(QStringLiteral("RunsDock"));
  dock->setWidget(m_runsList);
  // Below the charts, beside the log and the timeline: the table's settings and values columns
  // want the width, and the right column's tabs keep room for their titles.
  addDockWidget(Qt::BottomDockWidgetArea, dock);
  tabifyDockWidget(besideBottom, dock);
}

void MainWindow::connectRuns() {
  connect(m_sessionRuns, &SessionRuns::added, this, &MainWindow::applyRunToCharts);
  connect(m_sessionRuns, &SessionRuns::changed, this, &MainWindow::applyRunToCharts);
  connect(m_sessionRuns, &SessionRuns::removed, this, [this](int id) {
    m_lossChart->removeRun(id);
    m_metricChart->removeRun(id);
    if (id == m_currentRunId) m_currentRunId = -1;
  });
  for (MetricChart* chart : {m_lossChart, m_metricChart})
    connect(chart, &MetricChart::runDropped, this,
            [this](int id) { m_sessionRuns->setShown(id, false); });
}

void MainWindow::addRunToCharts(const SessionRun& run) {
  if (run.history.epoch.empty()) return;
  const std::string metric = m_metricKey.toStdString();
  m_lossChart->addRun(run.id, run.label, epochPoints(run.history, "loss"),
                      epochPoints(run.history, "val_loss"), run.color, run.bestEpoch + 1);
  if (!metric.empty())
    m_metricChart->addRun(run.id, run.label, epochPoints(run.history, metric),
                          epochPoints(run.history, "val_" + metric), run.color, run.bestEpoch + 1);
}

void MainWindow::applyRunToCharts(int id) {
  const SessionRun* run = m_sessionRuns->find(id);
  if (!run) return;
  for (MetricChart* chart : {m_lossChart, m_metricChart}) {
    if (!chart->hasRun(id)) continue;
    chart->setRunLabel(id, run->label);
    chart->setRunVisible(id, run->shown);
  }
  // A run the charts no longer hold (dropped as the eleventh overlay, cleared, a trial not shown
  // yet) comes back from its History.
  if (run->shown && !m_lossChart->hasRun(id)) addRunToCharts(*run);
}

}  // namespace fitbench
