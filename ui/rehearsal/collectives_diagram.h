// One picture of the collectives view: the devices, each with its gradient buffer drawn as N
// chunks, and either (on a circle) the ring's messages of one step (what each device sends to its
// neighbour and what each chunk holds after the step) or, for the naive algorithm, device 0 at the
// top and the others on a fan below it (in rows when a fan does not fit), every buffer going
// straight up to it and the sum coming back. Painted from its own
// CollectiveSchedule. Widget; UI thread only.
#pragma once

#include <QStringList>
#include <QWidget>

#include "core/distribution/collectives/collective_schedule.h"

namespace fitbench {

class CollectivesDiagram : public QWidget {
  Q_OBJECT
 public:
  // The most devices a picture draws (their boxes no longer fit on the circle beyond).
  static constexpr int kMaxDrawn = 8;

  explicit CollectivesDiagram(CollectiveAlgorithm algorithm, QWidget* parent = nullptr);

  // The devices (names.size() of them, at most 64) and the gradient's floats; back to step 0.
  void setDevices(const QStringList& names, int64_t elements);
  // Ring: the step shown, 0 (before the first) to schedule().steps(). Naive draws both phases.
  void setStep(int step);
  int step() const { return m_step; }
  // Marks the picture of the algorithm the run uses.
  void setUsed(bool used);
  bool used() const { return m_used; }

  const CollectiveSchedule& schedule() const { return m_schedule; }
  // The device boxes' rectangles, in this widget's coordinates (empty when nothing is drawn).
  std::vector<QRectF> deviceRects() const;

  QSize sizeHint() const override { return {240, 220}; }
  QSize minimumSizeHint() const override { return {150, 150}; }

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  struct Geometry;
  Geometry geometry() const;
  void drawBox(QPainter& painter, const Geometry& g, int device,
               const std::vector<uint64_t>& holds) const;
  void drawCell(QPainter& painter, const QRectF& cell, uint64_t holds) const;
  void drawLegend(QPainter& painter, const QRectF& row) const;

  CollectiveAlgorithm m_algorithm;
  QStringList m_names;
  CollectiveSchedule m_schedule;
  int m_step = 0;
  bool m_used = false;
};

}  // namespace fitbench
