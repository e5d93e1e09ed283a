// One axis of the Sweep view's plots: a sweep parameter (a value axis, log when its sampling is
// log, or categories for strings and booleans) or the objective. Values are held in axis units
// (log10 of the value on a log axis, the category's index on a category axis), so that a
// position is a straight fraction. Plain data; no state beyond its fields.
#pragma once

#include <QColor>
#include <QString>
#include <QStringList>
#include <nlohmann/json.hpp>
#include <vector>

namespace fitbench {

struct SweepParameter;

struct SweepAxis {
  enum class Kind { kLinear, kLog, kCategory };
  QString name;  // "learning_rate", or the objective's key ("val_loss")
  QString path;  // the parameter's path, or "" for the objective
  Kind kind = Kind::kLinear;
  QStringList categories;     // kCategory: in the parameter's order
  std::vector<double> marks;  // a numeric Choice's values: its ticks
  double lo = 0.0, hi = 1.0;  // the span in axis units

  // The axis for `parameter`, spanning `values` (the trials' values) and the parameter's bounds.
  static SweepAxis forParameter(const SweepParameter& parameter,
                                const std::vector<nlohmann::ordered_json>& values);
  // The objective's axis over `values` (NaN ignored), with a margin.
  static SweepAxis forObjective(const QString& name, const std::vector<double>& values);

  // A parameter value in axis units (NaN when it has none on this axis).
  double toAxis(const nlohmann::ordered_json& value) const;
  // 0 at lo, 1 at hi.
  double fraction(double v) const { return hi > lo ? (v - lo) / (hi - lo) : 0.5; }
  double fromFraction(double f) const { return lo + f * (hi - lo); }
  // A value in axis units as the user reads it ("0.001", "relu").
  QString text(double v) const;
  // Where ticks go (axis units): categories, powers of ten on a log axis, round values otherwise.
  std::vector<double> ticks(int count) const;
};

// The Sweep view's color for an objective `shade` in [0, 1], 0 the best and 1 the worst trial:
// viridis from its dark end (best) to its green (worst, still readable on white).
QColor objectiveColor(double shade);

// A parameter value as the table shows it: numbers with up to 4 significant digits, strings bare.
QString valueText(const nlohmann::ordered_json& value);

}  // namespace fitbench
