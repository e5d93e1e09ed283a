#include "ui/rehearsal/parallel_coordinates.h"

#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>
#include <algorithm>
#include <cmath>

#include "ui/rehearsal/trials_filter.h"
#include "ui/rehearsal/trials_model.h"

namespace fitbench {
namespace {

constexpr int kLeft = 60, kRight = 34, kTop = 44, kBottom = 14;
constexpr double kAxisReach = 14.0;  // px either side of an axis where a drag brushes it
constexpr double kLineReach = 6.0;   // px from a line where a click selects its trial
const QColor kAxisColor(60, 60, 60);
const QColor kFilteredColor(214, 214, 214);
const QColor kBrushColor(21, 101, 192);

double segmentDistance(const QPointF& p, const QPointF& a, const QPointF& b) {
  const QPointF d = b - a;
  const double length2 = d.x() * d.x() + d.y() * d.y();
  const double t =
      length2 > 0 ? std::clamp(QPointF::dotProduct(p - a, d) / length2, 0.0, 1.0) : 0.0;
  const QPointF q = a + t * d - p;
  return std::hypot(q.x(), q.y());
}

}  // namespace

ParallelCoordinates::ParallelCoordinates(TrialsFilter* filter, QWidget* parent)
    : QWidget(parent), m_filter(filter), m_model(filter->trials()) {
  setObjectName(QStringLiteral("parallelCoordinates"));
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  setToolTip(
      tr("One axis per parameter, the objective last; a line per trial, darker the "
         "better its objective. Drag along an axis to keep only the trials in that "
         "range (the table follows); click the axis to clear it. Click a line to select "
         "its trial."));
  connect(m_filter, &TrialsFilter::drawingChanged, this, [this] { update(); });
}

void ParallelCoordinates::setSelected(const QList<int>& trials) {
  m_selected = trials;
  update();
}

int ParallelCoordinates::axisCount() const { return int(m_model->axes().size()); }

int ParallelCoordinates::axisX(int axis) const {
  const int n = axisCount();
  if (n <= 1) return width() / 2;
  return kLeft + int(std::lround(double(axis) * (width() - kLeft - kRight) / (n - 1)));
}

int ParallelCoordinates::axisTop() const { return kTop; }
int ParallelCoordinates::axisBottom() const { return std::max(kTop + 40, height() - kBottom); }

double ParallelCoordinates::fractionAt(double y) const {
  return std::clamp((axisBottom() - y) / double(axisBottom() - axisTop()), 0.0, 1.0);
}

std::optional<QPointF> ParallelCoordinates::pointOf(int trial, int axis) const {
  const double v = m_model->axisValue(trial, axis);
  if (!std::isfinite(v)) return std::nullopt;
  const double f = m_model->axes()[size_t(axis)].fraction(v);
  return QPointF(axisX(axis), axisBottom() - f * (axisBottom() - axisTop()));
}

void ParallelCoordinates::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Base));
  painter.setRenderHint(QPainter::Antialiasing);
  if (!m_model->plan() || axisCount() < 2) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect().adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                     tr("Each trial of a sweep is drawn here as a line through its parameters' "
                        "values and its objective."));
    return;
  }
  drawLines(painter);
  drawBrushes(painter);
  for (int axis = 0; axis < axisCount(); ++axis) drawAxis(painter, axis);
}

void ParallelCoordinates::drawLines(QPainter& painter) {
  const int trials = m_model->trialCount();
  const auto path = [this](int trial) {
    QPainterPath p;
    bool open = false;
    for (int axis = 0; axis < axisCount(); ++axis) {
      const std::optional<QPointF> point = pointOf(trial, axis);
      if (!point) {
        open = false;
        continue;
      }
      if (open)
        p.lineTo(*point);
      else
        p.moveTo(*point);
      open = true;
    }
    return p;
  };
  // Filtered out first, in grey; then the shown trials, worst first so that the best is on top.
  std::vector<int> shown;
  for (int t = 0; t < trials; ++t) {
    if (m_filter->accepts(t)) {
      shown.push_back(t);
      continue;
    }
    painter.setPen(QPen(kFilteredColor, 1.0));
    painter.drawPath(path(t));
  }
  std::stable_sort(shown.begin(), shown.end(), [this](int a, int b) {
    const double sa = m_model->objectiveShade(a), sb = m_model->objectiveShade(b);
    return (std::isfinite(sa) ? sa : 2.0) > (std::isfinite(sb) ? sb : 2.0);
  });
  for (const int t : shown) {
    const TrialResult& r = m_model->result(t);
    const double shade = m_model->objectiveShade(t);
    QColor color = std::isfinite(shade) ? objectiveColor(shade) : QColor(150, 150, 150);
    QPen pen(color, 1.8);
    if (r.status == TrialResult::Status::kRunning) pen.setStyle(Qt::DashLine);
    if (r.status == TrialResult::Status::kFailed) pen.setColor(QColor(176, 0, 32, 120));
    painter.setPen(pen);
    painter.drawPath(path(t));
  }
  // The selected trials and the one under the pointer stand out: thick, with a white edge.
  QList<int> highlighted = m_selected;
  if (m_hover >= 0 && !highlighted.contains(m_hover)) highlighted << m_hover;
  for (const int t : highlighted) {
    if (t < 0 || t >= trials) continue;
    const QPainterPath p = path(t);
    const double shade = m_model->objectiveShade(t);
    painter.setPen(QPen(Qt::white, 6.0, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    painter.drawPath(p);
    painter.setPen(QPen(std::isfinite(shade) ? objectiveColor(shade) : QColor(120, 120, 120),
                        m_selected.contains(t) ? 3.5 : 2.5, Qt::SolidLine, Qt::RoundCap,
                        Qt::RoundJoin));
    painter.drawPath(p);
    for (int axis = 0; axis < axisCount(); ++axis)
      if (const auto point = pointOf(t, axis)) {
        painter.setBrush(Qt::white);
        painter.drawEllipse(*point, 3.5, 3.5);
      }
    painter.setBrush(Qt::NoBrush);
  }
}

void ParallelCoordinates::drawBrushes(QPainter& painter) {
  const auto draw = [&](int axis, double f0, double f1) {
    const double y0 = axisBottom() - std::max(f0, f1) * (axisBottom() - axisTop());
    const double y1 = axisBottom() - std::min(f0, f1) * (axisBottom() - axisTop());
    QColor fill = kBrushColor;
    fill.setAlpha(45);
    painter.setPen(QPen(kBrushColor, 1.5));
    painter.setBrush(fill);
    painter.drawRoundedRect(QRectF(axisX(axis) - 9, y0, 18, std::max(2.0, y1 - y0)), 3, 3);
    painter.setBrush(Qt::NoBrush);
  };
  for (const auto& [axis, range] : m_filter->brushes()) {
    if (axis >= axisCount() || axis == m_dragAxis) continue;
    const SweepAxis& a = m_model->axes()[size_t(axis)];
    draw(axis, std::clamp(a.fraction(range.first), 0.0, 1.0),
         std::clamp(a.fraction(range.second), 0.0, 1.0));
  }
  if (m_dragAxis >= 0) draw(m_dragAxis, m_dragFrom, m_dragTo);
}

void ParallelCoordinates::drawAxis(QPainter& painter, int axis) {
  const SweepAxis& a = m_model->axes()[size_t(axis)];
  const bool objective = axis == m_model->objectiveAxis();
  const int x = axisX(axis);
  const int top = axisTop(), bottom = axisBottom();
  if (objective) {
    // The color scale beside the objective axis: dark at the best end.
    QLinearGradient gradient(0, bottom, 0, top);
    const bool bestAtTop = m_model->maximize();
    for (int i = 0; i <= 10; ++i)
      gradient.setColorAt(i / 10.0, objectiveColor(bestAtTop ? 1.0 - i / 10.0 : i / 10.0));
    painter.setPen(Qt::NoPen);
    painter.setBrush(gradient);
    painter.drawRect(QRectF(x + 5, top, 7, bottom - top));
    painter.setBrush(Qt::NoBrush);
  }
  painter.setPen(QPen(kAxisColor, 1.6));
  painter.drawLine(x, top, x, bottom);
  // Ticks and their labels, left of the axis, on a white ground over the lines.
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.9);
  painter.setFont(small);
  const QFontMetrics sm(small);
  const std::vector<double> ticks = a.ticks(std::max(2, (bottom - top) / 40));
  for (const double tick : ticks) {
    const double f = a.fraction(tick);
    if (f < -1e-9 || f > 1 + 1e-9) continue;
    const double y = bottom - f * (bottom - top);
    painter.setPen(QPen(kAxisColor, 1.2));
    painter.drawLine(QPointF(x - 4, y), QPointF(x, y));
    const QString text = sm.elidedText(a.text(tick), Qt::ElideRight, kLeft - 10);
    const QRectF box(x - 7 - sm.horizontalAdvance(text), y - sm.height() / 2.0,
                     sm.horizontalAdvance(text), sm.height());
    painter.fillRect(box.adjusted(-2, 0, 1, 0), QColor(255, 255, 255, 210));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(box, Qt::AlignRight | Qt::AlignVCenter, text);
  }
  // The name above, and what kind of axis it is.
  const int room =
      axisCount() > 1 ? std::max(60, (width() - kLeft - kRight) / (axisCount() - 1) - 6) : width();
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  const QFontMetrics bm(bold);
  const QString name = bm.elidedText(a.name, Qt::ElideMiddle, room);
  const int nameWidth = bm.horizontalAdvance(name);
  const int left = std::clamp(x - nameWidth / 2, 2, std::max(2, width() - nameWidth - 2));
  painter.setPen(palette().color(QPalette::Text));
  painter.drawText(QRect(left, 4, nameWidth + 1, bm.height()), Qt::AlignCenter, name);
  const QString kind = objective
                           ? (m_model->maximize() ? tr("objective · max") : tr("objective · min"))
                       : a.kind == SweepAxis::Kind::kLog      ? tr("log scale")
                       : a.kind == SweepAxis::Kind::kCategory ? tr("categories")
                                                              : QString();
  if (!kind.isEmpty()) {
    painter.setFont(small);
    painter.setPen(palette().color(QPalette::PlaceholderText));
    const int kindWidth = sm.horizontalAdvance(kind);
    const int kindLeft = std::clamp(x - kindWidth / 2, 2, std::max(2, width() - kindWidth - 2));
    painter.drawText(QRect(kindLeft, 6 + bm.height(), kindWidth + 1, sm.height()), Qt::AlignCenter,
                     kind);
  }
  painter.setFont(font());
}

int ParallelCoordinates::axisAt(const QPointF& pos) const {
  if (pos.y() < axisTop() - 8 || pos.y() > axisBottom() + 8) return -1;
  for (int axis = 0; axis < axisCount(); ++axis)
    if (std::abs(pos.x() - axisX(axis)) <= kAxisReach) return axis;
  return -1;
}

int ParallelCoordinates::trialAt(const QPointF& pos) const {
  int best = -1;
  double nearest = kLineReach;
  for (int t = 0; t < m_model->trialCount(); ++t) {
    if (!m_filter->accepts(t)) continue;
    for (int axis = 0; axis + 1 < axisCount(); ++axis) {
      if (pos.x() < axisX(axis) - 1 || pos.x() > axisX(axis + 1) + 1) continue;
      const auto a = pointOf(t, axis), b = pointOf(t, axis + 1);
      if (!a || !b) continue;
      const double d = segmentDistance(pos, *a, *b);
      if (d < nearest) nearest = d, best = t;
    }
  }
  return best;
}

void ParallelCoordinates::mousePressEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton || !m_model->plan()) return;
  m_pressPos = event->position();
  m_dragAxis = axisAt(event->position());
  if (m_dragAxis >= 0) m_dragFrom = m_dragTo = fractionAt(event->position().y());
}

void ParallelCoordinates::mouseMoveEvent(QMouseEvent* event) {
  if (m_dragAxis >= 0 && (event->buttons() & Qt::LeftButton)) {
    m_dragTo = fractionAt(event->position().y());
    update();
    return;
  }
  const int hover = event->buttons() ? -1 : trialAt(event->position());
  if (hover != m_hover) {
    m_hover = hover;
    update();
  }
  if (m_hover >= 0)
    QToolTip::showText(event->globalPosition().toPoint(), m_model->trialLabel(m_hover), this);
  else
    QToolTip::hideText();
}

void ParallelCoordinates::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  const bool dragged = std::abs(event->position().y() - m_pressPos.y()) >= 4;
  if (m_dragAxis >= 0) {
    const int axis = m_dragAxis;
    m_dragAxis = -1;
    const SweepAxis& a = m_model->axes()[size_t(axis)];
    if (dragged)
      m_filter->setBrush(axis, a.fromFraction(m_dragFrom),
                         a.fromFraction(fractionAt(event->position().y())));
    else
      m_filter->clearBrush(axis);
    update();
    return;
  }
  if (!dragged)
    if (const int trial = trialAt(event->position()); trial >= 0) emit trialClicked(trial);
}

void ParallelCoordinates::leaveEvent(QEvent*) {
  if (m_hover < 0) return;
  m_hover = -1;
  update();
}

}  // namespace fitbench
