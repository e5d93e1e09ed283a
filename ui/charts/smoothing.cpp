#include "ui/charts/smoothing.h"

#include <algorithm>
#include <cmath>

namespace fitbench {

QVector<QPointF> smoothDebiased(const QVector<QPointF>& points, double weight) {
  QVector<QPointF> out = points;
  if (points.isEmpty()) return out;
  const double first = points.front().y();
  const bool constant = std::all_of(points.begin(), points.end(),
                                    [first](const QPointF& p) { return p.y() == first; });
  if (constant) return out;
  double last = 0.0;
  int accumulated = 0;
  for (QPointF& p : out) {
    const double value = p.y();
    if (!std::isfinite(value)) continue;
    last = last * weight + (1.0 - weight) * value;
    ++accumulated;
    const double debias = weight == 1.0 ? 1.0 : 1.0 - std::pow(weight, accumulated);
    p.setY(last / debias);
  }
  return out;
}

QVector<QPointF> decimateMinMax(const QVector<QPointF>& points, int maxPoints, double xLow,
                                double xHigh) {
  if (points.size() <= maxPoints || maxPoints < 4 || !(xHigh > xLow)) return points;
  const auto byX = [](const QPointF& p, double x) { return p.x() < x; };
  const auto begin = std::lower_bound(points.begin(), points.end(), xLow, byX);
  const auto end = std::upper_bound(points.begin(), points.end(), xHigh,
                                    [](double x, const QPointF& p) { return x < p.x(); });
  const int first = static_cast<int>(begin - points.begin());
  const int stop = static_cast<int>(end - points.begin());
  QVector<QPointF> out;
  if (first > 0) out.append(points[first - 1]);
  if (stop - first <= maxPoints) {
    for (int i = first; i < stop; ++i) out.append(points[i]);
  } else {
    // Indices kept, in increasing order; the first and last point of the range always stay.
    const int buckets = maxPoints / 2;
    const double width = (xHigh - xLow) / buckets;
    const auto bucketOf = [&](int i) {
      return std::clamp(static_cast<int>((points[i].x() - xLow) / width), 0, buckets - 1);
    };
    int lastKept = -1;
    const auto keep = [&](int i) {
      if (i > lastKept) {
        out.append(points[i]);
        lastKept = i;
      }
    };
    out.reserve(out.size() + maxPoints + 4);
    keep(first);
    int i = first;
    while (i < stop) {
      const int bucket = bucketOf(i);
      int low = i;
      int high = i;
      int j = i + 1;
      for (; j < stop && bucketOf(j) == bucket; ++j) {
        if (points[j].y() < points[low].y()) low = j;
        if (points[j].y() > points[high].y()) high = j;
      }
      keep(std::min(low, high));
      keep(std::max(low, high));
      i = j;
    }
    keep(stop - 1);
  }
  if (stop < points.size()) out.append(points[stop]);
  return out;
}

}  // namespace fitbench
