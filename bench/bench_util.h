// Helpers the benchmark programs share: the median of repeated measurements, the machine's load
// average at the time and the host's CPU (reported beside every figure). Header-only; no state.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "core/base/statistics.h"

namespace fitbench::bench {

using fitbench::median;  // core/base/statistics.h

// The 1-, 5- and 15-minute load averages from /proc/loadavg, e.g. "0.93 1.10 1.52".
inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

// A process's resident memory (VmRSS, in MB) and thread count, from its /proc/<pid>/status
// ("self" for this process); zeros when the process is gone.
struct ProcessUsage {
  double rss_mb = 0.0;
  int threads = 0;
};
inline ProcessUsage process_usage(const std::string& pid = "self") {
  std::ifstream in("/proc/" + pid + "/status");
  std::string line;
  ProcessUsage u;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) u.rss_mb = std::atof(line.c_str() + 6) / 1024.0;
    if (line.rfind("Threads:", 0) == 0) u.threads = std::atoi(line.c_str() + 8);
  }
  return u;
}

// The CPU the VM is given, from /proc/cpuinfo's first processor, e.g. "AMD EPYC, family 25
// model 1, AVX2, L1d 32K": VMs of one kind land on hosts of different CPU generations (with or
// without AVX-512), whose figures are not comparable, so every run names its own.
inline std::string host_cpu() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, name = "unknown CPU", family, model, flags;
  const auto value = [](const std::string& l) {
    const size_t colon = l.find(':');
    return colon == std::string::npos || colon + 2 > l.size() ? std::string() : l.substr(colon + 2);
  };
  while (std::getline(in, line) && !line.empty()) {
    if (line.rfind("model name", 0) == 0)
      name = value(line);
    else if (line.rfind("cpu family", 0) == 0)
      family = value(line);
    else if (line.rfind("model\t", 0) == 0)
      model = value(line);
    else if (line.rfind("flags", 0) == 0)
      flags = " " + value(line) + " ";
  }
  std::string out = name;
  if (!family.empty()) out += ", family " + family + " model " + model;
  if (flags.find(" avx512f ") != std::string::npos)
    out += ", AVX-512";
  else if (flags.find(" avx2 ") != std::string::npos)
    out += ", AVX2";
  for (const char* index : {"index0", "index1"}) {  // the level-1 data cache
    const std::string dir = std::string("/sys/devices/system/cpu/cpu0/cache/") + index + "/";
    std::ifstream type_file(dir + "type"), size_file(dir + "size");
    std::string type, size;
    if (type_file >> type && type == "Data" && size_file >> size) {
      out += ", L1d " + size;
      break;
    }
  }
  return out;
}

}  // namespace fitbench::bench
