// Naive algorithms of the shared-memory backend (thread_collectives.h): everything goes through
// one rank. All-reduce: rank 0 sums every rank's buffer in rank order ((b0 + b1) + b2) + ... into
// its staging buffer, then every rank copies the sum. Two barriers per call: "every input is
// ready" and "the result is ready".
#include <algorithm>
#include <cstring>

#include "core/base/tensor.h"
#include "core/distribution/collectives/thread_collectives.h"

namespace fitbench {
namespace {

// What a naive reduce-scatter of `total` floats costs rank r, whose chunk holds `own`: rank 0
// receives every other rank's whole buffer and sends each its chunk of the sum.
void scatter_stats(int r, int n, int64_t total, int64_t own, CollectiveStats& stats) {
  if (r == 0) {
    stats.bytes_received = (n - 1) * total * kFloatBytes;
    stats.bytes_sent = (total - own) * kFloatBytes;
    stats.messages_sent = n - 1;
  } else {
    stats.bytes_sent = total * kFloatBytes;
    stats.bytes_received = own * kFloatBytes;
    stats.messages_sent = 1;
  }
}

// What a naive all-gather costs rank r: rank 0 receives every other rank's chunk and sends the
// whole buffer to each.
void gather_stats(int r, int n, int64_t total, int64_t own, CollectiveStats& stats) {
  if (r == 0) {
    stats.bytes_received = (total - own) * kFloatBytes;
    stats.bytes_sent = (n - 1) * total * kFloatBytes;
    stats.messages_sent = n - 1;
  } else {
    stats.bytes_sent = own * kFloatBytes;
    stats.bytes_received = total * kFloatBytes;
    stats.messages_sent = 1;
  }
}
}  // namespace

int ThreadCollectives::naive_sum(int r, Pieces mine, int64_t total, CollectiveStats& stats) {
  ranks_[r].pieces = mine;
  const int p = begin_call(r, r == 0 ? total : 0);
  first_barrier(r, p, stats);
  if (r == 0) {
    float* sum = staging(0, p);
    pieces_to_flat(mine, sum, 0, total);
    for (int s = 1; s < n_; ++s) add_pieces_to_flat(ranks_[s].pieces, sum, 0, total);
  }
  barrier_.arrive_and_wait();
  return p;
}

void ThreadCollectives::naive_all_reduce(int r, Pieces mine, int64_t total,
                                         CollectiveStats& stats) {
  const int n = n_;
  const int p = naive_sum(r, mine, total, stats);
  flat_to_pieces(staging(0, p), mine, 0, total);
  const int64_t others = n - 1;
  stats.bytes_sent = (r == 0 ? others : 1) * total * kFloatBytes;
  stats.bytes_received = stats.bytes_sent;
  stats.messages_sent = r == 0 ? n - 1 : 1;
}

void ThreadCollectives::naive_all_gather(int r, std::span<const float> in, std::span<float> out,
                                         CollectiveStats& stats) {
  const int n = n_;
  const int64_t total = static_cast<int64_t>(out.size());
  ranks_[r].in = in.data();
  const int p = begin_call(r, r == 0 ? total : 0);
  first_barrier(r, p, stats);
  if (r == 0) {
    float* all = staging(0, p);
    for (int s = 0; s < n; ++s) {
      const Chunk c = chunk_of(total, n, s);
      copy_floats(all + c.begin, ranks_[s].in, c.size);
    }
  }
  barrier_.arrive_and_wait();
  copy_floats(out.data(), staging(0, p), total);
  gather_stats(r, n, total, chunk_of(total, n, r).size, stats);
}

void ThreadCollectives::naive_reduce_scatter(int r, std::span<const float> in, std::span<float> out,
                                             CollectiveStats& stats) {
  const int n = n_;
  const int64_t total = static_cast<int64_t>(in.size());
  ranks_[r].in = in.data();
  const int p = begin_call(r, r == 0 ? total : 0);
  first_barrier(r, p, stats);
  if (r == 0) {
    float* sum = staging(0, p);
    std::copy(in.begin(), in.end(), sum);
    for (int s = 1; s < n; ++s) {
      const float* other = ranks_[s].in;
      for (int64_t i = 0; i < total; ++i) sum[i] += other[i];
    }
  }
  barrier_.arrive_and_wait();
  const Chunk c = chunk_of(total, n, r);
  copy_floats(out.data(), staging(0, p) + c.begin, c.size);
  scatter_stats(r, n, total, c.size, stats);
}

void ThreadCollectives::naive_reduce_scatter(int r, Pieces mine, int64_t total,
                                             CollectiveStats& stats) {
  const int n = n_;
  const int p = naive_sum(r, mine, total, stats);  // the same sums as naive_all_reduce
  const Chunk c = chunk_of(total, n, r);
  flat_to_pieces(staging(0, p) + c.begin, mine, c.begin, c.begin + c.size);
  scatter_stats(r, n, total, c.size, stats);
}

void ThreadCollectives::naive_all_gather(int r, Pieces mine, int64_t total,
                                         CollectiveStats& stats) {
  const int n = n_;
  ranks_[r].pieces = mine;
  const int p = begin_call(r, r == 0 ? total : 0);
  first_barrier(r, p, stats);
  if (r == 0) {
    float* all = staging(0, p);
    for (int s = 0; s < n; ++s) {
      const Chunk c = chunk_of(total, n, s);
      pieces_to_flat(ranks_[s].pieces, all + c.begin, c.begin, c.begin + c.size);
    }
  }
  barrier_.arrive_and_wait();
  const Chunk own = chunk_of(total, n, r);
  flat_to_pieces(staging(0, p), mine, 0, own.begin);
  flat_to_pieces(staging(0, p) + own.begin + own.size, mine, own.begin + own.size, total);
  gather_stats(r, n, total, own.size, stats);
}

void ThreadCollectives::naive_broadcast(int r, int root, std::span<float> buffer,
                                        CollectiveStats& stats) {
  const int64_t size = static_cast<int64_t>(buffer.size());
  const int p = begin_call(r, r == root ? size : 0);
  if (r == root) copy_floats(staging(r, p), buffer.data(), size);
  first_barrier(r, p, stats);
  if (r != root) {
    copy_floats(buffer.data(), staging(root, p), size);
    stats.bytes_received = size * kFloatBytes;
  } else {
    stats.bytes_sent = (n_ - 1) * size * kFloatBytes;
    stats.messages_sent = n_ - 1;
  }
}

}  // namespace fitbench
