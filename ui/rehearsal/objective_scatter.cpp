#include "ui/rehearsal/objective_scatter.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <cmath>

#include "ui/rehearsal/trials_filter.h"
#include "ui/rehearsal/trials_model.h"

namespace fitbench {
namespace {

constexpr int kGap = 14, kLeftLabels = 44, kTitle = 20, kBottomLabels = 18;
constexpr double kDotRadius = 4.0;

}  // namespace

ObjectiveScatter::ObjectiveScatter(TrialsFilter* filter, QWidget* parent)
    : QWidget(parent), m_filter(filter), m_model(filter->trials()) {
  setObjectName(QStringLiteral("objectiveScatter"));
  setMouseTracking(true);
  setAttribute(Qt::WA_OpaquePaintEvent);
  connect(m_filter, &TrialsFilter::drawingChanged, this, [this] { update(); });
}

void ObjectiveScatter::setSelected(const QList<int>& trials) {
  m_selected = trials;
  update();
}

int ObjectiveScatter::plotCount() const { return m_model->plan() ? m_model->parameterCount() : 0; }

int ObjectiveScatter::columns() const {
  return std::clamp((width() - 8) / 170, 1, std::max(1, plotCount()));
}

QRectF ObjectiveScatter::plotRect(int parameter) const {
  const int n = std::max(1, plotCount());
  const int rows = (n + columns() - 1) / columns();
  const double cellWidth = double(width() - 8) / columns();
  const double cellHeight = double(height() - 4) / rows;
  const double left = 4 + (parameter % columns()) * cellWidth;
  const double top = 2 + (parameter / columns()) * cellHeight;
  return QRectF(left + kLeftLabels, top + kTitle + 2, cellWidth - kLeftLabels - kGap,
                cellHeight - kTitle - kBottomLabels - 8);
}

std::optional<QPointF> ObjectiveScatter::dotOf(int trial, int parameter) const {
  const double x = m_model->axisValue(trial, parameter);
  const double y = m_model->axisValue(trial, m_model->objectiveAxis());
  if (!std::isfinite(x) || !std::isfinite(y)) return std::nullopt;
  const QRectF r = plotRect(parameter);
  const SweepAxis& ax = m_model->axes()[size_t(parameter)];
  const SweepAxis& ay = m_model->axes().back();
  return QPointF(r.left() + ax.fraction(x) * r.width(), r.bottom() - ay.fraction(y) * r.height());
}

void ObjectiveScatter::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().color(QPalette::Base));
  painter.setRenderHint(QPainter::Antialiasing);
  if (plotCount() == 0) return;
  for (int p = 0; p < plotCount(); ++p) drawPlot(painter, p);
}

void ObjectiveScatter::drawPlot(QPainter& painter, int parameter) {
  const QRectF r = plotRect(parameter);
  if (r.width() < 20 || r.height() < 20) return;
  const SweepAxis& ax = m_model->axes()[size_t(parameter)];
  const SweepAxis& ay = m_model->axes().back();
  QFont small = font();
  small.setPointSizeF(font().pointSizeF() * 0.85);
  const QFontMetrics sm(small);
  painter.setFont(small);
  // Frame, grid and tick labels.
  painter.setPen(QPen(QColor(225, 225, 225), 1));
  for (const double t : ay.ticks(std::max(2, int(r.height() / 30)))) {
    const double f = ay.fraction(t);
    if (f < 0 || f > 1) continue;
    const double y = r.bottom() - f * r.height();
    painter.setPen(QPen(QColor(230, 230, 230), 1));
    painter.drawLine(QPointF(r.left(), y), QPointF(r.right(), y));
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(
        QRectF(r.left() - kLeftLabels, y - sm.height() / 2.0, kLeftLabels - 4, sm.height()),
        Qt::AlignRight | Qt::AlignVCenter, ay.text(t));
  }
  const std::vector<double> xTicks = ax.ticks(std::max(2, int(r.width() / 60)));
  for (const double t : xTicks) {
    const double f = ax.fraction(t);
    if (f < -1e-9 || f > 1 + 1e-9) continue;
    const double x = r.left() + f * r.width();
    painter.setPen(QPen(QColor(230, 230, 230), 1));
    painter.drawLine(QPointF(x, r.top()), QPointF(x, r.bottom()));
    painter.setPen(palette().color(QPalette::Text));
    const QString text = sm.elidedText(ax.text(t), Qt::ElideRight,
                                       int(r.width() / std::max<size_t>(1, xTicks.size())) + 8);
    painter.drawText(QRectF(x - 40, r.bottom() + 2, 80, sm.height()), Qt::AlignCenter, text);
  }
  painter.setPen(QPen(QColor(150, 150, 150), 1));
  painter.drawRect(r);
  // Title: the parameter, and the objective as the y axis.
  QFont bold = font();
  bold.setBold(true);
  painter.setFont(bold);
  painter.setPen(palette().color(QPalette::Text));
  const QString scale = ax.kind == SweepAxis::Kind::kLog ? tr(" (log)") : QString();
  painter.drawText(
      QRectF(r.left() - kLeftLabels, r.top() - kTitle - 2, r.width() + kLeftLabels, kTitle),
      Qt::AlignLeft | Qt::AlignVCenter,
      QFontMetrics(bold).elidedText(tr("%1 vs %2%3").arg(ay.name, ax.name, scale), Qt::ElideRight,
                                    int(r.width() + kLeftLabels)));
  // The dots: filtered out grey, then the others worst first, then the selection ringed.
  painter.setPen(Qt::NoPen);
  const auto dot = [&](int t, const QColor& color, double radius) {
    if (const auto p = dotOf(t, parameter)) {
      painter.setBrush(color);
      painter.drawEllipse(*p, radius, radius);
    }
  };
  for (int t = 0; t < m_model->trialCount(); ++t)
    if (!m_filter->accepts(t)) dot(t, QColor(210, 210, 210), kDotRadius - 0.5);
  for (int t = 0; t < m_model->trialCount(); ++t)
    if (m_filter->accepts(t)) dot(t, objectiveColor(m_model->objectiveShade(t)), kDotRadius);
  for (const int t : m_selected) {
    const auto p = dotOf(t, parameter);
    if (!p) continue;
    painter.setBrush(objectiveColor(m_model->objectiveShade(t)));
    painter.setPen(QPen(QColor(230, 81, 0), 2.2));
    painter.drawEllipse(*p, kDotRadius + 2.5, kDotRadius + 2.5);
    painter.setPen(Qt::NoPen);
  }
  painter.setBrush(Qt::NoBrush);
  painter.setFont(font());
}

int ObjectiveScatter::trialAt(const QPointF& pos) const {
  int best = -1;
  double nearest = kDotRadius + 4;
  for (int p = 0; p < plotCount(); ++p) {
    if (!plotRect(p).adjusted(-8, -8, 8, 8).contains(pos)) continue;
    for (int t = 0; t < m_model->trialCount(); ++t) {
      if (!m_filter->accepts(t)) continue;
      if (const auto d = dotOf(t, p)) {
        const double distance = std::hypot(d->x() - pos.x(), d->y() - pos.y());
        if (distance < nearest) nearest = distance, best = t;
      }
    }
  }
  return best;
}

void ObjectiveScatter::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() != Qt::LeftButton) return;
  if (const int trial = trialAt(event->position()); trial >= 0) emit trialClicked(trial);
}

void ObjectiveScatter::mouseMoveEvent(QMouseEvent* event) {
  const int trial = trialAt(event->position());
  if (trial < 0) {
    QToolTip::hideText();
    return;
  }
  const double objective = m_model->axisValue(trial, m_model->objectiveAxis());
  QToolTip::showText(event->globalPosition().toPoint(),
                     tr("%1\n%2 %3")
                         .arg(m_model->trialLabel(trial), m_model->objectiveName())
                         .arg(objective, 0, 'g', 4),
                     this);
}

}  // namespace fitbench
