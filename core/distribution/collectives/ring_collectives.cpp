// Ring algorithms of the shared-memory backend (thread_collectives.h). Rank r receives from its
// left neighbour r-1 and sends to r+1. Reduce-scatter: at step k (0..N-2) rank r adds chunk
// r-2-k received from the left to its own (own + received), so after N-1 steps rank r holds the
// complete sum of chunk r, added in the order r+1, r+2, ..., r (mod N). All-gather: at step k rank
// r copies chunk r-1-k from the left. Chunks are chunk_of(size, N, c) (sizes differ by at most
// one). Ring all-reduce: Patarasuk and Yuan, "Bandwidth optimal all-reduce algorithms for
// clusters of workstations", JPDC 69(2), 2009.
#include <algorithm>
#include <cstring>

#include "core/base/tensor.h"
#include "core/distribution/collectives/thread_collectives.h"

namespace fitbench {

void ThreadCollectives::ring_all_reduce(int r, Pieces mine, int64_t total, CollectiveStats& stats) {
  const int n = n_, l = wrap_rank(r - 1, n);
  ranks_[r].pieces = mine;
  const int p = begin_call(r, (total + n - 1) / n);
  // The chunk this rank sends in the last step: staged, because the receiver reads it after this
  // rank may have returned and reused its buffers.
  const int last_sent = wrap_rank(r - (n - 2), n);
  auto stage_last = [&] {
    const Chunk c = chunk_of(total, n, last_sent);
    pieces_to_flat(mine, staging(r, p), c.begin, c.begin + c.size);
  };
  first_barrier(r, p, stats);
  ring_reduce_steps(r, mine, total, stats);
  if (n == 2) stage_last();
  for (int k = 0; k < n - 1; ++k) {
    barrier_.arrive_and_wait();
    const Chunk c = chunk_of(total, n, wrap_rank(r - 1 - k, n));
    if (k == n - 2) {
      flat_to_pieces(staging(l, p), mine, c.begin, c.begin + c.size);
    } else {
      copy_pieces(mine, ranks_[l].pieces, c.begin, c.begin + c.size);
      if (k == n - 3) stage_last();
    }
    stats.bytes_received += c.size * kFloatBytes;
    stats.bytes_sent += chunk_of(total, n, wrap_rank(r - k, n)).size * kFloatBytes;
  }
  stats.messages_sent = 2 * (n - 1);
}

void ThreadCollectives::ring_reduce_steps(int r, Pieces mine, int64_t total,
                                          CollectiveStats& stats) {
  const int n = n_, l = wrap_rank(r - 1, n);
  for (int k = 0; k < n - 1; ++k) {
    if (k > 0) barrier_.arrive_and_wait();
    const Chunk c = chunk_of(total, n, wrap_rank(r - 2 - k, n));
    add_pieces(mine, ranks_[l].pieces, c.begin, c.begin + c.size);
    stats.bytes_received += c.size * kFloatBytes;
    stats.bytes_sent += chunk_of(total, n, wrap_rank(r - 1 - k, n)).size * kFloatBytes;
  }
}

void ThreadCollectives::ring_reduce_scatter(int r, Pieces mine, int64_t total,
                                            CollectiveStats& stats) {
  ranks_[r].pieces = mine;
  const int p = begin_call(r, 0);
  first_barrier(r, p, stats);
  ring_reduce_steps(r, mine, total, stats);
  barrier_.arrive_and_wait();  // the left neighbour may reuse its pieces once this returns
  stats.messages_sent = n_ - 1;
}

void ThreadCollectives::ring_all_gather(int r, Pieces mine, int64_t total, CollectiveStats& stats) {
  const int n = n_, l = wrap_rank(r - 1, n);
  ranks_[r].pieces = mine;
  const int p = begin_call(r, 0);
  first_barrier(r, p, stats);
  for (int k = 0; k < n - 1; ++k) {
    if (k > 0) barrier_.arrive_and_wait();
    const Chunk c = chunk_of(total, n, wrap_rank(r - 1 - k, n));
    copy_pieces(mine, ranks_[l].pieces, c.begin, c.begin + c.size);
    stats.bytes_received += c.size * kFloatBytes;
    stats.bytes_sent += chunk_of(total, n, wrap_rank(r - k, n)).size * kFloatBytes;
  }
  barrier_.arrive_and_wait();  // as in ring_reduce_scatter
  stats.messages_sent = n - 1;
}

void ThreadCollectives::ring_all_gather(int r, std::span<const float> in, std::span<float> out,
                                        CollectiveStats& stats) {
  const int n = n_, l = wrap_rank(r - 1, n);
  const int64_t total = static_cast<int64_t>(out.size());
  const int p = begin_call(r, (total + n - 1) / n);
  ranks_[r].out = out.data();
  std::copy(in.begin(), in.end(), out.begin() + chunk_of(total, n, r).begin);
  // The chunk sent in the last step, staged (see ring_all_reduce).
  auto stage = [&](const Chunk& c) { copy_floats(staging(r, p), out.data() + c.begin, c.size); };
  if (n == 2) stage(chunk_of(total, n, r));
  first_barrier(r, p, stats);
  for (int k = 0; k < n - 1; ++k) {
    if (k > 0) barrier_.arrive_and_wait();
    const Chunk c = chunk_of(total, n, wrap_rank(r - 1 - k, n));
    const float* src = k == n - 2 ? staging(l, p) : ranks_[l].out + c.begin;
    copy_floats(out.data() + c.begin, src, c.size);
    if (k == n - 3) stage(c);
    stats.bytes_received += c.size * kFloatBytes;
    stats.bytes_sent += chunk_of(total, n, wrap_rank(r - k, n)).size * kFloatBytes;
  }
  stats.messages_sent = n - 1;
}

void ThreadCollectives::ring_reduce_scatter(int r, std::span<const float> in, std::span<float> out,
                                            CollectiveStats& stats) {
  const int n = n_, l = wrap_rank(r - 1, n);
  const int64_t total = static_cast<int64_t>(in.size());
  // The partial sums live in staging buffers, which every step reads from the left neighbour.
  const int p = begin_call(r, total);
  float* mine = staging(r, p);
  std::copy(in.begin(), in.end(), mine);
  first_barrier(r, p, stats);
  for (int k = 0; k < n - 1; ++k) {
    if (k > 0) barrier_.arrive_and_wait();
    const Chunk c = chunk_of(total, n, wrap_rank(r - 2 - k, n));
    const float* left = staging(l, p) + c.begin;
    float* own = mine + c.begin;
    if (k == n - 2) {
      for (int64_t i = 0; i < c.size; ++i) out[i] = own[i] + left[i];
    } else {
      for (int64_t i = 0; i < c.size; ++i) own[i] += left[i];
    }
    stats.bytes_received += c.size * kFloatBytes;
    stats.bytes_sent += chunk_of(total, n, wrap_rank(r - 1 - k, n)).size * kFloatBytes;
  }
  stats.messages_sent = n - 1;
}

void ThreadCollectives::ring_broadcast(int r, int root, std::span<float> buffer,
                                       CollectiveStats& stats) {
  // A chain root, root+1, ..., root+N-1: at step k the rank at position k+1 copies the buffer
  // from the rank before it (from its staging buffer) and stages it for the next.
  const int n = n_;
  const int64_t size = static_cast<int64_t>(buffer.size());
  const int pos = wrap_rank(r - root, n);
  const int p = begin_call(r, pos < n - 1 ? size : 0);
  if (pos == 0) copy_floats(staging(r, p), buffer.data(), size);
  first_barrier(r, p, stats);
  for (int k = 0; k < n - 1; ++k) {
    if (k > 0) barrier_.arrive_and_wait();
    if (pos != k + 1) continue;
    copy_floats(buffer.data(), staging(wrap_rank(r - 1, n), p), size);
    if (pos < n - 1) copy_floats(staging(r, p), buffer.data(), size);
  }
  if (pos > 0) stats.bytes_received = size * kFloatBytes;
  if (pos < n - 1) {
    stats.bytes_sent = size * kFloatBytes;
    stats.messages_sent = 1;
  }
}

}  // namespace fitbench
