// Validated access to a parsed JSON document for the experiment and model file readers: every
// failure throws InputError whose place is the JSON path of the offending value (e.g.
// `model.config.layers[1].config.units`). Readers hold references into a document the caller owns;
// stateless helpers, safe to use from any thread on distinct documents.
#pragma once

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fitbench::json_io {

using Json = nlohmann::ordered_json;

// A finite number as itself, NaN and the infinities as null (JSON has no spelling for them).
inline Json number_or_null(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

// "a.b" from ("a", "b"); "b" from ("", "b"); a key with a control character in JSON's
// escapes and brackets: a["x\u0000y"].
std::string key_path(const std::string& path, std::string_view key);
// "a[3]" from ("a", 3).
std::string index_path(const std::string& path, size_t index);
// A short rendering of a value for messages: "four" in quotes, -3, null, an object's class_name.
std::string describe(const Json& value);

[[noreturn]] void fail(const std::string& place, const std::string& message);
// "<place>: must be <expected>, got <value>".
[[noreturn]] void fail_expected(const std::string& place, const std::string& expected,
                                const Json& got);
// "<place>: <value> is not supported by fitbench<detail>" (detail e.g. "; expected one of: ...").
[[noreturn]] void fail_unsupported(const std::string& place, const Json& value,
                                   const std::string& detail);

// "a, b, c" for messages.
std::string join(const std::vector<std::string>& items);

// Typed conversions of one value (not a key lookup); `expected` names the accepted values.
int64_t to_int(const Json& v, const std::string& path, const std::string& expected,
               int64_t min = std::numeric_limits<int64_t>::min(),
               int64_t max = std::numeric_limits<int64_t>::max());
uint64_t to_uint64(const Json& v, const std::string& path, const std::string& expected);

struct Bounds {
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool lo_open = false;  // lo itself excluded
  bool hi_open = false;  // hi itself excluded
};
double to_number(const Json& v, const std::string& path, const std::string& expected,
                 Bounds bounds = {});
bool to_bool(const Json& v, const std::string& path);
std::string to_string(const Json& v, const std::string& path,
                      const std::string& expected = "a string");
// A file path: a non-empty string without a NUL character (which would cut the name short).
std::string to_path(const Json& v, const std::string& path);
// A shape dimension list such as [4] or [2, 3]: every entry a positive integer.
std::vector<int64_t> to_dims(const Json& v, const std::string& path);

// One JSON object whose keys are checked against a list on construction (the first unknown key is
// an error naming its path and the accepted keys).
class ObjectReader {
 public:
  ObjectReader(const Json& value, std::string path, std::vector<std::string> allowed);

  const std::string& path() const { return path_; }
  std::string path_of(std::string_view key) const { return key_path(path_, key); }
  const Json& value() const { return value_; }

  // nullptr when the key is absent.
  const Json* get(std::string_view key) const;
  // nullptr when the key is absent or null.
  const Json* get_non_null(std::string_view key) const;
  // The value; absent (or null) is an error "is required (<what>)".
  const Json& require(std::string_view key, const std::string& what) const;

  // Absent: fallback. Null: an error (use the optional_ forms where Keras writes null).
  int64_t integer(std::string_view key, int64_t fallback, const std::string& expected,
                  int64_t min = std::numeric_limits<int64_t>::min(),
                  int64_t max = std::numeric_limits<int64_t>::max()) const;
  double number(std::string_view key, double fallback, const std::string& expected,
                Bounds bounds = {}) const;
  bool boolean(std::string_view key, bool fallback) const;
  std::string string(std::string_view key, const std::string& fallback,
                     const std::string& expected = "a string") const;

  // Absent or null: nullopt.
  std::optional<int64_t> optional_integer(std::string_view key, const std::string& expected,
                                          int64_t min = std::numeric_limits<int64_t>::min(),
                                          int64_t max = std::numeric_limits<int64_t>::max()) const;
  std::optional<uint64_t> optional_uint64(std::string_view key, const std::string& expected) const;
  std::optional<double> optional_number(std::string_view key, const std::string& expected,
                                        Bounds bounds = {}) const;

  // Keys fitbench understands only at their Keras default: absent, null or equal to one of
  // `accepted` passes; anything else is "<value> is not supported by fitbench (only ... is)".
  void only(std::string_view key, std::initializer_list<Json> accepted) const;
  // The layer/loss `dtype`: null, "float32" or a DTypePolicy dict whose name is float32.
  void only_float32_dtype(std::string_view key) const;

 private:
  const Json& value_;
  std::string path_;
};

// A serialized Keras object {"module", "class_name", "config", "registered_name", ...}: checks the
// bookkeeping keys (module must be Keras's, registered_name null or the class name) and returns
// the class name; `config` is returned through `config_out` (an empty object when absent or
// null). `extra_keys` are further keys allowed beside these four (e.g. "build_config").
std::string read_keras_object(const Json& value, const std::string& path, const Json** config_out,
                              std::vector<std::string> extra_keys = {});

}  // namespace fitbench::json_io
