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

}  // namespace fitbench
