// keras.callbacks.History's content: the epochs that ran and each log key's per-epoch values,
// plus fit's params (verbose, epochs, steps). A value type filled by fit().
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fitbench {

struct History {
  std::vector<int> epoch;                              // 0-based epoch indices that ran
  std::map<std::string, std::vector<double>> history;  // "loss" -> [...], "val_accuracy" -> ...
  int params_verbose = 1;
  int params_epochs = 1;
  int params_steps = 0;

  // The last value of a key, or NaN when absent.
  double last(const std::string& key) const;
};

}  // namespace fitbench
