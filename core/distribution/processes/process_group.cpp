#include "core/distribution/processes/process_group.h"

#include <charconv>
#include <mutex>

#include "core/base/error.h"

namespace fitbench {
namespace {

// A whole number from `value` (of `name`) in [lo, hi].
int whole_number(const char* name, const char* value, int lo, int hi) {
  const std::string text(value);
  int v = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < lo || v > hi)
    throw InputError(name, "must be a whole number from " + std::to_string(lo) + " to " +
                               std::to_string(hi) + ", got \"" + text + "\"");
  return v;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const size_t end = comma == std::string::npos ? text.size() : comma;
    if (end > start) out.push_back(text.substr(start, end - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::mutex group_mutex;
std::shared_ptr<ProcessGroup> current_group;

}  // namespace

ProcessLayout detect_process_layout(const std::function<const char*(const char*)>& env) {
  constexpr int kMaxProcesses = 1 << 16;
  ProcessLayout layout;
  const char* keras_size = env("KERAS_DISTRIBUTION_NUM_PROCESSES");
  const char* ompi_size = env("OMPI_COMM_WORLD_SIZE");
  if (keras_size && *keras_size) {
    layout.source = "KERAS_DISTRIBUTION_NUM_PROCESSES";
    layout.size = whole_number("KERAS_DISTRIBUTION_NUM_PROCESSES", keras_size, 1, kMaxProcesses);
    const char* id = env("KERAS_DISTRIBUTION_PROCESS_ID");
    if (!id || !*id)
      throw InputError("KERAS_DISTRIBUTION_PROCESS_ID",
                       "must be set with KERAS_DISTRIBUTION_NUM_PROCESSES (this process's index "
                       "from 0)");
    layout.rank = whole_number("KERAS_DISTRIBUTION_PROCESS_ID", id, 0, layout.size - 1);
    if (const char* a = env("KERAS_DISTRIBUTION_JOB_ADDRESSES"); a && *a) {
      layout.job_addresses = split_commas(a);
      if (static_cast<int>(layout.job_addresses.size()) != layout.size)
        throw InputError("KERAS_DISTRIBUTION_JOB_ADDRESSES",
                         "lists " + std::to_string(layout.job_addresses.size()) +
                             " addresses but KERAS_DISTRIBUTION_NUM_PROCESSES is " +
                             std::to_string(layout.size) + "; give one host:port per process");
    }
    // Open MPI still knows which processes share a machine.
    if (const char* local = env("OMPI_COMM_WORLD_LOCAL_RANK"); local && *local)
      layout.local_rank = whole_number("OMPI_COMM_WORLD_LOCAL_RANK", local, 0, kMaxProcesses);
    return layout;
  }
  if (ompi_size && *ompi_size) {
    layout.source = "OMPI_COMM_WORLD_SIZE";
    layout.size = whole_number("OMPI_COMM_WORLD_SIZE", ompi_size, 1, kMaxProcesses);
    const char* rank = env("OMPI_COMM_WORLD_RANK");
    layout.rank =
        rank && *rank ? whole_number("OMPI_COMM_WORLD_RANK", rank, 0, layout.size - 1) : 0;
    const char* local = env("OMPI_COMM_WORLD_LOCAL_RANK");
    layout.local_rank =
        local && *local ? whole_number("OMPI_COMM_WORLD_LOCAL_RANK", local, 0, kMaxProcesses) : 0;
  }
  return layout;
}

uint64_t fnv1a(const std::string& bytes, uint64_t seed) {
  uint64_t h = seed;
  for (const unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string start_mismatch(ProcessGroup& group, const std::vector<StartPart>& parts) {
  const size_t n = parts.size();
  std::vector<uint64_t> mine(n), all(n * static_cast<size_t>(group.size()));
  for (size_t i = 0; i < n; ++i) mine[i] = fnv1a(parts[i].content);
  group.all_gather_bytes(mine.data(), static_cast<int64_t>(n * sizeof(uint64_t)), all.data());
  std::vector<int> ranks;
  std::vector<bool> differs(n, false);
  for (int r = 1; r < group.size(); ++r) {
    bool any = false;
    for (size_t i = 0; i < n; ++i) {
      if (all[static_cast<size_t>(r) * n + i] != all[i]) {
        differs[i] = true;
        any = true;
      }
    }
    if (any) ranks.push_back(r);
  }
  if (ranks.empty()) return {};
  std::string who = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    who += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + std::to_string(ranks[i]);
  std::vector<std::string> what;
  for (size_t i = 0; i < n; ++i)
    if (differs[i]) what.push_back(parts[i].name);
  std::string list;
  for (size_t i = 0; i < what.size(); ++i)
    list += (i == 0 ? "" : i + 1 == what.size() ? " and " : ", ") + what[i];
  return who + (ranks.size() == 1 ? " differs" : " differ") + " from rank 0 in " + list +
         "; every process must run the same fitbench build on the same experiment with the same "
         "options";
}

void set_process_group(std::shared_ptr<ProcessGroup> group) {
  std::lock_guard lock(group_mutex);
  current_group = std::move(group);
}

std::shared_ptr<ProcessGroup> process_group() {
  std::lock_guard lock(group_mutex);
  return current_group;
}

}  // namespace fitbench
