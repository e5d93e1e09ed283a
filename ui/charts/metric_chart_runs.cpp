// MetricChart, the runs by id: complete runs added in their own color (a sweep trial, an earlier
// run shown again), shown, hidden, renamed and removed as the window's runs list says, and each
// run's best epoch marked with a dot. The chart's other parts: metric_chart.cpp (widgets, live
// runs, settings) and metric_chart_drawing.cpp (redraws, axes, hover, export).
#include <QChart>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QScatterSeries>
#include <QTextDocument>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/charts/metric_chart.h"

namespace fitbench {

MetricChart::Run* MetricChart::findRun(int id) {
  return const_cast<Run*>(static_cast<const MetricChart*>(this)->findRun(id));
}

const MetricChart::Run* MetricChart::findRun(int id) const {
  if (id < 0) return nullptr;
  if (m_current.id == id) return &m_current;
  for (const Run& run : m_overlays)
    if (run.id == id) return &run;
  return nullptr;
}

bool MetricChart::hasRun(int id) const { return findRun(id) != nullptr; }

void MetricChart::addRun(int id, const QString& label, const QVector<QPointF>& train,
                         const QVector<QPointF>& validation, const QColor& color, int bestEpoch) {
  const auto existing = std::find_if(m_overlays.begin(), m_overlays.end(),
                                     [id](const Run& run) { return id >= 0 && run.id == id; });
  if (existing != m_overlays.end()) {
    deleteRunSeries(*existing);
    m_overlays.erase(existing);
  }
  Run run;
  run.label = label;
  run.id = id;
  run.isOverlay = true;
  run.color = color;
  run.bestX = bestEpoch;
  run.data[kTrain] = train;
  run.data[kValidation] = validation;
  // The epoch lines alone: no faint raw lines.
  for (int i = 0; i < kLineCount; ++i) run.line[i] = newLine();
  styleRun(run);
  run.dirty.fill(true);
  m_overlays.push_back(std::move(run));
  scheduleRedraw();
}

void MetricChart::setRunVisible(int id, bool visible) {
  if (Run* run = findRun(id); run && run->hidden == visible) {
    run->hidden = !visible;
    run->dirty.fill(true);
    scheduleRedraw();
  }
}

void MetricChart::setRunLabel(int id, const QString& label) {
  Run* run = findRun(id);
  if (!run || run->label == label) return;
  run->label = label;
  styleRun(*run);
  if (run == &m_current)
    m_chart->setTitle(m_chart->title().section(QStringLiteral(" · "), 0, 0) +
                      (label.isEmpty() ? QString() : " · " + label));
  scheduleRedraw();
}

void MetricChart::removeRun(int id) {
  if (id < 0) return;
  if (m_current.id == id) {
    for (auto& d : m_current.data) d.clear();
    for (auto& d : m_current.smoothed) d.clear();
    m_current.id = -1;
    m_current.dirty.fill(true);
    scheduleRedraw();
    return;
  }
  const auto it = std::find_if(m_overlays.begin(), m_overlays.end(),
                               [id](const Run& run) { return run.id == id; });
  if (it == m_overlays.end()) return;
  deleteRunSeries(*it);
  m_overlays.erase(it);
  scheduleRedraw();
}

QStringList MetricChart::shownRunLabels() const {
  QStringList labels;
  for (const Run* run : allRuns())
    if (run->hasData() && !run->hidden) labels << run->label;
  return labels;
}

void MetricChart::setRunsLegendVisible(bool visible) {
  m_runsLegendVisible = visible;
  m_runsLegend->setVisible(visible && !m_runsLegend->text().isEmpty());
}

QString MetricChart::runsLegendText() const {
  if (m_runsLegend->text().isEmpty()) return {};
  QTextDocument doc;
  doc.setHtml(m_runsLegend->text());
  return doc.toPlainText();
}

QPointF MetricChart::bestMark(int id) const {
  const Run* run = findRun(id);
  if (!run || !run->best || !run->best->isVisible() || run->best->count() == 0) return {};
  return run->best->at(0);
}

void MetricChart::updateBestMarks() {
  const auto apply = [this](Run& run) {
    for (int i = 0; i < kLineCount; ++i) {
      if (run.line[i] && run.line[i]->isVisible() == run.hidden)
        run.line[i]->setVisible(!run.hidden);
      if (run.raw[i] && run.hidden) run.raw[i]->setVisible(false);
    }
    if (run.bestX <= 0) return;
    // On the validation line when the run has one (the objective is usually val_...).
    const QVector<QPointF>& line =
        run.data[kValidation].isEmpty() ? run.data[kTrain] : run.data[kValidation];
    const auto at = std::find_if(line.begin(), line.end(),
                                 [&run](const QPointF& p) { return p.x() == run.bestX; });
    const bool drawable =
        at != line.end() && std::isfinite(at->y()) && !(m_logScale && at->y() <= 0);
    if (!run.best) {
      run.best = new QScatterSeries;
      run.best->setMarkerShape(QScatterSeries::MarkerShapeCircle);
      run.best->setMarkerSize(12);
      run.best->setBorderColor(Qt::white);
      m_chart->addSeries(run.best);
      run.best->attachAxis(m_xAxis);
      run.best->attachAxis(m_yAxis);
      for (QLegendMarker* marker : m_chart->legend()->markers(run.best)) marker->setVisible(false);
    }
    run.best->setColor(run.color.isValid() ? run.color : QColor(31, 119, 180));
    run.best->setName(tr("best epoch · %1").arg(run.label));
    if (drawable)
      run.best->replace(QList<QPointF>{*at});
    else
      run.best->clear();
    run.best->setVisible(drawable && !run.hidden);
  };
  apply(m_current);
  for (Run& run : m_overlays) apply(run);
}

}  // namespace fitbench
