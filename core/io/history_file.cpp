#include "core/io/history_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/io/json_file.h"
#include "core/python/python_repr.h"
#include "core/training/logs.h"

namespace fitbench {

std::string history_text(const History& h, bool csv) {
  std::string text;
  if (csv) {
    text = "epoch";
    for (const auto& [key, values] : h.history) text += "," + key;
    text += "\n";
    for (size_t i = 0; i < h.epoch.size(); ++i) {
      text += std::to_string(h.epoch[i]);
      for (const auto& [key, values] : h.history) {
        // Python's repr, as Keras's CSVLogger writes a value; "nan" for an epoch without one.
        text += ',' + python_repr(i < values.size() ? values[i] : std::nan(""));
      }
      text += "\n";
    }
    return text;
  }
  nlohmann::ordered_json doc;
  doc["epoch"] = h.epoch;
  doc["history"] = nlohmann::ordered_json::object();
  // Keras's History holds its keys in the logs' order: training, validation, learning_rate.
  std::vector<std::string> keys;
  for (const auto& [key, values] : h.history) keys.push_back(key);
  std::stable_sort(keys.begin(), keys.end(), [](const std::string& a, const std::string& b) {
    return keras_key_group(a) < keras_key_group(b);
  });
  for (const std::string& key : keys) doc["history"][key] = h.history.at(key);
  doc["params"] = {
      {"verbose", h.params_verbose}, {"epochs", h.params_epochs}, {"steps", h.params_steps}};
  return doc.dump(2) + "\n";
}

void write_history(const History& history, const std::filesystem::path& file, StagedFiles* into) {
  std::string extension = file.extension().string();
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  json_io::write_file_atomically(file, history_text(history, extension == ".csv"), into);
}

}  // namespace fitbench
