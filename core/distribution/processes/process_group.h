// The processes of a multi-process run (mpirun, or Keras's KERAS_DISTRIBUTION_* settings): which
// one this is, how many there are, and the few exchanges between them that the MPI-aware parts of
// core need (an implementation lives outside core, in mpi/). A run in one process has none: every
// function here then answers "one process". The current group is set once by the front end before
// any run is planned and read by apply_distribution; ProcessGroup calls come from one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fitbench {

// Where this process stands, as jax.distributed.initialize detects it: KERAS_DISTRIBUTION_*
// where given, else Open MPI's OMPI_COMM_WORLD_* (set by mpirun), else one process.
struct ProcessLayout {
  int rank = 0;        // this process's index, 0 .. size-1
  int size = 1;        // the number of processes
  int local_rank = 0;  // this process's index among those on its machine
  // Which settings gave the layout: "KERAS_DISTRIBUTION_NUM_PROCESSES", "OMPI_COMM_WORLD_SIZE",
  // or "" for one process.
  std::string source;
  std::vector<std::string> job_addresses;  // KERAS_DISTRIBUTION_JOB_ADDRESSES, comma-separated
  bool multi() const { return size > 1; }
};

// Reads the layout from `env` (getenv in production). Throws InputError(variable, ...) for a
// value that is not a whole number, a rank outside 0 .. size-1, or a JOB_ADDRESSES list whose
// length is not the process count.
ProcessLayout detect_process_layout(const std::function<const char*(const char*)>& env);

// Memory that every process of a group maps: a segment per process, which the others read in
// place (MPI-3 shared windows, when every process runs on one machine). Only the thread that talks
// to the other processes uses it.
class SharedFloats {
 public:
  virtual ~SharedFloats() = default;
  // This process's segment, at least `floats` long. Collective: every process calls it at the same
  // point with the same `floats`; growing reallocates every segment (their contents are lost).
  // Null on every process when the memory could not be shared (a full /dev/shm, a limit): the
  // handle is then of no further use.
  virtual float* reserve(int64_t floats) = 0;
  // Process q's segment (this process's too), valid until a reserve grows it.
  virtual const float* segment(int q) const = 0;
  virtual int64_t capacity() const = 0;  // floats per segment reserved so far
  // Orders this process's loads and stores of the segments around a ProcessGroup::barrier
  // (MPI_Win_sync): call it before and after the barrier, and what each process wrote before the
  // barrier is what the others read after it.
  virtual void sync() = 0;
};

// The exchanges between processes. Every process calls the same operations in the same order;
// each call returns when this process's result is in place. Counts are in floats unless named
// bytes; `counts[q]` / `displs[q]` are per process.
class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual int local_rank() const = 0;

  // Every process sends send_counts[q] floats from send + send_displs[q] to process q and
  // receives recv_counts[q] floats from q at recv + recv_displs[q] (MPI_Alltoallv).
  virtual void all_to_all(const float* send, const int* send_counts, const int* send_displs,
                          float* recv, const int* recv_counts, const int* recv_displs) = 0;
  // recv + displs[q] gets process q's counts[q] floats; this process sends counts[rank()] from
  // `send` (MPI_Allgatherv).
  virtual void all_gather(const float* send, float* recv, const int* counts, const int* displs) = 0;
  // `count` floats at `buffer` become root's (MPI_Bcast).
  virtual void broadcast(float* buffer, int64_t count, int root) = 0;
  // recv (size() * bytes) gets every process's `bytes` bytes in rank order (MPI_Allgather).
  virtual void all_gather_bytes(const void* send, int64_t bytes, void* recv) = 0;
  // Every process waits for all (MPI_Barrier).
  virtual void barrier() = 0;
  // Memory the processes share, or null when they do not all run on one machine (or sharing was
  // turned off: FITBENCH_SHM_DISABLE=1). Every process gets the same answer; every process creates
  // its handles in the same order, so that the k-th handle of each is the same memory.
  virtual std::unique_ptr<SharedFloats> shared_floats() { return nullptr; }
  // The processes that pass the same `color` as this one, as a group of their own ranked by `key`
  // (ties by rank here): a mesh axis's communicator (MPI_Comm_split). Collective: every process
  // of this group calls it at the same point. The new group's exchanges involve only its
  // processes, so groups of different colors exchange at once; it shares memory when its own
  // processes all run on one machine and this group shares memory now. Every process of the new
  // group ends it at the same point too (its end frees the communicator).
  virtual std::shared_ptr<ProcessGroup> split(int color, int key) = 0;
};

// What every process of a run must agree on, by name ("the experiment file seed.json", "the
// options", "the fitbench build"), each with its content (hashed, never sent).
struct StartPart {
  std::string name;
  std::string content;
};
// Every process hashes its parts (FNV-1a, 64 bits) and gathers every other's: "" when all agree,
// else one sentence, the same on every process, naming the ranks that differ from rank 0 and in
// what ("rank 1 differs from rank 0 in the experiment file seed.json and the options; every
// process must run the same fitbench build on the same experiment with the same options").
// Every process calls it with the same number of parts.
std::string start_mismatch(ProcessGroup& group, const std::vector<StartPart>& parts);
uint64_t fnv1a(const std::string& bytes, uint64_t seed = 14695981039346656037ull);

// The group runs use (null: one process). Set by the front end before planning a run.
void set_process_group(std::shared_ptr<ProcessGroup> group);
std::shared_ptr<ProcessGroup> process_group();

}  // namespace fitbench
