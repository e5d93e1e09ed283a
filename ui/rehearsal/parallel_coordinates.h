// The Sweep view's parallel-coordinates plot: one vertical axis per sweep parameter (log axes for
// log sampling, categories for strings and booleans) and the objective last, a line per trial
// through its values, colored by its objective (dark: best). Dragging along an axis brushes a
// range and filters the trials (TrialsFilter); a click on an axis clears its brush; a click on a
// line selects that trial. Drawn with QPainter. UI thread only.
#pragma once

#include <QList>
#include <QWidget>
#include <optional>

namespace fitbench {

class TrialsFilter;
class TrialsModel;

class ParallelCoordinates : public QWidget {
  Q_OBJECT
 public:
  explicit ParallelCoordinates(TrialsFilter* filter, QWidget* parent = nullptr);

  // The trials drawn highlighted (the table's selection).
  void setSelected(const QList<int>& trials);
  // Where axis `axis` is drawn (its x in widget pixels) and its top and bottom (y).
  int axisX(int axis) const;
  int axisTop() const;
  int axisBottom() const;
  // The point of trial `trial` on axis `axis`, or nothing when it has no value there.
  std::optional<QPointF> pointOf(int trial, int axis) const;

  QSize sizeHint() const override { return {480, 280}; }
  QSize minimumSizeHint() const override { return {260, 130}; }

 signals:
  void trialClicked(int trial);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void leaveEvent(QEvent* event) override;

 private:
  int axisCount() const;
  int axisAt(const QPointF& pos) const;   // the axis within reach of pos, or -1
  int trialAt(const QPointF& pos) const;  // the shown trial whose line passes near pos, or -1
  double fractionAt(double y) const;
  void drawAxis(QPainter& painter, int axis);
  void drawLines(QPainter& painter);
  void drawBrushes(QPainter& painter);

  TrialsFilter* m_filter;
  TrialsModel* m_model;
  QList<int> m_selected;
  int m_hover = -1;  // the trial under the pointer
  // A brush being dragged: its axis and the two fractions (0 bottom, 1 top).
  int m_dragAxis = -1;
  double m_dragFrom = 0.0, m_dragTo = 0.0;
  QPointF m_pressPos;
};

}  // namespace fitbench
