// Shared plotting helpers and colors.

#include "ui/common/plot_style.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace fitbench::plot {
namespace {

constexpr std::array<QRgb, kClassColorCount> kClassColors = {0xf59322, 0x0877bd, 0x2ca02c, 0xd62728,
                                                             0x9467bd, 0x8c564b, 0xe377c2, 0x7f7f7f,
                                                             0xbcbd22, 0x17becf};

// Runs: Tableau 10 without its blue and orange (the current run's train and validation lines),
// then a navy and a dark teal.
constexpr std::array<QRgb, kRunColorCount> kRunColors = {0x2ca02c, 0xd62728, 0x9467bd, 0x8c564b,
                                                         0xe377c2, 0x7f7f7f, 0xbcbd22, 0x17becf,
                                                         0x393b79, 0x006d5b};

// Devices: hues chosen away from the class orange/blue pair so a device is never read as a class.
constexpr std::array<QRgb, 8> kDeviceColors = {0x1b9e77, 0x7570b3, 0xd95f02, 0xe7298a,
                                               0x66a61e, 0xa6761d, 0x1f78b4, 0x666666};

}  // namespace

double niceStep(double span, int count) {
  const double raw = span / std::max(count, 1);
  if (!(raw > 0.0) || !std::isfinite(raw)) return 1.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / magnitude;
  return (f < 1.5 ? 1.0 : f < 3.0 ? 2.0 : f < 7.0 ? 5.0 : 10.0) * magnitude;
}

double niceStepAtLeast(double raw) {
  if (!(raw > 0) || !std::isfinite(raw)) return 1.0;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * power >= raw * (1 - 1e-9)) return m * power;
  return 10.0 * power;
}

std::vector<double> ticks(const Range& r, int count) {
  std::vector<double> out;
  if (!(r.span() > 0.0) || !std::isfinite(r.span())) return out;
  const double step = niceStep(r.span(), count);
  for (double v = std::ceil(r.lo / step) * step; v <= r.hi + step * 1e-9; v += step)
    out.push_back(std::abs(v) < step * 1e-9 ? 0.0 : v);
  return out;
}

QString tickLabel(double v, int digits) { return QString::number(v, 'g', digits); }

QColor classColor(int k) {
  return QColor::fromRgb(kClassColors[static_cast<size_t>(std::max(k, 0)) % kClassColors.size()]);
}

QColor runColor(int k) {
  return QColor::fromRgb(kRunColors[static_cast<size_t>(std::max(k, 0)) % kRunColors.size()]);
}

QColor deviceColor(int d) {
  const size_t i = static_cast<size_t>(std::max(d, 0));
  const QColor base = QColor::fromRgb(kDeviceColors[i % kDeviceColors.size()]);
  return (i / kDeviceColors.size()) % 2 == 0 ? base : overWhite(base, 0.55);
}

QColor spanColor(SpanKind kind) {
  switch (kind) {
    case SpanKind::kShardCopy:
      return QColor(0x9c, 0xb4, 0xcc);  // grey blue
    case SpanKind::kForward:
      return QColor(0x4e, 0x79, 0xa7);  // blue
    case SpanKind::kBackward:
      return QColor(0x59, 0xa1, 0x4f);  // green
    case SpanKind::kCollective:
      return QColor(0xf2, 0x8e, 0x2b);  // orange
    case SpanKind::kUpdate:
      return QColor(0xb0, 0x7a, 0xa1);  // purple
    case SpanKind::kWaiting:
      return QColor(0xd4, 0xd4, 0xd4);  // light grey
  }
  return Qt::gray;
}

QString memoryKindName(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kWeights:
      return QStringLiteral("weights");
    case MemoryKind::kGradients:
      return QStringLiteral("gradients");
    case MemoryKind::kOptimizerSlots:
      return QStringLiteral("optimizer slots");
    case MemoryKind::kActivations:
      return QStringLiteral("activations");
    case MemoryKind::kBuffers:
      return QStringLiteral("buffers");
  }
  return {};
}

QColor memoryKindColor(MemoryKind kind) {
  switch (kind) {
    case MemoryKind::kWeights:
      return QColor(0x4e, 0x79, 0xa7);  // blue
    case MemoryKind::kGradients:
      return QColor(0x59, 0xa1, 0x4f);  // green
    case MemoryKind::kOptimizerSlots:
      return QColor(0xb0, 0x7a, 0xa1);  // purple
    case MemoryKind::kActivations:
      return QColor(0x76, 0xb7, 0xb2);  // teal
    case MemoryKind::kBuffers:
      return QColor(0xba, 0xb0, 0xac);  // warm grey
  }
  return Qt::gray;
}

QColor computeColor() { return spanColor(SpanKind::kForward); }
QColor communicationColor() { return spanColor(SpanKind::kCollective); }
QColor measuredColor() { return QColor(0x55, 0x55, 0x55); }

QColor overWhite(const QColor& color, double f) {
  const auto mix = [f](int c) { return static_cast<int>(std::lround(255 + (c - 255) * f)); };
  return QColor(mix(color.red()), mix(color.green()), mix(color.blue()));
}

}  // namespace fitbench::plot
