#include "core/run/sweep_paths.h"

#include <cctype>
#include <optional>
#include <vector>

#include "core/base/error.h"
#include "core/io/json_reader.h"

namespace fitbench {
namespace {

using Json = nlohmann::ordered_json;

struct Step {
  std::string key;              // empty for an index
  std::optional<size_t> index;  // [i]
};

std::vector<Step> parse_path(const std::string& path) {
  std::vector<Step> steps;
  size_t i = 0;
  const auto bad = [&](const std::string& why) {
    throw InputError("", "is not a path into the experiment (" + why +
                             "); write keys with dots and list entries as [i], e.g. "
                             "\"model.layers[1].config.units\"");
  };
  while (i < path.size()) {
    if (path[i] == '[') {
      const size_t close = path.find(']', i);
      if (close == std::string::npos || close == i + 1) bad("an unclosed or empty [");
      size_t index = 0;
      for (size_t k = i + 1; k < close; ++k) {
        if (!std::isdigit(static_cast<unsigned char>(path[k])) || close - i > 8)
          bad("a list index must be a whole number");
        index = index * 10 + static_cast<size_t>(path[k] - '0');
      }
      if (steps.empty()) bad("it starts with a list index");
      steps.push_back({"", index});
      i = close + 1;
      if (i < path.size() && path[i] == '.') {
        ++i;
        if (i == path.size()) bad("it ends with a dot");
      }
      continue;
    }
    size_t end = i;
    while (end < path.size() && path[end] != '.' && path[end] != '[') ++end;
    if (end == i) bad("an empty key");
    steps.push_back({path.substr(i, end - i), std::nullopt});
    i = end;
    if (i < path.size() && path[i] == '.') {
      ++i;
      if (i == path.size()) bad("it ends with a dot");
    }
  }
  if (steps.empty()) bad("it is empty");
  return steps;
}

}  // namespace

void set_json_path(Json& doc, const std::string& path, const Json& value) {
  const std::vector<Step> steps = parse_path(path);
  Json* cur = &doc;
  std::string where;  // the path as it resolved so far, for messages
  for (size_t i = 0; i < steps.size(); ++i) {
    const Step& s = steps[i];
    const bool last = i + 1 == steps.size();
    const std::string named = where.empty() ? "the experiment" : where;
    if (s.index) {
      if (!cur->is_array())
        throw InputError("", named + " is " + json_io::describe(*cur) + ", not a list, so [" +
                                 std::to_string(*s.index) + "] names nothing");
      if (*s.index >= cur->size())
        throw InputError("", named + " has " +
                                 counted(static_cast<long long>(cur->size()), "entry", "entries") +
                                 ", so [" + std::to_string(*s.index) + "] names nothing");
      where = json_io::index_path(where, *s.index);
      cur = &(*cur)[*s.index];
      if (last) *cur = value;
      continue;
    }
    if (cur->is_string() && (s.key == "config" || s.key == "class_name")) {
      const std::string name = cur->get<std::string>();
      *cur = Json::object();
      (*cur)["class_name"] = name;
      (*cur)["config"] = Json::object();
    }
    if (cur->is_null()) *cur = Json::object();
    if (!cur->is_object())
      throw InputError("", named + " is " + json_io::describe(*cur) + ", not an object, so \"" +
                               s.key + "\" names nothing in it");
    if (!cur->contains(s.key)) {
      auto config = cur->find("config");
      const bool keras_object = config != cur->end() && config->is_object();
      if (keras_object && (config->contains(s.key) || (last && cur->contains("class_name")))) {
        where = json_io::key_path(where, "config");
        cur = &*config;
      }
    }
    where = json_io::key_path(where, s.key);
    cur = &(*cur)[s.key];
    if (last) *cur = value;
  }
}

}  // namespace fitbench
