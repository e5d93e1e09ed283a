#include "core/distribution/spec/devices.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <sstream>

#include "core/base/error.h"
#include "core/distribution/spec/distribution_spec.h"

namespace fitbench {
namespace {

int parse_count(std::string text, const std::string& place) {
  // Spaces around the number are allowed, as --devices allows them.
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  int value = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || value < 1 ||
      value > kMaxDeviceCount)
    throw InputError(place, "must be a whole number of devices from 1 to " +
                                std::to_string(kMaxDeviceCount) + ", got \"" + text + "\"");
  return value;
}

}  // namespace

std::optional<int> environment_device_count() {
  if (const char* v = std::getenv("FITBENCH_CPU_DEVICES"); v && *v)
    return parse_count(v, "FITBENCH_CPU_DEVICES");
  if (const char* flags = std::getenv("XLA_FLAGS"); flags && *flags) {
    // As absl reads the flags: whitespace-separated, the last of a repeated flag wins, and the
    // flag without "=N" is an error.
    static const std::string kFlag = "--xla_force_host_platform_device_count";
    const std::string place = "XLA_FLAGS (" + kFlag + ")";
    std::optional<int> count;
    std::istringstream words(flags);
    for (std::string word; words >> word;) {
      if (word.rfind(kFlag, 0) != 0) continue;
      if (word.size() == kFlag.size()) throw InputError(place, "needs a value: " + kFlag + "=N");
      if (word[kFlag.size()] != '=') continue;  // another flag that starts with the same name
      count = parse_count(word.substr(kFlag.size() + 1), place);
    }
    return count;
  }
  return std::nullopt;
}

int resolve_device_count(std::optional<int> command_line, std::optional<int> experiment) {
  if (command_line) return *command_line;
  if (experiment) return *experiment;
  if (auto env = environment_device_count()) return *env;
  return 1;
}

std::vector<std::string> list_devices(const std::string& device_type, int count) {
  if (device_type == "gpu" || device_type == "tpu") return {};
  if (device_type != "cpu")
    throw InputError("devices.type", "unknown device type \"" + device_type +
                                         "\"; fitbench simulates \"cpu\" devices");
  const int n = count > 0 ? count : resolve_device_count(std::nullopt, std::nullopt);
  std::vector<std::string> out;
  for (int i = 0; i < n; ++i) out.push_back("cpu:" + std::to_string(i));
  return out;
}

std::string device_list_repr(const std::vector<std::string>& devices) {
  std::string s = "[";
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? ", '" : "'") + devices[i] + "'";
  return s + "]";
}

std::string device_type_error(const std::string& device_type) {
  if (device_type == "cpu") return {};
  return "\"" + device_type +
         "\" devices are not available: fitbench simulates CPU devices only; use \"cpu\"";
}

}  // namespace fitbench
