// Helpers the benchmark programs share: the median of repeated measurements and the machine's
// load average at the time (reported beside every figure). Header-only; no state.
#pragma once

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

namespace fitbench::bench {

// The median (the mean of the middle two for an even count); 0 for no values.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The 1-, 5- and 15-minute load averages from /proc/loadavg, e.g. "0.93 1.10 1.52".
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

}  // namespace fitbench::bench
