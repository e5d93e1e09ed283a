// Small statistics over measured values (times, offsets), shared by the sweep's pruning, the
// process trace's clock alignment, the calibration and the benchmarks.
#pragma once

#include <algorithm>
#include <vector>

namespace fitbench {

// The median: the middle value, the mean of the middle two for an even count; 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace fitbench
