#include "core/run/target.h"

#include <array>
#include <filesystem>
#include <thread>

#include "core/base/error.h"
#include "core/io/json_file.h"
#include "core/io/json_reader.h"

namespace fitbench {
namespace {

constexpr int64_t kGB = 1'000'000'000;

const std::array<Target, 3>& presets() {
  static const std::array<Target, 3> list{{
      {"this-machine",
       "the simulated CPU devices of this process: they share its memory (physical, cgroup and "
       "RLIMIT_AS limits) and its cores take turns; 20 GFLOP/s per device and a 2 µs, 10 GB/s "
       "thread link are placeholders until --calibrate measures them",
       1024,
       0,
       20e9,
       {2.0, 10.0},
       {2.0, 10.0},
       0},
      {"dgx1-v100",
       "NVIDIA DGX-1 with 8 x Tesla V100 16 GB (V100 datasheet: 15.7 TFLOP/s float32 peak, "
       "NVLink 300 GB/s per GPU both ways, so 150 GB/s each way; hosts joined by InfiniBand EDR, "
       "100 Gb/s = 12.5 GB/s); latencies of 5 µs (NVLink) and 10 µs (InfiniBand) per message "
       "are assumptions",
       8,
       16 * kGB,
       15.7e12,
       {5.0, 150.0},
       {10.0, 12.5},
       0},
      {"dgx-a100",
       "NVIDIA DGX A100 with 8 x A100 40 GB (A100 datasheet: 19.5 TFLOP/s float32 peak, NVLink "
       "600 GB/s per GPU both ways, so 300 GB/s each way; one InfiniBand HDR port per GPU, "
       "200 Gb/s = 25 GB/s); latencies of 5 µs (NVLink) and 10 µs (InfiniBand) per message are "
       "assumptions",
       8,
       40 * kGB,
       19.5e12,
       {5.0, 300.0},
       {10.0, 25.0},
       0},
  }};
  return list;
}

LinkModel read_link(const json_io::ObjectReader& parent, const char* key, const LinkModel& dflt) {
  const auto* value = parent.get_non_null(key);
  if (!value) return dflt;
  json_io::ObjectReader r(*value, parent.path_of(key), {"latency_us", "gbps"});
  LinkModel link;
  link.latency_us =
      r.number("latency_us", dflt.latency_us, "microseconds from 0 to 100000", {0.0, 100000.0});
  link.gbps = r.number("gbps", dflt.gbps, "a bandwidth in GB/s above 0 (10^9 bytes per second)",
                       {0.0, 1e6, true});
  return link;
}

}  // namespace

std::span<const Target> target_presets() { return presets(); }

Target this_machine() {
  Target t = presets().front();
  const unsigned cores = std::thread::hardware_concurrency();
  t.cores = cores > 0 ? static_cast<double>(cores) : 1.0;
  return t;
}

std::string target_preset_names() {
  std::string out;
  const auto& list = presets();
  for (size_t i = 0; i < list.size(); ++i)
    out += (i == 0 ? "" : i + 1 == list.size() ? " or " : ", ") + list[i].name;
  return out;
}

Target read_target(const std::string& name_or_file, const std::string& place) {
  if (name_or_file == presets().front().name) return this_machine();
  for (const Target& t : presets())
    if (t.name == name_or_file) return t;
  if (!std::filesystem::exists(name_or_file))
    throw InputError(place, "is neither a preset (" + target_preset_names() +
                                ") nor a target file: \"" + name_or_file + "\"");
  const json_io::Json doc = json_io::read_json_file(name_or_file);
  Target t;
  try {
    // Places inside the file are "<file>: key" (within(), below).
    json_io::ObjectReader keys(doc, "",
                               {"name", "source", "memory_gb", "tflops", "devices_per_host",
                                "inside_host", "between_hosts"});
    keys.require("memory_gb", "gigabytes per device");
    keys.require("tflops", "TFLOP/s per device");
    t.name = keys.string("name", std::filesystem::path(name_or_file).stem().string());
    t.source = keys.string("source", "the target file " + name_or_file);
    t.memory_bytes = static_cast<int64_t>(keys.number("memory_gb", 0.0,
                                                      "gigabytes (10^9 bytes) per device above 0",
                                                      {0.0, 1e9, true}) *
                                          1e9);
    t.flops =
        keys.number("tflops", 0.0, "TFLOP/s one device sustains, above 0", {0.0, 1e9, true}) * 1e12;
    t.devices_per_host = static_cast<int>(
        keys.integer("devices_per_host", 8, "a whole number from 1 to 1024", 1, 1024));
    t.inside_host = read_link(keys, "inside_host", {5.0, 100.0});
    t.between_hosts = read_link(keys, "between_hosts", {10.0, 12.5});
  } catch (const InputError& e) {
    throw e.within(name_or_file);
  }
  return t;
}

}  // namespace fitbench
