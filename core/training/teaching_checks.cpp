#include "core/training/teaching_checks.h"

#include <algorithm>
#include <cmath>

namespace fitbench {

FeatureSpread feature_spread(ConstMatrixRef x) {
  FeatureSpread out;
  if (x.rows() < 2) return out;
  int varying = 0;
  for (Index c = 0; c < x.cols(); ++c) {
    const auto col = x.col(c).cast<double>();
    const double mean = col.mean();
    const double sd = std::sqrt((col.array() - mean).square().mean());
    if (!(sd > 0.0) || !std::isfinite(sd)) continue;
    ++varying;
    if (out.widest < 0 || sd > out.widest_std) {
      out.widest = c;
      out.widest_std = sd;
    }
    if (out.narrowest < 0 || sd < out.narrowest_std) {
      out.narrowest = c;
      out.narrowest_std = sd;
    }
  }
  if (varying < 2) return FeatureSpread{};
  return out;
}

bool PlateauWatch::add(double loss) {
  if (!std::isfinite(loss)) {
    reset();
    return false;
  }
  if (!started_) {
    started_ = true;
    first_ = loss;
  }
  last_.push_back(loss);
  if (static_cast<int>(last_.size()) > window_) last_.pop_front();
  if (said_ || static_cast<int>(last_.size()) < window_) return false;
  // The older and the newer half of the window: a loss that learns has a lower newer half, by
  // more than the epoch-to-epoch noise of a shuffled run.
  const size_t half = last_.size() / 2;
  double older = 0.0, newer = 0.0;
  for (size_t i = 0; i < half; ++i) older += last_[i];
  for (size_t i = last_.size() - half; i < last_.size(); ++i) newer += last_[i];
  older /= static_cast<double>(half);
  newer /= static_cast<double>(half);
  if (older - newer < tolerance_ * older && newer > progress_ * first_) {
    said_ = true;
    level_ = newer;
    return true;
  }
  return false;
}

void PlateauWatch::reset() {
  started_ = said_ = false;
  first_ = level_ = 0.0;
  last_.clear();
}

}  // namespace fitbench
