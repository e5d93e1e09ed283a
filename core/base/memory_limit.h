// How much more memory this process may take: the least of the machine's physical memory less
// what the process holds, the cgroup's memory limit (v2 memory.max, v1 memory.limit_in_bytes)
// less what the cgroup uses, and RLIMIT_AS less the address space already mapped. A run plan whose
// job total is above it is refused before anything is allocated (plan_run). Free functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fitbench {

struct MemoryLimit {
  int64_t bytes = 0;   // what the process may still allocate
  std::string source;  // what sets it: "physical memory", "the cgroup's memory.max", "RLIMIT_AS"
};

// The tightest of the limits that apply. Never fails: a limit that cannot be read is left out.
MemoryLimit process_memory_limit();

// "1.50 GiB", "512 MiB", "812 KiB", "96 B": bytes in binary units, three significant digits.
std::string bytes_text(int64_t bytes);

}  // namespace fitbench
