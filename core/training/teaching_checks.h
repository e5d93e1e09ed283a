// Checks that teach: situations a learner meets without an error, said with the setting to
// change. Features on very different scales (one learning rate cannot suit them all until they
// are standardized), and a loss that has stopped moving while still far from where it started
// (the model is not learning). The window shows them (docs/workbench.md, "Warnings that
// teach"). Pure functions and a small value type; thread-compatible.
#pragma once

#include <cstdint>
#include <deque>

#include "core/base/tensor.h"

namespace fitbench {

// The columns of `x` with the widest and the narrowest standard deviation (population, over its
// rows), among those that vary; -1 when fewer than two vary.
struct FeatureSpread {
  Index widest = -1, narrowest = -1;
  double widest_std = 0.0, narrowest_std = 0.0;
  double ratio() const { return narrowest_std > 0.0 ? widest_std / narrowest_std : 0.0; }
};
FeatureSpread feature_spread(ConstMatrixRef x);

// The spread from which the window warns: a standard deviation 100 times another's.
inline constexpr double kScaleWarningRatio = 100.0;

// A loss that does not move: add() each epoch's loss; it returns true once, at the epoch where
// the mean of the newer half of the last `window` losses is less than `tolerance` (relative)
// below the older half's (halves, so a shuffled run's epoch-to-epoch noise does not hide it),
// while the loss is still above `progress` times the first epoch's (a loss that has converged
// near 0 does not count). A non-finite loss resets it.
class PlateauWatch {
 public:
  explicit PlateauWatch(int window = 20, double tolerance = 0.01, double progress = 0.5)
      : window_(window), tolerance_(tolerance), progress_(progress) {}
  bool add(double loss);
  void reset();
  // The mean of the newer half of the window when add() last returned true.
  double level() const { return level_; }

 private:
  int window_;
  double tolerance_, progress_;
  double first_ = 0.0, level_ = 0.0;
  bool started_ = false, said_ = false;
  std::deque<double> last_;
};

}  // namespace fitbench
