// The device timeline's drawing: one lane per device (its name in the device's colour and its
// busy / communication / idle share), the spans of a window of kept steps as coloured boxes on a
// time axis, step captions and separators, and a legend; hit tests on what it drew. Reads the
// TraceStore it is given (owned by DeviceTimelineView, which outlives it), only the window's
// steps. In a scroll area (many devices in a low dock) only the lanes scroll: the legend and the
// step captions stay at the top of what is shown, the time axis at its bottom. Widget; UI thread
// only.
#pragma once

#include <QRectF>
#include <QStringList>
#include <QWidget>
#include <cstddef>
#include <optional>
#include <vector>

#include "ui/rehearsal/trace_store.h"

namespace fitbench {

class TimelineCanvas : public QWidget {
  Q_OBJECT
 public:
  // One span as drawn.
  struct SpanBox {
    int device = 0;
    size_t step = 0;  // kept step index in the store
    size_t span = 0;  // index in that step's spans of the device
    SpanKind kind = SpanKind::kForward;
    QRectF rect;  // in this widget's coordinates (at least 1 px wide)
  };

  explicit TimelineCanvas(const TraceStore* store, QWidget* parent = nullptr);

  void setDeviceNames(const QStringList& names);
  // Draws `store`'s steps instead (measured or modelled; it outlives the canvas's use of it).
  void setStore(const TraceStore* store);
  // Shows kept steps first .. first + count - 1 (clamped to the store).
  void setWindow(size_t first, size_t count);
  // The usage shown beside each lane (TraceStore::usage()).
  void setUsage(std::vector<DeviceUsage> usage);
  const std::vector<DeviceUsage>& usage() const { return m_usage; }
  // The store changed: lay the window out again on the next paint or query.
  void refresh();

  int laneCount() const;
  QString deviceName(int device) const;
  // The usage beside lane `device`: "busy 61.2% · comm. 12.0% · idle 26.8%" ("" before any).
  QString laneText(int device) const;
  const std::vector<SpanBox>& boxes() const;
  // What is at `pos`: the span box (of overlapping 1 px boxes, the one whose centre is nearest;
  // else a box within 3 px in the same lane), the lane whose name is there (-1: none), the
  // legend entry.
  const SpanBox* boxAt(const QPointF& pos) const;
  int laneLabelAt(const QPointF& pos) const;
  std::optional<SpanKind> legendAt(const QPointF& pos) const;
  // Where the time axis's ticks and labels are drawn (empty before any step): at the bottom of
  // what a scroll area shows, or under the last lane when that is higher.
  QRect timeAxisRect() const;
  // The empty state's sentence ("" when steps are drawn): how to get a timeline, or, once the
  // setup is distributed (setReadyDevices), that Run draws it.
  QString message() const;
  // The current setup trains on `devices` devices with a distribution (0: none).
  void setReadyDevices(int devices);
  // "Epoch 1, batch 3 (step 3)" for kept step i (all counted from 1, as the progress bar does).
  QString stepText(size_t i) const;
  // The legend's word for a span kind ("shard copy", "forward", ..., "all-reduce", "waiting").
  static QString kindText(SpanKind kind);
  // A span's label for a box too narrow for it: "AR" for "all-reduce", "upd" for "update", ...
  // (the label itself when it has no short form).
  static QString shortLabel(const QString& label);

  QSize sizeHint() const override;
  QSize minimumSizeHint() const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void moveEvent(QMoveEvent* event) override;  // scrolled
  bool event(QEvent* event) override;
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  // Where a lane's usage goes: on the name's line (or nowhere when it does not fit), on the line
  // under the name, or one share per line under the name.
  enum class Gutter { kInline, kBelow, kStacked };
  struct LegendItem {
    QRectF rect;
    SpanKind kind;
  };
  // Where everything goes for the current size and window.
  struct Geometry {
    int line = 0;
    QRect legend;  // the legend's rows
    std::vector<LegendItem> legendItems;
    QRect header;  // the step captions' row above the time area
    QRect lanes;   // every lane, gutter included
    QRect plot;    // the time area of the lanes
    QRect axis;    // tick labels below the time area
    // The part of the lanes not under the legend, captions or axis (all of them, unscrolled).
    QRect shown;
    bool scrolled = false;  // the legend and captions cover lanes scrolled up under them
    double laneHeight = 0.0;
    Gutter gutter = Gutter::kInline;
    int nameWidth = 0;              // the widest device name
    bool usageShown = true;         // kInline: the usage fits beside the name
    double t0 = 0.0, t1 = 1.0;      // the window's time range, µs since the run's start
    double unit = 1.0;              // µs per axis unit: 1 (µs) or 1000 (ms)
    std::vector<double> stepBegin;  // per window step, µs
    std::vector<SpanBox> boxes;
    double toX(double us) const;
    QRectF laneRect(int device) const;
  };
  const Geometry& geometry() const;
  void invalidate();
  size_t windowCount() const;
  QStringList laneParts(int device) const;
  void layoutGutter(Geometry& g) const;
  void layoutLegend(Geometry& g, int top) const;
  void layoutBoxes(Geometry& g) const;
  void drawLanes(QPainter& painter, const Geometry& g) const;
  void drawSteps(QPainter& painter, const Geometry& g) const;
  void drawCaptions(QPainter& painter, const Geometry& g) const;
  // The rows of what is shown that lie on scrolled lanes: legend and captions, the axis.
  void coverBands(QPainter& painter, const Geometry& g) const;
  void drawBoxes(QPainter& painter, const Geometry& g) const;
  void drawAxis(QPainter& painter, const Geometry& g) const;
  void drawLegend(QPainter& painter, const Geometry& g) const;

  const TraceStore* m_store = nullptr;
  QStringList m_names;
  std::vector<DeviceUsage> m_usage;
  int m_readyDevices = 0;
  size_t m_first = 0;
  size_t m_count = 0;
  mutable std::optional<Geometry> m_geometry;  // laid out on demand
};

}  // namespace fitbench
