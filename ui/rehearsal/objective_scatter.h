// The Sweep view's objective against each parameter: a small scatter plot per parameter (its axis
// as in the parallel-coordinates plot, log or categories; the objective up), side by side, a dot
// per trial with an objective, colored as in that plot; filtered-out trials grey, selected ones
// ringed. A click on a dot selects its trial. Drawn with QPainter. UI thread only.
#pragma once

#include <QList>
#include <QWidget>
#include <optional>

namespace fitbench {

class TrialsFilter;
class TrialsModel;

class ObjectiveScatter : public QWidget {
  Q_OBJECT
 public:
  explicit ObjectiveScatter(TrialsFilter* filter, QWidget* parent = nullptr);

  void setSelected(const QList<int>& trials);
  // Plot `parameter`'s frame (its plot area, widget pixels).
  QRectF plotRect(int parameter) const;
  // Trial `trial`'s dot in plot `parameter`, or nothing.
  std::optional<QPointF> dotOf(int trial, int parameter) const;

  QSize sizeHint() const override { return {320, 280}; }
  QSize minimumSizeHint() const override { return {180, 130}; }

 signals:
  void trialClicked(int trial);

 protected:
  void paintEvent(QPaintEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;

 private:
  int plotCount() const;
  int columns() const;  // plots side by side: as many as leave each 170 px
  int trialAt(const QPointF& pos) const;
  void drawPlot(QPainter& painter, int parameter);

  TrialsFilter* m_filter;
  TrialsModel* m_model;
  QList<int> m_selected;
};

}  // namespace fitbench
