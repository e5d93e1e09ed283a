#include "core/io/json_reader.h"

#include <algorithm>
#include <cmath>

#include "core/base/error.h"

namespace fitbench::json_io {

namespace {

const Json& empty_object() {
  static const Json kEmpty = Json::object();
  return kEmpty;
}

// An integer value of any JSON number kind (an integral float such as 4.0 counts).
std::optional<int64_t> integral(const Json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.0e15) {
      return static_cast<int64_t>(d);
    }
  }
  return std::nullopt;
}

}  // namespace

namespace {

// A key as a place shows it: whole up to 64 bytes, else its first 32 (cut at a character's
// start) and its length, so the sentence after it is never pushed past a message's limit.
constexpr size_t kKeyShown = 64;
std::string shown_key(std::string_view key) {
  if (key.size() <= kKeyShown) return std::string(key);
  size_t cut = kKeyShown / 2;
  while (cut > 0 && (static_cast<unsigned char>(key[cut]) & 0xC0) == 0x80) --cut;
  return std::string(key.substr(0, cut)) + "...(a key of " + std::to_string(key.size()) + " bytes)";
}

}  // namespace

std::string key_path(const std::string& path, std::string_view full_key) {
  const std::string key = shown_key(full_key);
  // A key holding a control character (a NUL, a newline) is written as JSON writes it, in
  // brackets, so a message shows it whole: data["nul\u0000key"].
  if (has_control_character(std::string(key)))
    return path + "[" + Json(std::string(key)).dump() + "]";
  if (path.empty()) return std::string(key);
  return path + "." + std::string(key);
}

std::string index_path(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

std::string describe(const Json& value) {
  if (value.is_object()) {
    auto it = value.find("class_name");
    if (it != value.end() && it->is_string()) {
      return "{\"class_name\": " + it->dump() + ", ...}";
    }
    return value.empty() ? "{}" : "an object";
  }
  if (value.is_array()) return value.empty() ? "[]" : "an array";
  std::string text = value.dump();
  if (text.size() > 60) text = text.substr(0, 57) + "...";
  return text;
}

void fail(const std::string& place, const std::string& message) {
  throw InputError(place, message);
}

void fail_expected(const std::string& place, const std::string& expected, const Json& got) {
  fail(place, "must be " + expected + ", got " + describe(got));
}

void fail_unsupported(const std::string& place, const Json& value, const std::string& detail) {
  fail(place, describe(value) + " is not supported by fitbench" + detail);
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ", ";
    out += items[i];
  }
  return out;
}

int64_t to_int(const Json& v, const std::string& path, const std::string& expected, int64_t min,
               int64_t max) {
  const auto value = integral(v);
  // An integer above a limit the expected text does not state ("a positive integer", capped at
  // 2^30 for epochs) gets the limit said.
  if (value && *value > max && *value >= min &&
      expected.find(std::to_string(max)) == std::string::npos)
    fail(path, "must be " + expected + " up to " + std::to_string(max) + ", got " +
                   std::to_string(*value));
  if (!value || *value < min || *value > max) fail_expected(path, expected, v);
  return *value;
}

uint64_t to_uint64(const Json& v, const std::string& path, const std::string& expected) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  const auto value = integral(v);
  if (!value || *value < 0) fail_expected(path, expected, v);
  return static_cast<uint64_t>(*value);
}

double to_number(const Json& v, const std::string& path, const std::string& expected,
                 Bounds bounds) {
  if (!v.is_number()) fail_expected(path, expected, v);
  const double d = v.get<double>();
  const bool low_ok = bounds.lo_open ? d > bounds.lo : d >= bounds.lo;
  const bool high_ok = bounds.hi_open ? d < bounds.hi : d <= bounds.hi;
  if (!std::isfinite(d) || !low_ok || !high_ok) fail_expected(path, expected, v);
  return d;
}

bool to_bool(const Json& v, const std::string& path) {
  if (!v.is_boolean()) fail_expected(path, "true or false", v);
  return v.get<bool>();
}

std::string to_string(const Json& v, const std::string& path, const std::string& expected) {
  if (!v.is_string()) fail_expected(path, expected, v);
  return v.get<std::string>();
}

std::string to_path(const Json& v, const std::string& path) {
  const std::string file = to_string(v, path, "a file path");
  if (file.empty()) fail_expected(path, "a non-empty file path", v);
  if (file.find('\0') != std::string::npos)
    fail(path, "holds a NUL character (\\u0000), which no file name can hold: " + describe(v));
  return file;
}

std::vector<int64_t> to_dims(const Json& v, const std::string& path) {
  if (!v.is_array() || v.empty()) fail_expected(path, "a non-empty list of positive integers", v);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < v.size(); ++i) {
    dims.push_back(to_int(v[i], index_path(path, i), "a positive integer", 1));
  }
  return dims;
}

ObjectReader::ObjectReader(const Json& value, std::string path, std::vector<std::string> allowed)
    : value_(value), path_(std::move(path)) {
  if (!value_.is_object()) fail_expected(path_, "a JSON object", value_);
  for (auto it = value_.begin(); it != value_.end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
      // Built with if/else: GCC 12 with -fsanitize=address mis-evaluated the conditional
      // expression mixing a literal and a std::string temporary here.
      std::string message = "unknown key; this object takes no keys";
      if (!allowed.empty()) message = "unknown key; expected one of: " + join(allowed);
      fail(path_of(it.key()), message);
    }
  }
}

const Json* ObjectReader::get(std::string_view key) const {
  auto it = value_.find(std::string(key));
  return it == value_.end() ? nullptr : &*it;
}

const Json* ObjectReader::get_non_null(std::string_view key) const {
  const Json* v = get(key);
  return (v == nullptr || v->is_null()) ? nullptr : v;
}

const Json& ObjectReader::require(std::string_view key, const std::string& what) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) fail(path_of(key), "is required (" + what + ")");
  return *v;
}

int64_t ObjectReader::integer(std::string_view key, int64_t fallback, const std::string& expected,
                              int64_t min, int64_t max) const {
  const Json* v = get(key);
  return v == nullptr ? fallback : to_int(*v, path_of(key), expected, min, max);
}

double ObjectReader::number(std::string_view key, double fallback, const std::string& expected,
                            Bounds bounds) const {
  const Json* v = get(key);
  return v == nullptr ? fallback : to_number(*v, path_of(key), expected, bounds);
}

bool ObjectReader::boolean(std::string_view key, bool fallback) const {
  const Json* v = get(key);
  return v == nullptr ? fallback : to_bool(*v, path_of(key));
}

std::string ObjectReader::string(std::string_view key, const std::string& fallback,
                                 const std::string& expected) const {
  const Json* v = get(key);
  return v == nullptr ? fallback : to_string(*v, path_of(key), expected);
}

std::optional<int64_t> ObjectReader::optional_integer(std::string_view key,
                                                      const std::string& expected, int64_t min,
                                                      int64_t max) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) return std::nullopt;
  return to_int(*v, path_of(key), expected, min, max);
}

std::optional<uint64_t> ObjectReader::optional_uint64(std::string_view key,
                                                      const std::string& expected) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) return std::nullopt;
  return to_uint64(*v, path_of(key), expected);
}

std::optional<double> ObjectReader::optional_number(std::string_view key,
                                                    const std::string& expected,
                                                    Bounds bounds) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) return std::nullopt;
  return to_number(*v, path_of(key), expected, bounds);
}

void ObjectReader::only(std::string_view key, std::initializer_list<Json> accepted) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) return;
  std::vector<std::string> names;
  for (const Json& a : accepted) {
    if (*v == a) return;
    names.push_back(a.dump());
  }
  fail_unsupported(path_of(key), *v,
                   names.empty() ? " (only null is)"
                                 : " (only " + join(names) + (names.size() > 1 ? " are)" : " is)"));
}

void ObjectReader::only_float32_dtype(std::string_view key) const {
  const Json* v = get_non_null(key);
  if (v == nullptr) return;
  const std::string place = path_of(key);
  if (v->is_string()) {
    if (v->get<std::string>() != "float32") fail_unsupported(place, *v, " (only float32 is)");
    return;
  }
  if (!v->is_object()) fail_expected(place, "a dtype name or a DTypePolicy", *v);
  const Json* config = nullptr;
  // Keras marks a policy object serialized more than once with its Python id().
  const std::string class_name = read_keras_object(*v, place, &config, {"shared_object_id"});
  if (class_name != "DTypePolicy" && class_name != "FloatDTypePolicy") {
    fail_unsupported(key_path(place, "class_name"), v->at("class_name"), " (only DTypePolicy is)");
  }
  ObjectReader policy(*config, key_path(place, "config"), {"name"});
  const Json& name = policy.require("name", "the policy's dtype name");
  if (!name.is_string() || name.get<std::string>() != "float32") {
    fail_unsupported(policy.path_of("name"), name, " (only float32 is)");
  }
}

std::string read_keras_object(const Json& value, const std::string& path, const Json** config_out,
                              std::vector<std::string> extra_keys) {
  std::vector<std::string> allowed = {"module", "class_name", "config", "registered_name"};
  allowed.insert(allowed.end(), extra_keys.begin(), extra_keys.end());
  ObjectReader reader(value, path, allowed);
  const std::string class_name =
      to_string(reader.require("class_name", "the Keras class name"), reader.path_of("class_name"));
  if (const Json* module = reader.get_non_null("module")) {
    const std::string m = to_string(*module, reader.path_of("module"));
    if (m != "keras" && m.rfind("keras.", 0) != 0) {
      fail_unsupported(reader.path_of("module"), *module,
                       " (only Keras's own classes are; custom objects cannot be loaded)");
    }
  }
  if (const Json* registered = reader.get_non_null("registered_name")) {
    if (!registered->is_string() || registered->get<std::string>() != class_name) {
      fail_unsupported(reader.path_of("registered_name"), *registered,
                       " (custom registered objects cannot be loaded)");
    }
  }
  const Json* config = reader.get_non_null("config");
  *config_out = config != nullptr ? config : &empty_object();
  return class_name;
}

}  // namespace fitbench::json_io
