// Pure helpers that turn a metric's stored points into the points a chart draws: TensorBoard's
// debiased exponential moving average and a min/max decimation for long series. Value in, value
// out: no state, safe from any thread.
#pragma once

#include <QPointF>
#include <QVector>

namespace fitbench {

// TensorBoard's scalar smoothing (tensorboard/components/vz_line_chart2/line-chart.ts,
// resmoothDataset): a first-order IIR filter started at 0 and divided by (1 - w^n), n counting the
// finite values seen so far. Non-finite values pass through unchanged and do not advance the
// filter; a constant series is returned as it is. x is kept; `weight` is used as given (0 returns
// the input, 1 gives 0 for every finite value, as in TensorBoard).
QVector<QPointF> smoothDebiased(const QVector<QPointF>& points, double weight);

// The points of `points` (sorted by x, finite y) that a chart needs to draw the x range [xLow,
// xHigh] with at most about `maxPoints` points: the series is cut into maxPoints / 2 equal x
// buckets and each bucket keeps its lowest and highest point in x order, so spikes stay visible.
// The nearest point outside the range on each side is kept so the line reaches the edges. A series
// that already has at most `maxPoints` points in the range is returned whole.
QVector<QPointF> decimateMinMax(const QVector<QPointF>& points, int maxPoints, double xLow,
                                double xHigh);

}  // namespace fitbench
