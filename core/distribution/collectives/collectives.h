// Collective operations over N participants (ranks), each on its own thread with its own float
// buffers: all_reduce, all_gather, reduce_scatter and broadcast, with two algorithms (naive: via
// rank 0; ring: N chunks passed around the ring). Every rank calls the same operations in the same
// order with its rank; a call returns when this rank's result is in its own buffers. The interface
// assumes nothing about shared memory (a multi-process backend could implement it); the backend
// here exchanges through memory shared by threads. One object per group of ranks; each rank uses it
// from one thread at a time.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

namespace fitbench {

// Rank x modulo n, for a ring's neighbours (x may be negative).
inline int wrap_rank(int x, int n) { return ((x % n) + n) % n; }

// The floats in a call's buffers together.
inline int64_t total_floats(std::span<const std::span<float>> buffers) {
  int64_t total = 0;
  for (const auto& b : buffers) total += static_cast<int64_t>(b.size());
  return total;
}

enum class CollectiveAlgorithm : uint8_t {
  kRing,   // reduce-scatter then all-gather in N chunks, each rank talking to its neighbours
  kNaive,  // everything goes through rank 0 (reduce to rank 0, then broadcast)
};

// "ring" or "naive".
const char* algorithm_name(CollectiveAlgorithm algorithm);
// Parses "ring" or "naive"; throws InputError(place, ...) for anything else.
CollectiveAlgorithm parse_algorithm(const std::string& name, const std::string& place);

// The simulated interconnect: each message costs latency_us + bytes / bandwidth. Zero latency and
// zero bandwidth (unlimited) cost nothing: the exchange takes what the shared memory takes.
struct LinkModel {
  double latency_us = 0.0;  // per message, microseconds
  double gbps = 0.0;        // bandwidth per link in GB/s (10^9 bytes per second); 0: unlimited
  bool active() const { return latency_us > 0.0 || gbps > 0.0; }
};

// What one call cost one rank.
struct CollectiveStats {
  int64_t bytes_sent = 0;      // by this rank
  int64_t bytes_received = 0;  // by this rank
  int messages_sent = 0;       // by this rank
  double wait_us = 0.0;        // waiting for the other ranks to arrive (stragglers)
  double link_us = 0.0;        // modeled link time charged (waited) by this call
};

// The modeled duration of one collective under `link` (its critical path), in microseconds, for an
// operation that exchanges `elements` floats in total (the whole buffer of all_reduce /
// all_gather / reduce_scatter / broadcast):
//   ring all_reduce: 2(N-1) steps, each one message of ceil(elements/N) floats per rank;
//   ring all_gather / reduce_scatter: N-1 such steps; ring broadcast: N-1 hops of the buffer;
//   naive all_reduce: rank 0 receives N-1 full buffers and sends N-1;
//   naive all_gather / reduce_scatter: N-1 chunks in and N-1 (full / chunk) out at rank 0;
//   naive broadcast: rank 0 sends N-1 full buffers.
enum class CollectiveOp : uint8_t { kAllReduce, kAllGather, kReduceScatter, kBroadcast };
// "all_reduce", "all_gather", "reduce_scatter", "broadcast".
const char* op_name(CollectiveOp op);
double modeled_link_us(CollectiveOp op, CollectiveAlgorithm algorithm, int ranks, int64_t elements,
                       const LinkModel& link);

// Chunk c of a buffer of `size` elements split over n ranks: [size*c/n, size*(c+1)/n), so chunk
// sizes differ by at most one.
struct Chunk {
  int64_t begin = 0;
  int64_t size = 0;
};
Chunk chunk_of(int64_t size, int n, int c);

class Collectives {
 public:
  virtual ~Collectives() = default;

  virtual int size() const = 0;
  virtual CollectiveAlgorithm algorithm() const = 0;
  // The rank among all size() ranks of the member that calls with `rank`. The same for a backend
  // whose members are all in this process; a multi-process backend is called with the member's
  // index in this process and answers its global rank (chunks are numbered by global rank).
  virtual int global_rank(int rank) const { return rank; }

  // Every rank's buffers become the element-wise sum over ranks. `buffers` is one logical buffer
  // made of several pieces (e.g. one per variable's gradient); every rank passes pieces of the
  // same sizes. The order of additions is fixed by the algorithm and the rank count, so every
  // rank gets bitwise identical sums and a rerun gives the same bits.
  virtual CollectiveStats all_reduce(int rank, std::span<const std::span<float>> buffers) = 0;
  CollectiveStats all_reduce(int rank, std::span<float> buffer);

  // out (the same size on every rank) becomes the concatenation of every rank's `in`; rank r's
  // `in` holds chunk_of(out.size(), N, r).size elements.
  virtual CollectiveStats all_gather(int rank, std::span<const float> in, std::span<float> out) = 0;

  // out (chunk_of(in.size(), N, rank).size elements) becomes the sum over ranks of their `in`'s
  // chunk number `rank`.
  virtual CollectiveStats reduce_scatter(int rank, std::span<const float> in,
                                         std::span<float> out) = 0;

  // In place over a logical buffer of pieces (as all_reduce's): afterwards chunk_of(total, N,
  // rank) of this rank's buffers holds the element-wise sum over ranks, the same bits all_reduce
  // would give there; the rest of its buffers is left unspecified. With all_gather(pieces) after
  // it, this is all_reduce split in two, so that a rank can work on its chunk in between.
  virtual CollectiveStats reduce_scatter(int rank, std::span<const std::span<float>> buffers) = 0;
  // In place: afterwards chunk c of every rank's buffers is rank c's chunk c.
  virtual CollectiveStats all_gather(int rank, std::span<const std::span<float>> buffers) = 0;

  // Every rank's buffer becomes root's buffer.
  virtual CollectiveStats broadcast(int rank, int root, std::span<float> buffer) = 0;

  // The bytes of the buffers this backend holds for `rank` (its staging buffers), as allocated.
  virtual int64_t buffer_bytes(int rank) const = 0;
};

// The collectives of `ranks` threads of one process, exchanging through shared memory, with the
// link model's cost charged as real waiting time.
std::unique_ptr<Collectives> make_thread_collectives(int ranks, CollectiveAlgorithm algorithm,
                                                     const LinkModel& link = {});

}  // namespace fitbench
