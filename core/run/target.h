// A target: the devices a plan is rehearsed for, with each device's memory and sustained FLOP/s
// and the links inside a host and between hosts. Built-in presets name where their numbers come
// from; a user's target is a small JSON file (docs/capacity.md). Value types; thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/distribution/collectives/collectives.h"

namespace fitbench {

struct Target {
  std::string name;          // "dgx1-v100", or the file's "name"
  std::string source;        // where the numbers come from, one sentence
  int devices_per_host = 1;  // devices sharing the fast link
  int64_t memory_bytes = 0;  // per device; 0: the devices share this process's memory
  double flops = 0.0;        // FLOP/s one device sustains (float32)
  LinkModel inside_host;     // per message: latency (µs) and bandwidth (GB/s) each way
  LinkModel between_hosts;   // the same between hosts
  // Devices that compute at once (this machine: the cores it can give, measured by --calibrate);
  // N devices on fewer take N / cores times as long. 0: every device has its own hardware.
  double cores = 0.0;
  // The link a collective among `ranks` consecutive devices crosses: its slowest one.
  const LinkModel& link_for(int ranks) const {
    return ranks > devices_per_host ? between_hosts : inside_host;
  }
};

// The presets, the first the default ("this-machine" values before calibration).
std::span<const Target> target_presets();
// The "this-machine" preset with this machine's cores as the devices that compute at once.
Target this_machine();
// "this-machine, dgx1-v100 or dgx-a100", for messages.
std::string target_preset_names();

// A preset by name, else a JSON file: {"name", "source", "memory_gb", "tflops",
// "devices_per_host", "inside_host": {"latency_us", "gbps"}, "between_hosts": {...}}.
// Throws InputError at `place` (an unknown name that is no file) or at the file's key.
Target read_target(const std::string& name_or_file, const std::string& place);

}  // namespace fitbench
