// Paths into an experiment document, as a sweep's parameters name them:
// "compile.optimizer.config.learning_rate", "model.layers[1].config.units", "fit.batch_size".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace fitbench {

// Sets the value at `path` in `doc`. A key missing from an object is looked for in the object's
// "config" (so "model.layers[1]" reaches model.config.layers[1]); a last key missing from both
// is added (to the "config" of a Keras object {"class_name", "config"}); a missing object on the
// way is made, and a Keras object given as a string ("sgd") becomes {"class_name": "sgd",
// "config": {}} when the path goes inside it. Throws InputError (no place) with a sentence naming
// the part of the path that names nothing: a list index out of range, a key inside a number.
void set_json_path(nlohmann::ordered_json& doc, const std::string& path,
                   const nlohmann::ordered_json& value);

}  // namespace fitbench
