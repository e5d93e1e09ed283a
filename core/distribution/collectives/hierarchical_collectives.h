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
//
// When the processes share memory (ProcessGroup::shared_floats: all on one machine), the staging
// buffers that are sent and the sums live in shared segments and the messages become reads in
// place: member 0 writes its process's contributions for the other processes to its segment, and
// after a barrier every owner adds the others' straight from their segments (its own process's
// from its members' buffers), as threads do; a gathering call's members copy the processes' sums
// from their segments into their own buffers. A barrier before every write to a segment keeps it
// until every process has read it. The sums are bitwise the same; what is saved is the copies
// through MPI's shared-memory transport and through the staging buffers.
//
// With `groups` G > 1 the object serves G independent groups of the same shape (`local` members
// of each in every process), whose members all call the same operation at once, each group on its
// own buffers: the columns of a ModelParallel mesh, each all-reducing its own gradient slices.
// Member r of group g calls group(g) with rank r; every member of every group of the process
// meets at one barrier and member 0 of group 0 (the thread that talks to the other processes)
// exchanges for each group in turn. The object's own Collectives calls are group 0's (G == 1).
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
                          CollectiveAlgorithm algorithm, int groups = 1);

  // The Collectives of group g (it shares this object, which must outlive it).
  std::unique_ptr<Collectives> group(int g);

  int size() const override { return n_; }
  CollectiveAlgorithm algorithm() const override { return algorithm_; }
  int global_rank(int rank) const override { return first_ + rank; }
  int local_size() const { return local_; }
  // Whether group 0 exchanges through shared memory (it falls back to messages for good when the
  // memory cannot be had).
  bool shares_memory() const { return groups_.front().shared_send != nullptr; }

  CollectiveStats all_reduce(int rank, std::span<const std::span<float>> buffers) override;
  using Collectives::all_reduce;
  CollectiveStats all_gather(int rank, std::span<const float> in, std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const float> in,
                                 std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats all_gather(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats broadcast(int rank, int root, std::span<float> buffer) override;
  // Member 0 of a group holds the group's staging buffers (what it sends and receives for all);
  // the others none.
  int64_t buffer_bytes(int rank) const override { return group_bytes(0, rank); }

  using Pieces = std::span<const std::span<float>>;

  // The calls of member `rank` of group g (what group(g) forwards to).
  CollectiveStats all_reduce(int g, int rank, Pieces buffers);
  CollectiveStats all_gather(int g, int rank, std::span<const float> in, std::span<float> out);
  CollectiveStats reduce_scatter(int g, int rank, std::span<const float> in, std::span<float> out);
  CollectiveStats reduce_scatter(int g, int rank, Pieces buffers);
  CollectiveStats all_gather(int g, int rank, Pieces buffers);
  CollectiveStats broadcast(int g, int rank, int root, std::span<float> buffer);
  int64_t group_bytes(int g, int rank) const;

 private:
  struct Member {
    Pieces pieces;
    std::span<const float> in;
    std::span<float> out;
    int64_t total = 0;  // the logical buffer's floats (every member of a group the same)
  };
  // One group's members and staging buffers.
  struct Group {
    std::vector<Member> members;
    CollectiveStats leader_stats;
    std::vector<float> send, recv, sums, flat;
    // With shared memory: what `send` and `sums` hold, in segments the other processes read.
    std::unique_ptr<SharedFloats> shared_send, shared_sums;
    float* sums_at = nullptr;  // where the process's sums are (sums, or its shared_sums segment)
  };
  void meet();
  // Member `rank` of group g shows `member`; between two meetings member 0 of group 0 runs
  // `leader(group)` for every group of the process, one after another.
  template <class Leader>
  CollectiveStats call(int g, int rank, const Member& member, Leader&& leader);
  // Member m's elements [begin, begin + size) of its buffer into dst.
  void read(const Group& gr, int m, int64_t begin, int64_t size, float* dst) const;
  // Member 0: every member's own chunk (from its flat `in` or from its pieces) to every process.
  void gather_members(Group& gr, bool from_in);
  // Member 0: every member's chunks to their owners, summed there in the thread backend's order
  // into the process's sums (its chunks, in rank order, contiguous: gr.sums_at), to be gathered,
  // or into each member's own chunk of its buffers (its `out`, else its pieces).
  enum class Into { kSums, kMembers };
  void reduce_owned(Group& gr, Into into);
  // Member 0: gr.flat (total floats) becomes every process's part of `part` (its chunks).
  void gather_chunks(Group& gr, const float* part, int64_t total);
  // The order in which the owner of chunk c adds the ranks' contributions.
  int contributor(int c, int i) const;
  Chunk process_span(int64_t total, int q) const;  // process q's chunks, contiguous
  // Every process waits for all, their loads and stores of the group's segments ordered around it.
  void shared_barrier(Group& gr);
  // After a gathering call: member `rank`'s result (a `total`-float buffer) into `flat` or its
  // pieces, from the processes' shared segments in place (or from gr.flat, received); without the
  // member's own chunk when `skip_own`.
  void read_gathered(const Group& gr, int rank, int64_t total, float* flat, Pieces buffers,
                     bool skip_own) const;
  // With shared memory: reserves the segments for a `total`-float buffer (`send_floats` of
  // staging), then waits until every process has read what the others last wrote to theirs. When
  // the memory cannot be had, the group goes on through MPI's messages. Whether it shares memory.
  bool share(Group& gr, int64_t total, int64_t send_floats);
  int64_t most_sums(int64_t total) const;  // the largest process's share of a `total` buffer
  // Room for this process's sums of a `total`-float buffer (the same size on every process when
  // shared); sets gr.sums_at.
  float* reserve_sums(Group& gr, int64_t total);
  CollectiveStats shared_stats(const CollectiveStats& leader) const;

  std::shared_ptr<ProcessGroup> group_;
  const int local_, first_, n_, processes_;
  const CollectiveAlgorithm algorithm_;
  SpinBarrier barrier_;
  std::vector<Group> groups_;
  std::vector<int> send_counts_, send_displs_, recv_counts_, recv_displs_;
  std::vector<const float*> sources_;  // a sum's contributions, in the order they are added
};

}  // namespace fitbench
