// What the tests run under mpirun share: MPI started once for the test executable (every rank
// runs the same test functions in the same order; a failing check ends the job through
// mpirun's --timeout rather than a hang), and a hash of floats to compare ranks.
#pragma once

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/distribution/processes/process_group.h"
#include "mpi/mpi_process_group.h"

namespace fitbench::mpi_test {

inline std::shared_ptr<ProcessGroup> start() {
  const ProcessLayout layout = detect_process_layout(std::getenv);
  auto group = MpiProcessGroup::initialize(layout);
  set_process_group(group);
  return group;
}

inline void stop() {
  set_process_group(nullptr);
  finalize_mpi();
}

// Turns the sharing of memory between the processes on or off for the collectives made after;
// false when it cannot be on (the processes do not share one machine). Every rank calls it alike.
inline bool share_memory(ProcessGroup& g, bool on) {
  auto& mpi = static_cast<MpiProcessGroup&>(g);
  mpi.set_shares_memory(on);
  return mpi.shares_memory() == on;
}

// The bits of `values`, hashed.
inline uint64_t hash_floats(const std::vector<float>& values) {
  std::string bytes(values.size() * sizeof(float), '\0');
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return fnv1a(bytes);
}

// Every rank's `value`, in rank order.
inline std::vector<uint64_t> gather(ProcessGroup& g, uint64_t value) {
  std::vector<uint64_t> all(static_cast<size_t>(g.size()));
  g.all_gather_bytes(&value, sizeof value, all.data());
  return all;
}

}  // namespace fitbench::mpi_test
