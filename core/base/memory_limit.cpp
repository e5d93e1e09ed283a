#include "core/base/memory_limit.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>

namespace fitbench {
namespace {

// A number read from the first line of `path` ("max" and unreadable files give nothing).
std::optional<int64_t> read_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word.empty() || !std::isdigit(static_cast<unsigned char>(word[0])))
    return std::nullopt;
  try {
    return static_cast<int64_t>(std::stoull(word));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Field `field` of /proc/self/statm (0: the mapped address space, 1: resident), in bytes.
int64_t statm_bytes(int field) {
  std::ifstream in("/proc/self/statm");
  int64_t pages = 0;
  for (int i = 0; i <= field; ++i)
    if (!(in >> pages)) return 0;
  return pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

void take(MemoryLimit& best, int64_t bytes, const char* source) {
  if (bytes < best.bytes) best = {std::max<int64_t>(bytes, 0), source};
}

}  // namespace

MemoryLimit process_memory_limit() {
  MemoryLimit best{std::numeric_limits<int64_t>::max(), "no limit"};
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    take(best, static_cast<int64_t>(pages) * page - statm_bytes(1),
         "the machine's physical memory less what this process holds");
  // cgroup v2, then v1; a v1 "no limit" is a huge number, which never wins.
  if (const auto max = read_number("/sys/fs/cgroup/memory.max"))
    take(best, *max - read_number("/sys/fs/cgroup/memory.current").value_or(0),
         "the cgroup's memory.max less what the cgroup uses");
  else if (const auto v1 = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    take(best, *v1 - read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes").value_or(0),
         "the cgroup's memory.limit_in_bytes less what the cgroup uses");
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    take(best, static_cast<int64_t>(as.rlim_cur) - statm_bytes(0),
         "RLIMIT_AS (ulimit -v) less the address space already mapped");
  return best;
}

std::string bytes_text(int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0)
    std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
  else
    std::snprintf(buf, sizeof buf,
                  value < 10    ? "%.2f %s"
                  : value < 100 ? "%.1f %s"
                                : "%.0f %s",
                  value, kUnits[unit]);
  return buf;
}

}  // namespace fitbench
