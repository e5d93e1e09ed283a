// The shared-memory backend of Collectives (collectives.h) for ranks that are threads of one
// process. Internal to core/distribution: use make_thread_collectives().
//
// Exchange rules, which make every call need no barrier after its last step: a rank reads another
// rank's buffers only between two barriers of the same call, except in the last step, where it
// reads the sender's staging buffer. Each rank has two staging buffers used on alternate calls,
// so a rank refills one only after every other rank has entered the next call (and so finished
// reading it). Ring all_reduce on N ranks takes 2(N-1) barriers, naive all_reduce 2.
#pragma once

#include <chrono>
#include <cstring>
#include <vector>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/threads/device_pool.h"

namespace fitbench {

class ThreadCollectives final : public Collectives {
 public:
  ThreadCollectives(int ranks, CollectiveAlgorithm algorithm, const LinkModel& link);

  int size() const override { return n_; }
  CollectiveAlgorithm algorithm() const override { return algorithm_; }

  CollectiveStats all_reduce(int rank, std::span<const std::span<float>> buffers) override;
  using Collectives::all_reduce;
  CollectiveStats all_gather(int rank, std::span<const float> in, std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const float> in,
                                 std::span<float> out) override;
  CollectiveStats reduce_scatter(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats all_gather(int rank, std::span<const std::span<float>> buffers) override;
  CollectiveStats broadcast(int rank, int root, std::span<float> buffer) override;
  int64_t buffer_bytes(int rank) const override;

  using Pieces = std::span<const std::span<float>>;

 private:
  using Clock = std::chrono::steady_clock;
  // What a rank shows the others during a call.
  struct alignas(64) Rank {
    Pieces pieces;              // all_reduce's buffers
    const float* in = nullptr;  // reduce_scatter / all_gather input, broadcast buffer
    float* out = nullptr;       // all_gather output
    std::vector<float> staging[2];
    uint64_t calls = 0;  // this rank's calls so far; staging[(calls - 1) % 2] is this call's
    Clock::time_point arrived[2];      // when this rank reached the first barrier, per parity
    Clock::time_point exchange_start;  // when the last rank reached this call's first barrier
  };
  // Starts a call and gives its parity (which staging buffer every rank uses in this call); this
  // rank's staging buffer gets room for `elements` floats.
  int begin_call(int rank, int64_t elements);
  // A rank's staging buffer for the call of this parity (a rank's own count of calls is the same
  // on every rank, so each rank derives the parity from its own).
  float* staging(int rank, int parity) { return ranks_[rank].staging[parity].data(); }
  // The first barrier of a call: measures how long this rank waited for the others and notes
  // when the exchange could start (the last rank's arrival).
  void first_barrier(int rank, int parity, CollectiveStats& stats);
  // Charges the link model: waits until the exchange's modeled duration has passed since the
  // last rank arrived, so every rank ends the call at the same time.
  void finish(int rank, CollectiveOp op, int64_t elements, CollectiveStats& stats);

  void ring_all_reduce(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  void naive_all_reduce(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  // Starts a naive call over pieces: rank 0 sums every rank's pieces in rank order into its
  // staging buffer of this call's parity, which it returns once every rank can read the sum.
  int naive_sum(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  // The reduce-scatter steps of ring all_reduce (after the first barrier): this rank's chunk of
  // `mine` ends as the sum, read from the left neighbour's pieces.
  void ring_reduce_steps(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  // In-place piecewise reduce_scatter / all_gather. The ring versions read the left
  // neighbour's pieces in every step and end with a barrier, so that no rank returns (and
  // reuses its buffers) while another still reads them; the naive ones go through rank 0's
  // staging buffer.
  void ring_reduce_scatter(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  void naive_reduce_scatter(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  void ring_all_gather(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  void naive_all_gather(int rank, Pieces mine, int64_t total, CollectiveStats& stats);
  void ring_all_gather(int rank, std::span<const float> in, std::span<float> out,
                       CollectiveStats& stats);
  void naive_all_gather(int rank, std::span<const float> in, std::span<float> out,
                        CollectiveStats& stats);
  void ring_reduce_scatter(int rank, std::span<const float> in, std::span<float> out,
                           CollectiveStats& stats);
  void naive_reduce_scatter(int rank, std::span<const float> in, std::span<float> out,
                            CollectiveStats& stats);
  void ring_broadcast(int rank, int root, std::span<float> buffer, CollectiveStats& stats);
  void naive_broadcast(int rank, int root, std::span<float> buffer, CollectiveStats& stats);

  const int n_;
  const CollectiveAlgorithm algorithm_;
  const LinkModel link_;
  const bool yield_;
  SpinBarrier barrier_;
  std::vector<Rank> ranks_;
};

// memcpy of n floats (n may be 0, with null pointers).
inline void copy_floats(float* dst, const float* src, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
}

// Piecewise helpers over a logical buffer made of pieces (identical piece sizes on every rank).
// a[begin, end) += b[begin, end)
void add_pieces(ThreadCollectives::Pieces a, ThreadCollectives::Pieces b, int64_t begin,
                int64_t end);
// a[begin, end) = b[begin, end)
void copy_pieces(ThreadCollectives::Pieces a, ThreadCollectives::Pieces b, int64_t begin,
                 int64_t end);
// Flat buffers hold the range [begin, end) from flat[0].
// flat = a[begin, end)
void pieces_to_flat(ThreadCollectives::Pieces a, float* flat, int64_t begin, int64_t end);
// a[begin, end) = flat
void flat_to_pieces(const float* flat, ThreadCollectives::Pieces a, int64_t begin, int64_t end);
// flat += a[begin, end)
void add_pieces_to_flat(ThreadCollectives::Pieces a, float* flat, int64_t begin, int64_t end);

}  // namespace fitbench
