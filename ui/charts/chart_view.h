// The QChartView of a metric chart with the workbench's mouse and keyboard: left drag zooms into
// a rectangle, the wheel zooms around the cursor, right / middle drag and the arrow keys pan,
// double-click and Home reset, plain moves report the hover position. The owner learns of each
// through the three callbacks. UI thread only.
#pragma once

#include <QChartView>
#include <functional>

class QRubberBand;

namespace fitbench {

class ChartView : public QChartView {
 public:
  ChartView(QChart* chart, QWidget* parent);

  std::function<void()> viewEdited;  // after any zoom or pan
  std::function<void()> resetRequested;
  std::function<void(const QPoint&)> hovered;  // viewport coordinates

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  QPointF chartPos(const QPoint& viewportPos) const;
  // Scales the visible area by `factor` keeping the value under `center` in place.
  void zoomAround(const QPointF& center, double factor);

  QRubberBand* m_band = nullptr;
  QPoint m_origin, m_last;
  bool m_panning = false, m_zooming = false;
};

}  // namespace fitbench
