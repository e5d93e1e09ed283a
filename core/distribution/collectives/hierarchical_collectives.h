// Collectives over the devices of several processes (a ProcessGroup, e.g. Open MPI), each process
// hosting `local` devices on its own threads: process p hosts global ranks p*local .. p*local +
// local - 1. Members call with their index in this process (0 .. local-1; member 0 on the thread
// that talks to the other processes, the one that called MPI_Init_thread), size() is the global
// rank count. Inside a process the members meet at a barrier and member 0 exchanges for all of
// them; across processes a reduction is an all-to-all of chunks (chunk c of the buffer, as
// chunk_of(total, size(), c), goes to the process of rank c), a sum on the owner, and an
// all-gather of the sums: the bytes of a ring all-reduce, in two calls. The owner adds the ranks'
// contributions in the order the thread backend adds them (ring: c+1, c+2, ..., c mod N; naive:
// 0, 1, ..., N-1), so the sums are bitwise those of make_thread_collectives(size(), algorithm).
// The link model is not applied: the processes' real interconnect is the cost. Every call
// gathers a logical buffer into one message, so many small gradients travel as one.
#pragma once

#include <memory>
#include <vector>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/processes/process_group.h"
#include "core/distribution/threads/device_pool.h"

namespace fitbench {

class HierarchicalCollectives final : public Collectives {
 public:
  HierarchicalCollectives(std::shared_ptr<ProcessGroup> group, int local,
                          CollectiveAlgorithm algorithm);

  int size() const override { return n_; }
  CollectiveAlgorithm algorithm() const override { return algorithm_; }
  int global_rank(int rank) const override { return first_ + rank; }
  int local_size() const { return local_; }

  CollectiveStats all_reduce(int rank, std::span<const std::span<float>> buffers) override;
  using Collectives::all_reduce;
  CollectiveStats all_gather(int rank, std::span<const float> in, std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const float> in,
                                 std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats all_gather(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats broadcast(int rank, int root, std::span<float> buffer) override;
  // Member 0 holds the process's staging buffers (what it sends and receives for all); the
  // others none.
  int64_t buffer_bytes(int rank) const override;

  using Pieces = std::span<const std::span<float>>;

 private:
  struct Member {
    Pieces pieces;
    std::span<const float> in;
    std::span<float> out;
  };
  void meet();
  // Member `rank` shows `member`; between two meetings member 0 runs `leader` for the process.
  template <class Leader>
  CollectiveStats call(int rank, const Member& member, Leader&& leader);
  // Member m's elements [begin, begin + size) of its buffer into dst.
  void read(int m, int64_t begin, int64_t size, float* dst) const;
  // Member `rank`'s chunk of the sums reduce_owned left.
  const float* own_sum(int64_t total, int rank) const;
  // Member 0: every member's own chunk (from its flat `in` or from its pieces) to every process.
  void gather_members(int64_t total, bool from_in);
  // Member 0: every member's chunks to their owners, summed there in the thread backend's order
  // into sums_ (this process's chunks, in rank order, contiguous). Returns the bytes sent.
  void reduce_owned(int64_t total, CollectiveStats& stats);
  // Member 0: flat_ (total floats) becomes every process's part of `part` (its chunks).
  void gather_chunks(const float* part, int64_t total, CollectiveStats& stats);
  // The order in which the owner of chunk c adds the ranks' contributions.
  int contributor(int c, int i) const;
  Chunk process_span(int64_t total, int q) const;  // process q's chunks, contiguous
  CollectiveStats shared_stats(const CollectiveStats& leader) const;

  std::shared_ptr<ProcessGroup> group_;
  const int local_, first_, n_, processes_;
  const CollectiveAlgorithm algorithm_;
  SpinBarrier barrier_;
  std::vector<Member> members_;
  CollectiveStats leader_stats_;
  std::vector<float> send_, recv_, sums_, flat_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
};

}  // namespace fitbench
