#include "ui/metric_chart.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QCoreApplication>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMessageBox>
#include <QPainter>
#include <QSlider>
#include <QSvgGenerator>
#include <QTimer>
#include <QToolButton>
#include <QToolTip>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>

#include "ui/chart_view.h"
#include "ui/plot_style.h"
#include "ui/smoothing.h"

namespace fitbench {
namespace {

const QColor kTrainColor(31, 119, 180);       // blue
const QColor kValidationColor(255, 127, 14);  // orange
const QColor kBatchColor(107, 174, 214);      // light blue: per-batch training values
constexpr double kHoverRadius = 14.0;         // px: how near the mouse a point must be

QColor withAlpha(QColor color, int alpha) {
  color.setAlpha(alpha);
  return color;
}

// Ticks every niceStepAtLeast((max - min) / divisions) over [min, max], anchored at the multiple
// of the step just below `min`. Qt Charts counts dynamic ticks from the anchor in an int: with the
// anchor at 0 and a range billions of steps away from it (a loss flat to 9 digits, or a deep zoom)
// the count overflows and the axis loops for minutes creating tick items.
void setDynamicTicks(QValueAxis* axis, double min, double max, int divisions) {
  const double step = plot::niceStepAtLeast((max - min) / divisions);
  if (!std::isfinite(min)) return;
  const double anchor = std::floor(min / step) * step;
  if (axis->tickInterval() != step) axis->setTickInterval(step);
  if (axis->tickAnchor() != anchor) axis->setTickAnchor(anchor);
}

// "Loss", or "Loss · run 2 (2 devices)" while a labelled run is the current one.
QString chartTitle(const QString& metric, const QString& runLabel) {
  QString title = metric;
  // Keras's abbreviated metric keys in capitals (MAE), the others as words (Accuracy, Loss).
  static const QStringList kAbbreviations = {QStringLiteral("mae"),  QStringLiteral("mse"),
                                             QStringLiteral("rmse"), QStringLiteral("mape"),
                                             QStringLiteral("msle"), QStringLiteral("auc")};
  if (kAbbreviations.contains(title))
    title = title.toUpper();
  else if (!title.isEmpty())
    title[0] = title[0].toUpper();
  return runLabel.isEmpty() ? title : title + QStringLiteral(" · ") + runLabel;
}

}  // namespace

bool MetricChart::Run::hasData() const {
  return std::any_of(data.begin(), data.end(), [](const auto& d) { return !d.isEmpty(); });
}

MetricChart::MetricChart(const QString& metricName, QWidget* parent)
    : QWidget(parent), m_metricName(metricName) {
  buildWidgets();
  createRunSeries(m_current);
  connectSignals();
  flushNow();
}

MetricChart::~MetricChart() = default;

void MetricChart::buildWidgets() {
  m_chart = new QChart;
  m_chart->setTitle(chartTitle(m_metricName, QString()));
  QFont titleFont = m_chart->titleFont();
  titleFont.setBold(true);
  m_chart->setTitleFont(titleFont);
  m_chart->setAnimationOptions(QChart::NoAnimation);
  m_chart->setBackgroundRoundness(0);
  m_chart->setMargins(QMargins(4, 0, 8, 0));
  m_chart->layout()->setContentsMargins(0, 0, 0, 0);
  m_chart->legend()->setAlignment(Qt::AlignBottom);
  m_chart->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);

  m_xAxis = new QValueAxis;
  m_xAxis->setTitleText(tr("Epoch"));
  m_xAxis->setLabelFormat(QStringLiteral("%g"));
  m_xAxis->setTickType(QValueAxis::TicksDynamic);
  m_xAxis->setTickAnchor(0);
  m_chart->addAxis(m_xAxis, Qt::AlignBottom);
  replaceYAxis();

  m_emptyNote = new QGraphicsSimpleTextItem(m_chart);
  m_emptyNote->setBrush(palette().color(QPalette::PlaceholderText));
  m_emptyNote->setZValue(10);
  connect(m_chart, &QChart::plotAreaChanged, this, [this] { placeEmptyNote(); });

  m_view = new ChartView(m_chart, this);
  m_view->setMinimumSize(240, 160);
  m_view->setFrameShape(QFrame::NoFrame);

  m_smoothingSlider = new QSlider(Qt::Horizontal);
  m_smoothingSlider->setRange(0, 99);
  m_smoothingSlider->setValue(qRound(m_smoothing * 100));
  m_smoothingSlider->setMinimumWidth(60);
  m_smoothingSlider->setMaximumWidth(160);
  m_smoothingValue = new QLabel(QString::number(m_smoothing, 'f', 2));
  m_smoothingValue->setMinimumWidth(m_smoothingValue->fontMetrics().horizontalAdvance("0.00"));
  const QString smoothingTip =
      tr("Smoothing, as in TensorBoard: a debiased exponential moving average of the per-batch "
         "line, with the raw values drawn faintly behind it. The epoch points are shown as "
         "logged. 0 turns it off.");
  m_smoothingSlider->setToolTip(smoothingTip);
  auto* smoothingLabel = new QLabel(tr("Smoothing"));
  smoothingLabel->setToolTip(smoothingTip);
  m_logCheck = new QCheckBox(tr("Log scale"));
  m_noteLabel = new QLabel;
  m_noteLabel->setStyleSheet(QStringLiteral("color: #a05a00;"));
  m_noteLabel->setWordWrap(true);
  m_noteLabel->setContentsMargins(6, 0, 6, 0);
  m_noteLabel->hide();
  m_resetButton = new QToolButton;
  m_resetButton->setText(tr("Reset"));
  m_resetButton->setToolTip(tr(
      "Reset view: back to axes that follow the data (or double-click the chart, or press Home).\n"
      "Drag a rectangle to zoom in, turn the mouse wheel to zoom, drag with the right or middle "
      "button or use the arrow keys to pan."));
  m_saveButton = new QToolButton;
  m_saveButton->setText(tr("Save…"));
  m_saveButton->setToolTip(tr("Save this chart as a PNG or SVG image."));
  for (QToolButton* button : {m_resetButton, m_saveButton})
    button->setToolButtonStyle(Qt::ToolButtonTextOnly);

  auto* tools = new QHBoxLayout;
  tools->setContentsMargins(4, 2, 4, 0);
  tools->addWidget(smoothingLabel);
  tools->addWidget(m_smoothingSlider, 1);
  tools->addWidget(m_smoothingValue);
  tools->addSpacing(12);
  tools->addWidget(m_logCheck);
  tools->addStretch(1);
  tools->addWidget(m_resetButton);
  tools->addWidget(m_saveButton);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addLayout(tools);
  layout->addWidget(m_noteLabel);
  layout->addWidget(m_view, 1);

  m_redrawTimer = new QTimer(this);
  m_redrawTimer->setSingleShot(true);
  m_redrawTimer->setInterval(kRedrawIntervalMs);
}

void MetricChart::connectSignals() {
  connect(m_redrawTimer, &QTimer::timeout, this, &MetricChart::flushNow);
  connect(m_smoothingSlider, &QSlider::valueChanged, this,
          [this](int value) { setSmoothing(value / 100.0); });
  connect(m_logCheck, &QCheckBox::toggled, this, &MetricChart::setLogScale);
  connect(m_resetButton, &QToolButton::clicked, this, &MetricChart::resetView);
  connect(m_saveButton, &QToolButton::clicked, this, &MetricChart::onSaveClicked);
  connect(m_xAxis, &QValueAxis::rangeChanged, this, &MetricChart::updateTicks);
  auto* view = static_cast<ChartView*>(m_view);
  view->viewEdited = [this] { onUserViewChange(); };
  view->resetRequested = [this] { resetView(); };
  view->hovered = [this](const QPoint& pos) { onHover(pos); };
}

// ---- runs and their series ----

void MetricChart::createRunSeries(Run& run) {
  const auto make = [this] {
    auto* series = new QLineSeries;
    m_chart->addSeries(series);
    series->attachAxis(m_xAxis);
    series->attachAxis(m_yAxis);
    return series;
  };
  // Added back to front: faint raw lines, then the batch line, then the epoch lines on top.
  for (int i = 0; i < kLineCount; ++i) run.raw[i] = make();
  for (int i = 0; i < kLineCount; ++i) run.line[i] = make();
  styleRun(run);
}

void MetricChart::styleRun(Run& run) {
  for (int i = 0; i < kLineCount; ++i) {
    const QColor base = i == kBatch ? kBatchColor : i == kTrain ? kTrainColor : kValidationColor;
    const bool epochLine = i != kBatch;
    QLineSeries* line = run.line[i];
    QPen pen(run.isOverlay ? withAlpha(base, 90) : base);
    pen.setWidthF(epochLine ? (run.isOverlay ? 1.5 : 2.0) : 1.0);
    // Overlays are faded, not dashed: Qt strokes a dashed path of hundreds of points slowly
    // (eight dashed overlays kept the UI thread busy for 80-130 ms when the axes changed).
    line->setPen(pen);
    line->setColor(pen.color());
    // A faded overlay is a line alone: eight overlays' markers (2,400 of them for 150-epoch runs
    // with validation) cost the chart ~30 ms per relayout, and the current run's markers are
    // the values to read.
    line->setPointsVisible(epochLine && !run.isOverlay);
    line->setMarkerSize(run.isOverlay ? 4 : 6);
    if (run.isOverlay) {
      // The legend shows one entry per overlay, normally the train line: the bare label.
      line->setName(i == kTrain        ? run.label
                    : i == kValidation ? run.label + tr(" (validation)")
                                       : run.label + tr(" (per batch)"));
    } else {
      line->setName(i == kBatch   ? tr("train (per batch)")
                    : i == kTrain ? tr("train")
                                  : tr("validation"));
    }
    if (QLineSeries* raw = run.raw[i]) {
      QPen faint(withAlpha(i == kBatch ? kTrainColor : base, 60));
      faint.setWidthF(1.0);
      raw->setPen(faint);
      raw->setName(line->name() + tr(" (raw)"));
    }
  }
}

void MetricChart::deleteRunSeries(Run& run) {
  for (auto* list : {&run.line, &run.raw}) {
    for (QLineSeries*& series : *list) {
      if (!series) continue;
      m_chart->removeSeries(series);
      delete series;
      series = nullptr;
    }
  }
}

void MetricChart::beginRun(const QString& label) {
  flushNow();
  if (m_current.hasData()) {
    Run old = std::move(m_current);
    m_current = Run{};
    old.isOverlay = true;
    if (old.label.isEmpty()) old.label = tr("earlier run");
    for (QLineSeries*& raw : old.raw) {
      m_chart->removeSeries(raw);
      delete raw;
      raw = nullptr;
    }
    styleRun(old);
    // Drawn again with an overlay's fewer points (every overlay is redrawn when an axis moves).
    for (int i = 0; i < kLineCount; ++i) markDirty(old, Line(i));
    m_overlays.push_back(std::move(old));
    while (static_cast<int>(m_overlays.size()) > kMaxOverlays) {
      deleteRunSeries(m_overlays.front());
      m_overlays.erase(m_overlays.begin());
    }
    createRunSeries(m_current);
  }
  m_current.label = label;
  m_chart->setTitle(chartTitle(m_metricName, label));
  for (int i = 0; i < kLineCount; ++i) markDirty(m_current, Line(i));
  flushNow();
}

void MetricChart::setMetricName(const QString& metricName) {
  if (metricName == m_metricName) return;
  m_metricName = metricName;
  for (auto& d : m_current.data) d.clear();
  for (auto& d : m_current.smoothed) d.clear();
  for (int i = 0; i < kLineCount; ++i) markDirty(m_current, Line(i));
  m_chart->setTitle(chartTitle(m_metricName, m_current.label));
  clearOverlays();  // and redraws
}

void MetricChart::clearOverlays() {
  for (Run& run : m_overlays) deleteRunSeries(run);
  m_overlays.clear();
  flushNow();
}

void MetricChart::addBatchPoints(const QVector<QPointF>& points) {
  if (points.isEmpty()) return;
  QVector<QPointF>& data = m_current.data[kBatch];
  const bool inOrder =
      (data.isEmpty() || points.front().x() >= data.back().x()) &&
      std::is_sorted(points.begin(), points.end(),
                     [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  data += points;
  if (!inOrder)
    std::stable_sort(data.begin(), data.end(),
                     [](const QPointF& a, const QPointF& b) { return a.x() < b.x(); });
  markDirty(m_current, kBatch);
}

void MetricChart::addEpochPoint(bool validation, double epoch, double value) {
  const Line line = validation ? kValidation : kTrain;
  QVector<QPointF>& data = m_current.data[line];
  auto it = std::lower_bound(data.begin(), data.end(), epoch,
                             [](const QPointF& p, double x) { return p.x() < x; });
  if (it != data.end() && it->x() == epoch)
    it->setY(value);
  else
    data.insert(it, QPointF(epoch, value));
  markDirty(m_current, line);
}

int MetricChart::epochPointCount(bool validation) const {
  return static_cast<int>(m_current.data[validation ? kValidation : kTrain].size());
}

int MetricChart::batchPointCount() const { return static_cast<int>(m_current.data[kBatch].size()); }

std::vector<const MetricChart::Run*> MetricChart::allRuns() const {
  std::vector<const Run*> runs{&m_current};
  for (auto it = m_overlays.rbegin(); it != m_overlays.rend(); ++it) runs.push_back(&*it);
  return runs;
}

// ---- settings ----

void MetricChart::setSmoothing(double weight) {
  weight = std::clamp(std::isfinite(weight) ? weight : 0.0, 0.0, 0.99);
  if (weight == m_smoothing) return;
  m_smoothing = weight;
  const QSignalBlocker block(m_smoothingSlider);
  m_smoothingSlider->setValue(qRound(weight * 100));
  m_smoothingValue->setText(QString::number(weight, 'f', 2));
  markAllDirty();
  emit smoothingChanged(weight);
}

void MetricChart::setLogScale(bool on) {
  if (on == m_logScale) return;
  m_logScale = on;
  const QSignalBlocker block(m_logCheck);
  m_logCheck->setChecked(on);
  replaceYAxis();
  m_followData = true;
  markAllDirty();
  flushNow();
  emit logScaleChanged(on);
}

void MetricChart::replaceYAxis() {
  QAbstractAxis* axis = nullptr;
  if (m_logScale) {
    auto* log = new QLogValueAxis;
    log->setBase(10);
    log->setLabelFormat(QStringLiteral("%g"));
    log->setMinorTickCount(8);
    axis = log;
  } else {
    auto* linear = new QValueAxis;
    linear->setLabelFormat(QStringLiteral("%g"));
    linear->setTickType(QValueAxis::TicksDynamic);
    linear->setTickAnchor(0);
    connect(linear, &QValueAxis::rangeChanged, this, &MetricChart::updateTicks);
    axis = linear;
  }
  if (m_yAxis) {
    m_chart->removeAxis(m_yAxis);
    delete m_yAxis;
  }
  m_yAxis = axis;
  m_chart->addAxis(m_yAxis, Qt::AlignLeft);
  for (QAbstractSeries* series : m_chart->series()) series->attachAxis(m_yAxis);
}

void MetricChart::resetView() {
  m_followData = true;
  markAllDirty();
  flushNow();
}

void MetricChart::onSaveClicked() {
  const QString path =
      QFileDialog::getSaveFileName(this, tr("Save chart"), m_metricName + QStringLiteral(".png"),
                                   tr("PNG image (*.png);;SVG drawing (*.svg)"));
  if (path.isEmpty()) return;
  QString error;
  if (!exportImage(path, &error)) QMessageBox::warning(this, tr("Save chart"), error);
}

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
  updateLegend();
  updateNotes();
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
  // Markers on every epoch point while they can be told apart; a line alone beyond that.
  if (line != kBatch)
    run.line[line]->setPointsVisible(!run.isOverlay && data.size() <= kMaxMarkedPoints);
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
      if (marker->isVisible() == visible) continue;
      marker->setVisible(visible);
      changed = true;
    }
  };
  for (const Run* run : allRuns()) {
    bool shown = false;  // an overlay shows one entry, its label
    for (int i : {kTrain, kValidation, kBatch}) {
      const bool hasData = !run->data[i].isEmpty();
      show(run->line[i], hasData && !(run->isOverlay && shown));
      shown = shown || hasData;
      show(run->raw[i], false);
    }
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
  for (const Run* run : allRuns()) any = any || run->hasData();
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
  apply(m_xAxis, x0, x1, 10);
  if (auto* linear = qobject_cast<QValueAxis*>(m_yAxis))
    apply(linear, y0, y1, 8);
  else
    m_yAxis->setRange(y0, y1);
}

void MetricChart::updateTicks() {
  setDynamicTicks(m_xAxis, m_xAxis->min(), m_xAxis->max(), 10);
  if (auto* linear = qobject_cast<QValueAxis*>(m_yAxis))
    setDynamicTicks(linear, linear->min(), linear->max(), 8);
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
