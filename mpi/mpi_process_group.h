// Open MPI behind core's ProcessGroup (core/distribution/processes/process_group.h): MPI_COMM_WORLD
// as the run's processes. The only fitbench code that includes <mpi.h>. MPI is initialized with
// MPI_THREAD_FUNNELED: a process's device 0 runs on the thread that called MPI_Init_thread (the
// CLI's main thread, which runs fit()) and only it calls MPI; its other devices meet it at a
// barrier. Not thread-safe beyond that.
#pragma once

#include <memory>
#include <string>

#include "core/distribution/processes/process_group.h"

namespace fitbench {

struct Communicator;

// MPI_COMM_WORLD (from initialize), or a part of it (from split).
class MpiProcessGroup final : public ProcessGroup {
 public:
  ~MpiProcessGroup() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_rank() const override { return local_rank_; }
  void all_to_all(const float* send, const int* send_counts, const int* send_displs, float* recv,
                  const int* recv_counts, const int* recv_displs) override;
  void all_gather(const float* send, float* recv, const int* counts, const int* displs) override;
  void broadcast(float* buffer, int64_t count, int root) override;
  void all_gather_bytes(const void* send, int64_t bytes, void* recv) override;
  void barrier() override;
  // MPI-3 shared windows over the group's communicator when every process of it runs on one
  // machine (MPI's MPI_COMM_TYPE_SHARED split of it is all of it) and no process has
  // FITBENCH_SHM_DISABLE=1; null otherwise. A handle's window goes back to the group's pool when
  // the handle ends (the next handle takes it, the same on every process); the group's end, or
  // finalize_mpi, frees the pool.
  std::unique_ptr<SharedFloats> shared_floats() override;
  // MPI_Comm_split of the group's communicator.
  std::shared_ptr<ProcessGroup> split(int color, int key) override;
  bool shares_memory() const { return shared_; }
  // Turns sharing off (or back on, where it was possible) for the handles created after (and for
  // the groups split from this one after); every process must call it alike. For tests and
  // benchmarks that compare the two paths.
  void set_shares_memory(bool on) { shared_ = on && shared_possible_; }
  // For tests: a shared window of more than `bytes` fails on this process, as a full /dev/shm
  // would (every process then goes on through MPI's messages); -1 lifts the limit.
  static void limit_shared_bytes(int64_t bytes);

  // Initializes MPI (once per process) for `layout`; throws std::runtime_error with a sentence
  // when MPI cannot give the thread level fitbench needs or its world differs from the layout
  // (KERAS_DISTRIBUTION_* that disagree with mpirun's).
  static std::shared_ptr<MpiProcessGroup> initialize(const ProcessLayout& layout);

 private:
  MpiProcessGroup() = default;
  // Reads rank and size from comm_ and agrees with every process of it whether they can share
  // memory.
  void attach();

  std::shared_ptr<Communicator> comm_;  // also on the list finalize_mpi frees
  int rank_ = 0, size_ = 1, local_rank_ = 0;
  bool shared_possible_ = false, shared_ = false;
};

// Ends MPI (MPI_Finalize) if it was initialized.
void finalize_mpi();
// Ends every process of the job with `code` (MPI_Abort), after this process has said why.
[[noreturn]] void abort_mpi(int code);
// The library's own version line ("Open MPI v4.1.4, ...").
std::string mpi_library_version();

}  // namespace fitbench
