// CapacityView's charts: the stacked bytes per device with the target's line, the step split
// (predicted, and measured after a run) and the scaling curve.

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QCursor>
#include <QHorizontalStackedBarSeries>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QScatterSeries>
#include <QStackedBarSeries>
#include <QToolTip>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "core/distribution/spec/strategies.h"
#include "ui/common/plot_style.h"
#include "ui/common/text_style.h"
#include "ui/common/zoom.h"
#include "ui/rehearsal/capacity_view.h"

namespace fitbench {
namespace {

// The most device bars drawn; past it the first ones and the largest device.
constexpr size_t kMaxBars = 32;

struct Unit {
  double scale = 1.0;
  QString name;
};
// The binary unit that reads `most` with one to four digits.
Unit byteUnit(double most) {
  if (most >= double(int64_t{1} << 30)) return {double(int64_t{1} << 30), QStringLiteral("GiB")};
  if (most >= double(1 << 20)) return {double(1 << 20), QStringLiteral("MiB")};
  if (most >= 1024) return {1024, QStringLiteral("KiB")};
  return {1, QStringLiteral("bytes")};
}
Unit secondsUnit(double most) {
  if (most >= 1.0) return {1.0, QStringLiteral("s")};
  if (most >= 1e-3) return {1e-3, QStringLiteral("ms")};
  return {1e-6, QStringLiteral("µs")};
}

void clearChart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
}

// A value axis from 0 over `most` with round ticks.
QValueAxis* valueAxis(double most, const QString& title) {
  auto* axis = new QValueAxis;
  const double step = plot::niceStep(std::max(most, 1e-9) * 1.08, 5);
  const double top = std::ceil(std::max(most, 1e-9) * 1.08 / step) * step;
  axis->setRange(0, top);
  axis->setTickType(QValueAxis::TicksDynamic);
  axis->setTickAnchor(0);
  axis->setTickInterval(step);
  axis->setLabelFormat(QStringLiteral("%g"));
  axis->setTitleText(title);
  return axis;
}

QString bytesTip(int64_t bytes) {
  return QStringLiteral("%1 (%2 bytes)")
      .arg(QString::fromStdString(bytes_text(bytes)), groupedCount(bytes));
}

int64_t kindBytes(const DeviceMemory& m, plot::MemoryKind kind) {
  switch (kind) {
    case plot::MemoryKind::kWeights:
      return m.weights;
    case plot::MemoryKind::kGradients:
      return m.gradients;
    case plot::MemoryKind::kOptimizerSlots:
      return m.optimizer_slots;
    case plot::MemoryKind::kActivations:
      return m.activations;
    case plot::MemoryKind::kBuffers:
      return m.buffers;
  }
  return 0;
}

// The model axis of a sweep row's mesh (1 for DataParallel).
int modelAxis(const CapacityRow& row, const CapacityInput& base, int devices) {
  for (const CapacityInput& in : sweep_inputs(base, devices))
    if (strategy_text(in) == row.strategy)
      return in.distribution.class_name == kModelParallel ? in.distribution.mesh_shape[1] : 1;
  return 1;
}

}  // namespace

void CapacityView::drawMemory() {
  clearChart(m_memoryChart);
  const CapacityResult& r = m_result;
  const bool ok = r.error.isEmpty() && r.generation > 0;
  m_memoryChart->setTitle(tr("Memory per device"));
  if (!ok || r.row.memory.devices.empty()) return;
  const MemoryPlan& plan = r.row.memory;
  // The devices drawn: all, or the first ones and the largest.
  std::vector<size_t> shown;
  size_t largest = 0;
  for (size_t d = 0; d < plan.devices.size(); ++d)
    if (plan.devices[d].total() > plan.devices[largest].total()) largest = d;
  for (size_t d = 0; d < plan.devices.size() && shown.size() < kMaxBars; ++d) shown.push_back(d);
  if (plan.devices.size() > kMaxBars && largest >= kMaxBars) shown.back() = largest;
  if (plan.devices.size() > kMaxBars)
    m_memoryChart->setTitle(tr("Memory per device (%1 of %2 devices shown, with the largest)")
                                .arg(shown.size())
                                .arg(plan.devices.size()));

  const bool line = !r.row.fit.shared;
  double most = double(plan.largest_device());
  if (line) most = std::max(most, double(r.row.fit.capacity));
  const Unit unit = byteUnit(most);
  auto* series = new QStackedBarSeries;
  QStringList categories;
  for (size_t d : shown) categories << QStringLiteral("cpu:%1").arg(d);
  for (int k = 0; k < plot::kMemoryKindCount; ++k) {
    const auto kind = static_cast<plot::MemoryKind>(k);
    auto* set = new QBarSet(plot::memoryKindName(kind));
    set->setColor(plot::memoryKindColor(kind));
    set->setBorderColor(plot::memoryKindColor(kind).darker(115));
    for (size_t d : shown) set->append(double(kindBytes(plan.devices[d], kind)) / unit.scale);
    series->append(set);
  }
  series->setBarWidth(categories.size() > 16 ? 0.85 : 0.7);
  m_memoryChart->addSeries(series);
  auto* x = new QBarCategoryAxis;
  x->append(categories);
  if (categories.size() > 12) x->setLabelsAngle(-90);
  auto* y = valueAxis(most / unit.scale, tr("%1 per device").arg(unit.name));
  m_memoryChart->addAxis(x, Qt::AlignBottom);
  m_memoryChart->addAxis(y, Qt::AlignLeft);
  series->attachAxis(x);
  series->attachAxis(y);
  connect(series, &QStackedBarSeries::hovered, this,
          [this, shown, plan](bool status, int index, QBarSet* set) {
            if (!status || index < 0 || size_t(index) >= shown.size()) {
              QToolTip::hideText();
              return;
            }
            const DeviceMemory& m = plan.devices[shown[size_t(index)]];
            QString tip = QStringLiteral("<b>cpu:%1</b>").arg(shown[size_t(index)]);
            for (int k = 0; k < plot::kMemoryKindCount; ++k) {
              const auto kind = static_cast<plot::MemoryKind>(k);
              const QString name = plot::memoryKindName(kind);
              const QString row = QStringLiteral("%1: %2").arg(name, bytesTip(kindBytes(m, kind)));
              tip += QStringLiteral("<br>") +
                     (set->label() == name ? QStringLiteral("<b>%1</b>").arg(row) : row);
            }
            tip += QStringLiteral("<br>total: %1").arg(bytesTip(m.total()));
            QToolTip::showText(QCursor::pos(), tip);
          });
  if (line) {
    // The target's memory per device, across every bar (a value axis under the categories).
    auto* limit = new QLineSeries;
    limit->setName(tr("target %1").arg(QString::fromStdString(bytes_text(r.row.fit.capacity))));
    QPen pen(QColor(0xb0, 0x00, 0x20));
    pen.setWidthF(2.5);
    pen.setStyle(Qt::DashLine);
    limit->setPen(pen);
    const double v = double(r.row.fit.capacity) / unit.scale;
    limit->replace({QPointF(-0.5, v), QPointF(double(categories.size()) - 0.5, v)});
    m_memoryChart->addSeries(limit);
    auto* lineX = new QValueAxis;
    lineX->setRange(-0.5, double(categories.size()) - 0.5);
    lineX->setVisible(false);
    m_memoryChart->addAxis(lineX, Qt::AlignTop);
    limit->attachAxis(lineX);
    limit->attachAxis(y);
  }
  zoomChart(m_memoryChart);  // its new axes at the window's zoom
}

void CapacityView::drawStep() {
  clearChart(m_stepChart);
  const CapacityResult& r = m_result;
  const bool ok = r.error.isEmpty() && r.generation > 0;
  m_stepChart->setTitle(tr("One training step"));
  if (!ok) return;
  const std::optional<double> measured = measuredStep();
  const StepTime& s = r.row.step;
  const Unit unit = secondsUnit(std::max(s.total_s, measured.value_or(0.0)));
  QStringList categories{tr("predicted\n%1").arg(QString::fromStdString(m_target.name))};
  if (measured) categories.prepend(tr("measured\nthis machine"));
  auto* series = new QHorizontalStackedBarSeries;
  const auto addSet = [&](const QString& name, const QColor& color, double predicted,
                          double measuredValue) {
    auto* set = new QBarSet(name);
    set->setColor(color);
    set->setBorderColor(color.darker(115));
    if (measured) set->append(measuredValue / unit.scale);
    set->append(predicted / unit.scale);
    series->append(set);
    return set;
  };
  addSet(tr("compute"), plot::computeColor(), s.compute_s, 0.0);
  addSet(tr("communication"), plot::communicationColor(), s.communication_s, 0.0);
  if (measured) addSet(tr("measured (%1)").arg(m_runLabel), plot::measuredColor(), 0.0, *measured);
  series->setBarWidth(0.6);
  m_stepChart->addSeries(series);
  auto* y = new QBarCategoryAxis;
  y->append(categories);
  auto* x = valueAxis(std::max(s.total_s, measured.value_or(0.0)) / unit.scale,
                      tr("time per step (%1)").arg(unit.name));
  m_stepChart->addAxis(y, Qt::AlignLeft);
  m_stepChart->addAxis(x, Qt::AlignBottom);
  series->attachAxis(y);
  series->attachAxis(x);
  connect(series, &QHorizontalStackedBarSeries::hovered, this,
          [this, s, measured](bool status, int index, QBarSet*) {
            if (!status) {
              QToolTip::hideText();
              return;
            }
            const bool isMeasured = measured && index == 0;
            QToolTip::showText(
                QCursor::pos(),
                isMeasured ? tr("Measured on this machine (%1): median %2 per step")
                                 .arg(m_runLabel, QString::fromStdString(seconds_text(*measured)))
                           : tr("Predicted on %1: compute %2 + communication %3 = %4")
                                 .arg(QString::fromStdString(m_target.name),
                                      QString::fromStdString(seconds_text(s.compute_s)),
                                      QString::fromStdString(seconds_text(s.communication_s)),
                                      QString::fromStdString(seconds_text(s.total_s))));
          });
  zoomChart(m_stepChart);  // its new axes at the window's zoom
}

void CapacityView::drawScaling() {
  clearChart(m_scalingChart);
  const CapacityResult& r = m_result;
  const bool ok = r.error.isEmpty() && r.generation > 0;
  m_scalingChart->setTitle(tr("Samples/s against devices"));
  if (!ok || r.sweep.empty()) return;
  // One curve per model axis: 1 (DataParallel), 2, 4 and 8 ((n/m) x m meshes).
  const int axes[] = {1, 2, 4, 8};
  const QColor colors[] = {plot::deviceColor(0), plot::deviceColor(1), plot::deviceColor(2),
                           plot::deviceColor(3)};
  auto* x = new QLogValueAxis;
  x->setBase(2);
  x->setRange(0.7, 1500);
  x->setLabelFormat(QStringLiteral("%g"));
  x->setMinorTickCount(0);
  x->setTitleText(tr("devices (log scale)"));
  double lo = 1e300, hi = 0;
  for (const auto& [n, row] : r.sweep)
    if (row.problem.empty() && row.step.samples_per_s > 0) {
      lo = std::min(lo, row.step.samples_per_s);
      hi = std::max(hi, row.step.samples_per_s);
    }
  if (r.row.step.samples_per_s > 0) {
    lo = std::min(lo, r.row.step.samples_per_s);
    hi = std::max(hi, r.row.step.samples_per_s);
  }
  if (!(hi > 0)) return;
  auto* y = new QLogValueAxis;
  y->setBase(10);
  y->setRange(std::pow(10, std::floor(std::log10(lo))), std::pow(10, std::ceil(std::log10(hi))));
  y->setLabelFormat(QStringLiteral("%g"));
  y->setMinorTickCount(-1);
  y->setTitleText(tr("samples/s (log scale)"));
  m_scalingChart->addAxis(x, Qt::AlignBottom);
  m_scalingChart->addAxis(y, Qt::AlignLeft);

  auto* over = new QScatterSeries;
  over->setName(tr("does not fit"));
  over->setMarkerShape(QScatterSeries::MarkerShapeRectangle);
  over->setMarkerSize(11);
  over->setColor(Qt::transparent);
  over->setBorderColor(QColor(0xb0, 0x00, 0x20));
  QList<QPointF> overPoints;
  for (size_t a = 0; a < std::size(axes); ++a) {
    auto* series = new QLineSeries;
    series->setName(axes[a] == 1 ? tr("DataParallel") : tr("N/%1 × %1 mesh").arg(axes[a]));
    QPen pen(colors[a]);
    pen.setWidthF(2.0);
    series->setPen(pen);
    series->setPointsVisible(true);
    QList<QPointF> points;
    std::vector<const CapacityRow*> rows;
    for (const auto& [n, row] : r.sweep) {
      if (!row.problem.empty() || modelAxis(row, r.input, n) != axes[a]) continue;
      points << QPointF(n, row.step.samples_per_s);
      rows.push_back(&row);
      if (!row.fit.fits) overPoints << QPointF(n, row.step.samples_per_s);
    }
    if (points.isEmpty()) {
      delete series;
      continue;
    }
    series->replace(points);
    m_scalingChart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
    connect(series, &QLineSeries::hovered, this,
            [this, axis = axes[a]](const QPointF& p, bool state) {
              if (!state) {
                QToolTip::hideText();
                return;
              }
              // The row nearest the pointer on this curve.
              const CapacityRow* best = nullptr;
              double bestD = 1e300;
              for (const auto& [n, row] : m_result.sweep) {
                if (!row.problem.empty() || modelAxis(row, m_result.input, n) != axis) continue;
                const double d = std::abs(std::log2(double(n)) - std::log2(std::max(p.x(), 0.5)));
                if (d < bestD) {
                  bestD = d;
                  best = &row;
                }
              }
              if (!best) return;
              QToolTip::showText(
                  QCursor::pos(),
                  tr("<b>%1</b><br>%2 samples/s, step %3<br>largest device %4 (%5)<br>scaling "
                     "efficiency %6%")
                      .arg(QString::fromStdString(best->strategy),
                           QString::fromStdString(grouped_text(best->step.samples_per_s)),
                           QString::fromStdString(seconds_text(best->step.total_s)),
                           QString::fromStdString(bytes_text(best->memory.largest_device())),
                           best->fit.fits ? tr("fits") : tr("does not fit"),
                           QString::fromStdString(fixed_text(best->efficiency * 100.0, 0))));
            });
  }
  if (!overPoints.isEmpty()) {
    over->replace(overPoints);
    m_scalingChart->addSeries(over);
    over->attachAxis(x);
    over->attachAxis(y);
  } else {
    delete over;
  }
  auto* current = new QScatterSeries;
  current->setName(tr("this plan"));
  current->setMarkerShape(QScatterSeries::MarkerShapeStar);
  current->setMarkerSize(22);
  current->setColor(QColor(0x22, 0x22, 0x22));
  current->setBorderColor(Qt::white);
  current->replace({QPointF(r.input.devices, r.row.step.samples_per_s)});
  m_scalingChart->addSeries(current);
  current->attachAxis(x);
  current->attachAxis(y);
  zoomChart(m_scalingChart);  // its new axes at the window's zoom
}

}  // namespace fitbench
