#include "ui/charts/metric_chart.h"

#include <QChart>
#include <QCheckBox>
#include <QFileDialog>
#include <QGraphicsLayout>
#include <QGraphicsSimpleTextItem>
#include <QHBoxLayout>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QMessageBox>
#include <QScatterSeries>
#include <QSlider>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "ui/charts/chart_view.h"
#include "ui/charts/smoothing.h"
#include "ui/common/plot_style.h"
#include "ui/common/zoom.h"

namespace fitbench {
namespace {

const QColor kTrainColor(31, 119, 180);       // blue
const QColor kValidationColor(255, 127, 14);  // orange
const QColor kBatchColor(107, 174, 214);      // light blue: per-batch training values

QColor withAlpha(QColor color, int alpha) {
  color.setAlpha(alpha);
  return color;
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
  connect(m_chart, &QChart::plotAreaChanged, this, [this] {
    placeEmptyNote();
    updateMarkers();
    updateTicks();
  });

  m_view = new ChartView(m_chart, this);
  m_view->setMinimumSize(240, 160);
  followZoom(m_chart, this);
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
  m_noteLabel->setObjectName(QStringLiteral("chartNote"));
  m_noteLabel->setStyleSheet(QStringLiteral("color: #a05a00;"));
  m_noteLabel->setWordWrap(true);
  m_noteLabel->setContentsMargins(6, 0, 6, 0);
  m_noteLabel->hide();
  // Colored runs (sweep trials) are named here, wrapped over as many lines as their labels need:
  // the chart's own legend is one row that elides "trial 3: learning_rate=0.01, units=8".
  m_runsLegend = new QLabel;
  m_runsLegend->setObjectName(QStringLiteral("runsLegend"));
  m_runsLegend->setTextFormat(Qt::RichText);
  m_runsLegend->setWordWrap(true);
  m_runsLegend->setContentsMargins(8, 0, 8, 2);
  m_runsLegend->hide();
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
  layout->addWidget(m_runsLegend);

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

QLineSeries* MetricChart::newLine() {
  auto* series = new QLineSeries;
  m_chart->addSeries(series);
  series->attachAxis(m_xAxis);
  series->attachAxis(m_yAxis);
  return series;
}

void MetricChart::createRunSeries(Run& run) {
  // Added back to front: faint raw lines, then the batch line, then the epoch lines on top.
  for (int i = 0; i < kLineCount; ++i) run.raw[i] = newLine();
  for (int i = 0; i < kLineCount; ++i) run.line[i] = newLine();
  styleRun(run);
}

void MetricChart::styleRun(Run& run) {
  for (int i = 0; i < kLineCount; ++i) {
    const QColor base = i == kBatch ? kBatchColor : i == kTrain ? kTrainColor : kValidationColor;
    const bool epochLine = i != kBatch;
    QLineSeries* line = run.line[i];
    const bool colored = run.color.isValid();
    QPen pen(colored ? run.color : run.isOverlay ? withAlpha(base, 90) : base);
    pen.setWidthF(epochLine ? (run.isOverlay && !colored ? 1.5 : 2.0) : 1.0);
    // A colored run's validation line is dashed: its few epoch points stroke fast.
    if (colored && i == kValidation) pen.setStyle(Qt::DashLine);
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
  if (run.best) {
    m_chart->removeSeries(run.best);
    delete run.best;
    run.best = nullptr;
  }
  for (auto* list : {&run.line, &run.raw}) {
    for (QLineSeries*& series : *list) {
      if (!series) continue;
      m_chart->removeSeries(series);
      delete series;
      series = nullptr;
    }
  }
}

void MetricChart::beginRun(const QString& label, int id, const QColor& color) {
  flushNow();
  if (m_current.hasData()) {
    Run old = std::move(m_current);
    m_current = Run{};
    old.isOverlay = true;
    old.color = old.overlayColor;
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
      const int dropped = m_overlays.front().id;
      deleteRunSeries(m_overlays.front());
      m_overlays.erase(m_overlays.begin());
      if (dropped >= 0) emit runDropped(dropped);
    }
    createRunSeries(m_current);
  }
  m_current.label = label;
  m_current.id = id;
  m_current.overlayColor = color;
  m_current.hidden = false;
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
  std::vector<int> dropped;
  for (Run& run : m_overlays) {
    deleteRunSeries(run);
    if (run.id >= 0) dropped.push_back(run.id);
  }
  m_overlays.clear();
  flushNow();
  for (const int id : dropped) emit runDropped(id);
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
  zoomChart(m_chart);  // the new axis at the window's zoom
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

}  // namespace fitbench
