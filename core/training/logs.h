// The values fit(), evaluate() and callbacks exchange: metric name -> value for a batch (running
// means) or an epoch ("loss", "accuracy", "val_loss", "learning_rate"). A plain value type.
#pragma once

#include <map>
#include <string>

namespace fitbench {

// Keys in alphabetical order, as Keras sorts logs before callbacks see them (pythonify_logs in
// keras/src/callbacks/callback_list.py). Progbar prints "val_*" keys after the training keys and
// "learning_rate" last, as Keras does (see progbar.h).
using Logs = std::map<std::string, double>;

// The order Keras's epoch logs (and so History.history, and a json.dump of it) hold their keys
// in: the training keys (sorted by pythonify_logs), then the validation keys (added after them by
// fit()), then "learning_rate" (added by callbacks). Sort alphabetically, then stably by this.
inline int keras_key_group(const std::string& key) {
  if (key == "learning_rate") return 2;
  return key.starts_with("val_") ? 1 : 0;
}

}  // namespace fitbench
