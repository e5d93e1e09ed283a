// The workbench's shared plotting vocabulary: round axis ticks, and the colors every view uses for
// classes, devices and trace spans (a device is the same color in the timeline, the batch split
// and the collectives view). Free functions and constants; no state.
#pragma once

#include <QColor>
#include <QString>
#include <vector>

#include "core/distribution/trace/trace.h"

namespace fitbench::plot {

// A closed interval of data values.
struct Range {
  double lo = 0.0;
  double hi = 1.0;
  double span() const { return hi - lo; }
};

// A round tick step giving about `count` ticks over `span` (1, 2 or 5 times a power of ten).
double niceStep(double span, int count);
// 1, 2 or 5 times a power of ten: the smallest at least `raw` (1 for a raw step that is not a
// positive number).
double niceStepAtLeast(double raw);
// The round values inside r, about `count` of them ({} for an empty or non-finite range).
std::vector<double> ticks(const Range& r, int count);
// A tick's text: `digits` significant digits, no trailing zeros.
QString tickLabel(double v, int digits = 4);

// Class k's color: TensorFlow Playground's orange and blue, then Tableau 10's other colors
// (kClassColorCount distinct ones, then again from the first).
inline constexpr int kClassColorCount = 10;
QColor classColor(int k);
// Run k's color (k from 0), for runs drawn side by side in the loss and metric charts: 10
// distinct colors away from the charts' train blue and validation orange, then again.
inline constexpr int kRunColorCount = 10;
QColor runColor(int k);
// Device d's color (cpu:0, cpu:1, ...): 8 distinct hues, then their lighter variants for 8-15.
QColor deviceColor(int d);
// The color of a trace span's kind (the Chrome trace export names the same kinds).
QColor spanColor(SpanKind kind);
// What a device's bytes are, in the Capacity view's stacking order (core/run/capacity.h).
enum class MemoryKind { kWeights, kGradients, kOptimizerSlots, kActivations, kBuffers };
inline constexpr int kMemoryKindCount = 5;
// "weights", "gradients", "optimizer slots", "activations", "buffers".
QString memoryKindName(MemoryKind kind);
// Weights blue, gradients green, optimizer slots purple (the update's), activations teal,
// buffers grey.
QColor memoryKindColor(MemoryKind kind);
// A step's compute (the forward pass's blue) and communication (the collectives' orange), as
// the device timeline colours them; a measured step in a dark grey.
QColor computeColor();
QColor communicationColor();
QColor measuredColor();
// Blends white toward `color` by f in [0, 1] (0: white, 1: the color).
QColor overWhite(const QColor& color, double f);

}  // namespace fitbench::plot
