// MetricChart, second half: redraws (series from the runs' points, legend, notes), the axes
// and the user's view of them, the hover read-out, and image export. The first half
// (metric_chart.cpp) builds the widgets and keeps the runs and settings.
#include <QChartView>
#include <QCheckBox>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QLabel>
#include <QLayout>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPainter>
#include <QSvgGenerator>
#include <QTimer>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/charts/chart_view.h"
#include "ui/charts/metric_chart.h"
#include "ui/charts/smoothing.h"
#include "ui/common/plot_style.h"
#include "ui/common/zoom.h"

namespace fitbench {
namespace {

constexpr double kHoverRadius = 14.0;  // px: how near the mouse a point must be

// Ticks every niceStepAtLeast((max - min) / divisions) over [min, max], anchored at the multiple
// of the step just below `min`. Qt Charts counts dynamic ticks from the anchor in an int: with the
// anchor at 0 and a range billions of steps away from it (a loss flat to 9 digits, or a deep zoom)
// the count overflows and the axis loops for minutes creating tick items.
// When rounding up to a nice step leaves fewer than two ticks inside the range (a short plot),
// the next smaller nice step is taken, so that the axis still has a scale to read.
void setDynamicTicks(QValueAxis* axis, double min, double max, int divisions) {
  double step = plot::niceStepAtLeast((max - min) / divisions);
  if (!std::isfinite(min)) return;
  const auto inside = [&](double s) { return std::floor(max / s) - std::ceil(min / s) + 1; };
  if (inside(step) < 2) step = plot::niceStepAtLeast(0.4 * step);
  const double anchor = std::floor(min / step) * step;
  if (axis->tickInterval() != step) axis->setTickInterval(step);
  if (axis->tickAnchor() != anchor) axis->setTickAnchor(anchor);
}

}  // namespace

// ---- redraws ----

void MetricChart::markDirty(Run& run, Line line) {
  run.dirty[line] = true;
  scheduleRedraw();
}

void MetricChart::markAllDirty() {
  m_current.dirty.fill(true);
  for (Run& run : m_overlays) run.dirty.fill(true);
  scheduleRedraw();
}

void MetricChart::scheduleRedraw() {
  if (!m_redrawTimer->isActive()) m_redrawTimer->start();
}

void MetricChart::flushNow() {
  m_redrawTimer->stop();
  const auto push = [this](Run& run) {
    for (int i = 0; i < kLineCount; ++i)
      if (run.dirty[i]) pushLine(run, Line(i));
  };
  push(m_current);
  for (Run& run : m_overlays) push(run);
  applyDataRange();
  updateMarkers();
  updateBestMarks();
  updateLegend();
  updateNotes();
}

void MetricChart::updateMarkers() {
  const double x0 = m_xAxis->min(), x1 = m_xAxis->max();
  // Before the chart is laid out (hidden, or not shown yet), a plot of a typical 550 px.
  const double width = m_chart->plotArea().width() > 0 ? m_chart->plotArea().width() : 550.0;
  for (const Line line : {kTrain, kValidation}) {
    QLineSeries* series = m_current.line[line];
    if (!series) continue;
    qsizetype visible = 0;
    for (const QPointF& p : m_current.data[line])
      if (p.x() >= x0 && p.x() <= x1 && std::isfinite(p.y())) ++visible;
    // The x axis spans the points with a margin; the points' own spacing is what matters.
    const double spacing = visible > 1 ? width / static_cast<double>(visible) : width;
    const bool marked = spacing >= kMarkedSpacingPx;
    if (series->pointsVisible() != marked) series->setPointsVisible(marked);
  }
}

QVector<QPointF> MetricChart::drawable(const QVector<QPointF>& points, int* nonFinite,
                                       int* nonPositive) const {
  QVector<QPointF> out;
  out.reserve(points.size());
  int finiteMissing = 0, positiveMissing = 0;
  for (const QPointF& p : points) {
    if (!std::isfinite(p.x()) || !std::isfinite(p.y()))
      ++finiteMissing;
    else if (m_logScale && p.y() <= 0)
      ++positiveMissing;
    else
      out.append(p);
  }
  if (nonFinite) *nonFinite = finiteMissing;
  if (nonPositive) *nonPositive = positiveMissing;
  return out;
}

QVector<QPointF> MetricChart::decimated(const Run& run, const QVector<QPointF>& points) const {
  const int most = run.isOverlay ? kMaxOverlayPoints : kMaxDrawnPoints;
  if (points.size() <= most) return points;
  if (m_followData) return decimateMinMax(points, most, points.front().x(), points.back().x());
  return decimateMinMax(points, most, m_xAxis->min(), m_xAxis->max());
}

void MetricChart::pushLine(Run& run, Line line) {
  run.dirty[line] = false;
  const QVector<QPointF>& data = run.data[line];
  const QVector<QPointF> raw = drawable(data, &run.nonFinite[line], &run.nonPositive[line]);
  Extent& extent = run.extent[line];
  extent = Extent{};
  for (const QPointF& p : raw) {
    if (!extent.valid) extent = Extent{p.x(), p.x(), p.y(), p.y(), true};
    extent.x0 = std::min(extent.x0, p.x());
    extent.x1 = std::max(extent.x1, p.x());
    extent.y0 = std::min(extent.y0, p.y());
    extent.y1 = std::max(extent.y1, p.y());
  }
  for (const QPointF& p : data) {
    if (!std::isfinite(p.x())) continue;
    extent.allX0 = extent.anyX ? std::min(extent.allX0, p.x()) : p.x();
    extent.allX1 = extent.anyX ? std::max(extent.allX1, p.x()) : p.x();
    extent.anyX = true;
  }
  // Only the per-batch line is smoothed: the epoch lines have few points, and their markers show
  // the values Keras logged.
  const bool smooth = m_smoothing > 0 && line == kBatch;
  if (smooth && m_logScale) {
    // Values the log scale leaves out do not enter the average either: as NaN they pass through
    // the filter (keeping indices aligned with `data`) and are then not drawn.
    QVector<QPointF> positive = data;
    for (QPointF& p : positive)
      if (p.y() <= 0) p.setY(std::numeric_limits<double>::quiet_NaN());
    run.smoothed[line] = smoothDebiased(positive, m_smoothing);
  } else {
    run.smoothed[line] = smooth ? smoothDebiased(data, m_smoothing) : QVector<QPointF>{};
  }
  run.line[line]->replace(
      decimated(run, smooth ? drawable(run.smoothed[line], nullptr, nullptr) : raw));
  if (QLineSeries* faint = run.raw[line]) {
    if (smooth)
      faint->replace(decimated(run, raw));
    else if (faint->count() > 0)
      faint->clear();
    faint->setVisible(smooth);
  }
}

void MetricChart::updateLegend() {
  QLegend* legend = m_chart->legend();
  bool changed = false;
  const auto show = [legend, &changed](QLineSeries* series, bool visible) {
    if (!series) return;
    for (QLegendMarker* marker : legend->markers(series)) {
      // Set every time: a marker Qt Charts has not laid out yet says it is hidden and is then
      // drawn (ten runs' legend listed overlays and a "validation" line that had no points).
      if (marker->isVisible() != visible) changed = true;
      marker->setVisible(visible);
    }
  };
  QStringList colored;  // the colored runs, named below the chart instead
  for (const Run* run : allRuns()) {
    bool shown = false;  // an overlay shows one entry, its label
    if (run->color.isValid() && run->hasData() && !run->hidden)
      colored << QStringLiteral(
                     "<span style=\"white-space:nowrap\"><span style=\"color:%1\">&#9473;&#9473;"
                     "</span>&nbsp;%2</span>")
                     .arg(run->color.name(), run->label.toHtmlEscaped());
    for (int i : {kTrain, kValidation, kBatch}) {
      const bool hasData = !run->data[i].isEmpty() && !run->hidden && !run->color.isValid();
      show(run->line[i], hasData && !(run->isOverlay && shown));
      shown = shown || hasData;
      show(run->raw[i], false);
    }
  }
  std::reverse(colored.begin(), colored.end());  // in the order they were added
  const QString legendHtml =
      colored.isEmpty()
          ? QString()
          : colored.join(QStringLiteral("&nbsp;&nbsp;&nbsp; ")) +
                tr("&nbsp;&nbsp;&nbsp; <span style=\"color:#777777; white-space:nowrap\">solid: "
                   "train · dashed: validation · &#9679; best epoch</span>");
  if (m_runsLegend->text() != legendHtml) {
    m_runsLegend->setText(legendHtml);
    m_runsLegend->setVisible(!colored.isEmpty() && m_runsLegendVisible);
  }
  // Qt Charts 6.4 does not lay the legend out again when a marker's visibility changes: without
  // this, a legend laid out while empty kept one bare marker and no text.
  if (changed) {
    if (QGraphicsLayout* layout = legend->layout()) layout->invalidate();
    m_chart->layout()->invalidate();
  }
}

void MetricChart::changeEvent(QEvent* event) {
  QWidget::changeEvent(event);
  if (event->type() == QEvent::EnabledChange) placeEmptyNote();
}

QString MetricChart::emptyText() const {
  return m_emptyNote->isVisible() ? m_emptyNote->text() : QString();
}

void MetricChart::placeEmptyNote() {
  bool any = false;
  for (const Run* run : allRuns()) any = any || (run->hasData() && !run->hidden);
  m_emptyNote->setVisible(!any);
  if (any) return;
  m_emptyNote->setText(
      isEnabled() ? tr("Press Run to plot the %1 of every batch and epoch.").arg(m_metricName)
                  : tr("No metric is compiled (Training tab), so this chart stays empty."));
  const QRectF area = m_chart->plotArea(), text = m_emptyNote->boundingRect();
  m_emptyNote->setPos(area.center() - QPointF(text.width() / 2, text.height() / 2));
}

void MetricChart::updateNotes() {
  placeEmptyNote();
  int nonFinite = 0, nonPositive = 0;
  for (const Run* run : allRuns()) {
    for (int i = 0; i < kLineCount; ++i) {
      nonFinite += run->nonFinite[i];
      nonPositive += run->nonPositive[i];
    }
  }
  QStringList notes;
  if (nonPositive > 0)
    notes << (nonPositive == 1
                  ? tr("1 value ≤ 0 is not shown on the log scale")
                  : tr("%1 values ≤ 0 are not shown on the log scale").arg(nonPositive));
  if (nonFinite > 0)
    notes << (nonFinite == 1 ? tr("1 NaN or infinite value is not drawn")
                             : tr("%1 NaN or infinite values are not drawn").arg(nonFinite));
  m_noteLabel->setText(notes.join(QStringLiteral("; ")));
  m_noteLabel->setVisible(!notes.isEmpty());
  QString logTip = tr("Logarithmic y axis. Values ≤ 0 cannot be shown on it and are left out.");
  if (nonPositive > 0) logTip += QLatin1Char('\n') + notes.front() + QLatin1Char('.');
  m_logCheck->setToolTip(logTip);
  m_noteLabel->setToolTip(logTip);
}

// ---- axes and view ----

void MetricChart::applyDataRange() {
  if (!m_followData) return;
  Extent all;
  for (const Run* run : allRuns()) {
    if (run->hidden) continue;
    for (const Extent& e : run->extent) {
      if (e.anyX) {
        all.allX0 = all.anyX ? std::min(all.allX0, e.allX0) : e.allX0;
        all.allX1 = all.anyX ? std::max(all.allX1, e.allX1) : e.allX1;
        all.anyX = true;
      }
      if (!e.valid) continue;
      if (!all.valid) {
        all.x0 = e.x0, all.x1 = e.x1, all.y0 = e.y0, all.y1 = e.y1;
        all.valid = true;
      }
      all.x0 = std::min(all.x0, e.x0);
      all.x1 = std::max(all.x1, e.x1);
      all.y0 = std::min(all.y0, e.y0);
      all.y1 = std::max(all.y1, e.y1);
    }
  }
  // x: whole epochs around every point (drawn or NaN), starting at 0 for a run that starts at
  // epoch 1.
  double x0 = all.anyX ? std::max(0.0, std::ceil(all.allX0) - 1) : 0.0;
  if (all.anyX && all.allX0 < 0) x0 = std::floor(all.allX0);
  double x1 = all.anyX ? std::max(x0 + 1, std::ceil(all.allX1)) : 1.0;
  const double xPad = 0.02 * (x1 - x0);
  x0 -= xPad;
  x1 += xPad;
  double y0 = 0, y1 = 1;
  if (m_logScale) {
    // A margin of 15% on either side, as a factor; accuracy keeps 1 as its top.
    y0 = all.valid ? all.y0 / 1.15 : 0.1;
    y1 = all.valid ? all.y1 * 1.15 : 1.0;
    if (isAccuracy()) y1 = std::max(1.0, all.valid ? all.y1 : 1.0);
    if (y1 <= y0 * 1.01) y1 = y0 * 10;
  } else if (isAccuracy()) {
    if (all.valid) y0 = std::min(0.0, all.y0), y1 = std::max(1.0, all.y1);
  } else if (all.valid) {
    double lo = all.y0, hi = all.y1;
    // A line flat to float rounding is shown a millionth of its value high at least.
    const double least = 1e-6 * std::max(std::abs(lo), std::abs(hi));
    if (hi > lo && hi - lo < least) {
      const double mid = 0.5 * (lo + hi);
      lo = mid - 0.5 * least;
      hi = mid + 0.5 * least;
    }
    double span = hi - lo;
    if (span <= 0) span = std::max(std::abs(hi) * 0.1, 1e-3);
    y0 = lo - 0.05 * span;
    y1 = hi + 0.05 * span;
    if (all.y0 >= 0 && y0 < 0) y0 = 0;
  }
  m_appliedRange = {x0, x1, y0, y1};
  // A growing range gets its ticks first and a shrinking one its range first, so the axis never
  // lays out a range with another range's much smaller step (a label item per tick: thousands).
  const auto apply = [](QValueAxis* axis, double lo, double hi, int divisions) {
    if (hi - lo < axis->max() - axis->min()) {
      axis->setRange(lo, hi);
      setDynamicTicks(axis, lo, hi, divisions);
    } else {
      setDynamicTicks(axis, lo, hi, divisions);
      axis->setRange(lo, hi);
    }
  };
  apply(m_xAxis, x0, x1, divisions(Qt::Horizontal));
  if (auto* linear = qobject_cast<QValueAxis*>(m_yAxis))
    apply(linear, y0, y1, divisions(Qt::Vertical));
  else
    m_yAxis->setRange(y0, y1);
}

int MetricChart::divisions(Qt::Orientation orientation) const {
  // Up to 10 across and 8 up, fewer when the plot is too small for their labels (a short chart
  // elides every y label to "..."): a tick every 60 px across, every 28 px up at actual size
  // (more with the window's zoom: QtCharts breaks a label that has no room), at least 2.
  const QRectF area = m_chart->plotArea();
  const double zoom = zoomFactor();
  if (orientation == Qt::Horizontal)
    return area.width() > 0 ? std::clamp(static_cast<int>(area.width() / (60.0 * zoom)), 2, 10)
                            : 10;
  return area.height() > 0 ? std::clamp(static_cast<int>(area.height() / (28.0 * zoom)), 2, 8) : 8;
}

void MetricChart::updateTicks() {
  setDynamicTicks(m_xAxis, m_xAxis->min(), m_xAxis->max(), divisions(Qt::Horizontal));
  if (auto* linear = qobject_cast<QValueAxis*>(m_yAxis))
    setDynamicTicks(linear, linear->min(), linear->max(), divisions(Qt::Vertical));
}

void MetricChart::onUserViewChange() {
  double y0 = 0, y1 = 0;
  if (auto* linear = qobject_cast<QValueAxis*>(m_yAxis)) {
    y0 = linear->min();
    y1 = linear->max();
  } else if (auto* log = qobject_cast<QLogValueAxis*>(m_yAxis)) {
    y0 = log->min();
    y1 = log->max();
  }
  const std::array<double, 4> now{m_xAxis->min(), m_xAxis->max(), y0, y1};
  bool moved = false;
  for (int i = 0; i < 4; ++i) {
    const double scale = std::max({std::abs(m_appliedRange[i]), std::abs(now[i]), 1e-12});
    moved = moved || std::abs(now[i] - m_appliedRange[i]) > 1e-9 * scale;
  }
  if (!moved) return;
  m_followData = false;
  // The batch lines are decimated for the visible range: redo them for the new one.
  m_current.dirty[kBatch] = true;
  for (Run& run : m_overlays) run.dirty[kBatch] = true;
  scheduleRedraw();
}

// ---- hover ----

QString MetricChart::lineName(const Run& run, Line line) const {
  const QString kind = line == kBatch   ? tr("train (per batch)")
                       : line == kTrain ? tr("train")
                                        : tr("validation");
  return run.label.isEmpty() ? kind : kind + QStringLiteral(" · ") + run.label;
}

QString MetricChart::hoverText(const QPoint& viewPos) const {
  const QPointF pos = m_chart->mapFromScene(m_view->mapToScene(viewPos));
  const QRectF area = m_chart->plotArea();
  if (!area.adjusted(-kHoverRadius, -kHoverRadius, kHoverRadius, kHoverRadius).contains(pos))
    return {};
  double best = kHoverRadius * kHoverRadius;
  const Run* bestRun = nullptr;
  Line bestLine = kTrain;
  int bestIndex = -1;
  for (const Run* run : allRuns()) {
    for (int i : {kTrain, kValidation, kBatch}) {
      const bool smooth = m_smoothing > 0 && i == kBatch;
      QLineSeries* series = run->line[i];
      const QVector<QPointF>& data = run->data[i];
      if (!series || !series->isVisible() || data.isEmpty()) continue;
      const double xLow = m_chart->mapToValue(pos - QPointF(kHoverRadius, 0), series).x();
      const double xHigh = m_chart->mapToValue(pos + QPointF(kHoverRadius, 0), series).x();
      const auto byX = [](const QPointF& p, double x) { return p.x() < x; };
      const int first =
          static_cast<int>(std::lower_bound(data.begin(), data.end(), xLow, byX) - data.begin());
      const int stop =
          static_cast<int>(std::lower_bound(data.begin(), data.end(), xHigh, byX) - data.begin());
      const int step = std::max(1, (stop - first) / 256);
      for (int j = first; j < std::min(stop + 1, static_cast<int>(data.size())); j += step) {
        // The drawn line is the smoothed one; the faint raw line is there too for the current run.
        QVector<QPointF> candidates;
        if (smooth) candidates << run->smoothed[i][j];
        if (!smooth || run->raw[i]) candidates << data[j];
        for (const QPointF& c : candidates) {
          if (!std::isfinite(c.y()) || (m_logScale && c.y() <= 0)) continue;
          const QPointF d = m_chart->mapToPosition(c, series) - pos;
          const double distance = d.x() * d.x() + d.y() * d.y();
          if (distance < best) {
            best = distance;
            bestRun = run;
            bestLine = Line(i);
            bestIndex = j;
          }
        }
      }
    }
  }
  if (!bestRun) return {};
  const QPointF p = bestRun->data[bestLine][bestIndex];
  QString text = lineName(*bestRun, bestLine) + QLatin1Char('\n');
  text += tr("epoch %1").arg(QString::number(p.x(), 'g', bestLine == kBatch ? 5 : 6));
  text += QLatin1Char('\n') + m_metricName + QLatin1Char(' ') + QString::number(p.y(), 'g', 5);
  if (m_smoothing > 0 && bestLine == kBatch)
    text += tr(" (smoothed %1)")
                .arg(QString::number(bestRun->smoothed[bestLine][bestIndex].y(), 'g', 5));
  return text;
}

void MetricChart::onHover(const QPoint& viewPos) {
  const QString text = hoverText(viewPos);
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(m_view->viewport()->mapToGlobal(viewPos), text, m_view);
}

// ---- export ----

bool MetricChart::exportImage(const QString& path, QString* error) {
  const auto fail = [error](const QString& message) {
    if (error) *error = message;
    return false;
  };
  const QString suffix = QFileInfo(path).suffix().toLower();
  if (suffix != QLatin1String("png") && suffix != QLatin1String("svg"))
    return fail(
        tr("%1: cannot save a chart as '.%2'; use a .png or .svg file name.").arg(path, suffix));
  flushNow();
  if (!isVisible() && layout()) layout()->activate();
  // The chart lays out its legend and axis labels on a posted event: do it before drawing.
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate))
    return fail(tr("%1: cannot write the file: %2.").arg(path, file.errorString()));
  if (suffix == QLatin1String("png")) {
    if (!m_view->grab().save(&file, "PNG"))
      return fail(tr("%1: could not write the PNG image.").arg(path));
    return true;
  }
  QSvgGenerator svg;
  svg.setOutputDevice(&file);
  svg.setSize(m_view->size());
  svg.setResolution(m_view->logicalDpiX());
  svg.setViewBox(QRect(QPoint(0, 0), m_view->size()));
  svg.setTitle(m_chart->title());  // plain text: the title has no markup
  svg.setDescription(tr("fitbench chart of %1").arg(m_metricName));
  QPainter painter;
  if (!painter.begin(&svg)) return fail(tr("%1: could not write the SVG drawing.").arg(path));
  m_view->render(&painter);
  painter.end();
  return true;
}

}  // namespace fitbench
