#include "ui/charts/chart_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QRubberBand>
#include <QToolTip>
#include <QWheelEvent>
#include <cmath>

namespace fitbench {
namespace {
constexpr double kWheelZoom = 0.8;  // visible span kept per wheel notch
}  // namespace

ChartView::ChartView(QChart* chart, QWidget* parent) : QChartView(chart, parent) {
  setRenderHint(QPainter::Antialiasing);
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setRubberBand(QChartView::NoRubberBand);
  m_band = new QRubberBand(QRubberBand::Rectangle, viewport());
}

void ChartView::mousePressEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
    m_panning = true;
    m_last = pos;
    viewport()->setCursor(Qt::ClosedHandCursor);
  } else if (event->button() == Qt::LeftButton && chart()->plotArea().contains(chartPos(pos))) {
    m_zooming = true;
    m_origin = pos;
    m_band->setGeometry(QRect(pos, QSize()));
    m_band->show();
  }
  QToolTip::hideText();
  event->accept();
}

void ChartView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->position().toPoint();
  if (m_panning) {
    const QPoint delta = pos - m_last;
    m_last = pos;
    chart()->scroll(-delta.x(), delta.y());
    viewEdited();
  } else if (m_zooming) {
    m_band->setGeometry(QRect(m_origin, pos).normalized());
  } else {
    hovered(pos);
  }
  event->accept();
}

void ChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (m_panning && event->button() != Qt::LeftButton) {
    m_panning = false;
    viewport()->unsetCursor();
  } else if (m_zooming && event->button() == Qt::LeftButton) {
    m_zooming = false;
    m_band->hide();
    const QRect band = m_band->geometry();
    if (band.width() > 4 && band.height() > 4) {
      chart()->zoomIn(QRectF(chartPos(band.topLeft()), chartPos(band.bottomRight())));
      viewEdited();
    }
  }
  event->accept();
}

void ChartView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) resetRequested();
  event->accept();
}

void ChartView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches != 0) {
    zoomAround(chartPos(event->position().toPoint()), std::pow(kWheelZoom, notches));
    viewEdited();
  }
  event->accept();
}

void ChartView::keyPressEvent(QKeyEvent* event) {
  const QRectF area = chart()->plotArea();
  const double dx = area.width() / 10, dy = area.height() / 10;
  const int key = event->key();
  if (key == Qt::Key_Home) {
    resetRequested();
    return;
  }
  if (key == Qt::Key_Left || key == Qt::Key_Right)
    chart()->scroll(key == Qt::Key_Left ? -dx : dx, 0);
  else if (key == Qt::Key_Up || key == Qt::Key_Down)
    chart()->scroll(0, key == Qt::Key_Up ? dy : -dy);
  else if (key == Qt::Key_Plus || key == Qt::Key_Equal || key == Qt::Key_Minus)
    zoomAround(area.center(), key == Qt::Key_Minus ? 1 / kWheelZoom : kWheelZoom);
  else
    return QChartView::keyPressEvent(event);
  viewEdited();
}

void ChartView::leaveEvent(QEvent* event) {
  QToolTip::hideText();
  QChartView::leaveEvent(event);
}

QPointF ChartView::chartPos(const QPoint& viewportPos) const {
  return chart()->mapFromScene(mapToScene(viewportPos));
}

void ChartView::zoomAround(const QPointF& center, double factor) {
  const QRectF area = chart()->plotArea();
  chart()->zoomIn(QRectF(center.x() - (center.x() - area.left()) * factor,
                         center.y() - (center.y() - area.top()) * factor, area.width() * factor,
                         area.height() * factor));
}

}  // namespace fitbench
