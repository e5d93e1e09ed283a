#include "ui/rehearsal/sweep_axis.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/run/sweep.h"
#include "ui/common/plot_style.h"

namespace fitbench {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A span that is not empty: one value gets a little room either side.
void widen(SweepAxis& axis) {
  if (axis.hi > axis.lo) return;
  const double pad =
      axis.kind == SweepAxis::Kind::kLog ? 0.5 : std::max(std::abs(axis.lo) * 0.1, 0.5);
  axis.lo -= pad;
  axis.hi += pad;
}

}  // namespace

QColor objectiveColor(double shade) {
  // Viridis at 0, 0.2, 0.4, 0.6, 0.8.
  static const QColor kStops[] = {QColor(68, 1, 84), QColor(65, 68, 135), QColor(42, 120, 142),
                                  QColor(34, 168, 132), QColor(122, 209, 81)};
  constexpr int kLast = int(std::size(kStops)) - 1;
  const double t = std::clamp(std::isfinite(shade) ? shade : 1.0, 0.0, 1.0) * kLast;
  const int i = std::min(int(t), kLast - 1);
  const double f = t - i;
  const QColor& a = kStops[i];
  const QColor& b = kStops[i + 1];
  return QColor::fromRgbF(float(a.redF() + f * (b.redF() - a.redF())),
                          float(a.greenF() + f * (b.greenF() - a.greenF())),
                          float(a.blueF() + f * (b.blueF() - a.blueF())));
}

QString valueText(const nlohmann::ordered_json& value) {
  if (value.is_string()) return QString::fromStdString(value.get<std::string>());
  if (value.is_number_integer()) return QString::number(value.get<int64_t>());
  if (value.is_number()) return QString::number(value.get<double>(), 'g', 4);
  return QString::fromStdString(value.dump());
}

SweepAxis SweepAxis::forParameter(const SweepParameter& parameter,
                                  const std::vector<nlohmann::ordered_json>& values) {
  SweepAxis axis;
  axis.name = QString::fromStdString(parameter_label(parameter.path));
  axis.path = QString::fromStdString(parameter.path);
  if (!parameter.numeric()) {
    axis.kind = Kind::kCategory;
    // The parameter's own order (a Choice's values, false before true), then any other value.
    std::vector<nlohmann::ordered_json> all = parameter.grid_values();
    for (const auto& v : values)
      if (std::find(all.begin(), all.end(), v) == all.end()) all.push_back(v);
    for (const auto& v : all) axis.categories << valueText(v);
    axis.lo = -0.5;
    axis.hi = std::max<double>(0.5, axis.categories.size() - 0.5);
    return axis;
  }
  axis.kind = parameter.log_scale() ? Kind::kLog : Kind::kLinear;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  const auto take = [&](double v) {
    if (!std::isfinite(v) || (axis.kind == Kind::kLog && v <= 0)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  // A range (Int, Float) spans its bounds; a list of values (Choice, Fixed) is ticked at them.
  if (parameter.values.empty()) {
    take(parameter.min_value);
    take(parameter.max_value);
  }
  for (const auto& v : values)
    if (v.is_number()) take(v.get<double>());
  for (const auto& v : parameter.values)
    if (v.is_number() && (axis.kind != Kind::kLog || v.get<double>() > 0)) {
      take(v.get<double>());
      axis.marks.push_back(axis.kind == Kind::kLog ? std::log10(v.get<double>()) : v.get<double>());
    }
  if (!(lo <= hi)) lo = hi = axis.kind == Kind::kLog ? 1.0 : 0.0;
  axis.lo = axis.kind == Kind::kLog ? std::log10(lo) : lo;
  axis.hi = axis.kind == Kind::kLog ? std::log10(hi) : hi;
  widen(axis);
  return axis;
}

SweepAxis SweepAxis::forObjective(const QString& name, const std::vector<double>& values) {
  SweepAxis axis;
  axis.name = name;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const double v : values) {
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (!(lo <= hi)) lo = 0.0, hi = 1.0;
  const double margin = 0.04 * (hi - lo);
  axis.lo = lo - margin;
  axis.hi = hi + margin;
  widen(axis);
  return axis;
}

double SweepAxis::toAxis(const nlohmann::ordered_json& value) const {
  if (kind == Kind::kCategory) {
    const qsizetype i = categories.indexOf(valueText(value));
    return i < 0 ? kNaN : double(i);
  }
  if (!value.is_number()) return kNaN;
  const double v = value.get<double>();
  if (kind == Kind::kLog) return v > 0 ? std::log10(v) : kNaN;
  return v;
}

QString SweepAxis::text(double v) const {
  if (!std::isfinite(v)) return QString();
  if (kind == Kind::kCategory) {
    const int i = int(std::lround(v));
    return i >= 0 && i < categories.size() ? categories[i] : QString();
  }
  return plot::tickLabel(kind == Kind::kLog ? std::pow(10.0, v) : v, 3);
}

std::vector<double> SweepAxis::ticks(int count) const {
  std::vector<double> out;
  if (kind == Kind::kCategory) {
    for (int i = 0; i < categories.size(); ++i) out.push_back(i);
    return out;
  }
  if (!marks.empty()) return marks;
  if (kind == Kind::kLog) {
    for (double e = std::ceil(lo - 1e-9); e <= hi + 1e-9; e += 1.0) out.push_back(e);
    // Less than a decade: the ends, and their middle.
    if (out.size() < 2) out = {lo, 0.5 * (lo + hi), hi};
    return out;
  }
  return plot::ticks({lo, hi}, count);
}

}  // namespace fitbench
