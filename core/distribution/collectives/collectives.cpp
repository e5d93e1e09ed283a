// What every Collectives backend shares (names, chunking, the link model's cost) and the
// shared-memory backend's bookkeeping; its algorithms are in ring_collectives.cpp and
// naive_collectives.cpp.
#include "core/distribution/collectives/collectives.h"

#include <algorithm>
#include <cassert>
#include <cstring>

#include "core/base/error.h"
#include "core/distribution/collectives/collective_algorithms.h"
#include "core/distribution/collectives/thread_collectives.h"

namespace fitbench {

const char* algorithm_name(CollectiveAlgorithm algorithm) {
  for (const CollectiveAlgorithmInfo& a : collective_algorithms())
    if (a.algorithm == algorithm) return a.name.data();  // the registry's literals end in '\0'
  return "";
}

CollectiveAlgorithm parse_algorithm(const std::string& name, const std::string& place) {
  if (const CollectiveAlgorithmInfo* a = find_collective_algorithm(name)) return a->algorithm;
  throw InputError(place, "must be " + collective_algorithm_choices() + ", got \"" + name + "\"");
}

Chunk chunk_of(int64_t size, int n, int c) {
  const int64_t begin = size * c / n, end = size * (c + 1) / n;
  return {begin, end - begin};
}

const char* op_name(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::kAllReduce:
      return "all_reduce";
    case CollectiveOp::kAllGather:
      return "all_gather";
    case CollectiveOp::kReduceScatter:
      return "reduce_scatter";
    case CollectiveOp::kBroadcast:
      return "broadcast";
  }
  return "?";
}

double modeled_link_us(CollectiveOp op, CollectiveAlgorithm algorithm, int ranks, int64_t elements,
                       const LinkModel& link) {
  if (ranks <= 1 || !link.active()) return 0.0;
  // One message of `floats` floats: latency plus its bytes at the link's bandwidth.
  auto message = [&](int64_t floats) {
    const double bytes = static_cast<double>(floats) * sizeof(float);
    return link.latency_us + (link.gbps > 0.0 ? bytes / (link.gbps * 1e3) : 0.0);
  };
  const double hops = ranks - 1;
  const int64_t chunk = (elements + ranks - 1) / ranks;
  if (algorithm == CollectiveAlgorithm::kRing) {
    switch (op) {
      case CollectiveOp::kAllReduce:
        return 2.0 * hops * message(chunk);
      case CollectiveOp::kAllGather:
      case CollectiveOp::kReduceScatter:
        return hops * message(chunk);
      case CollectiveOp::kBroadcast:
        return hops * message(elements);
    }
  }
  switch (op) {
    case CollectiveOp::kAllReduce:
      return 2.0 * hops * message(elements);
    case CollectiveOp::kAllGather:
    case CollectiveOp::kReduceScatter:
      return hops * (message(chunk) + message(elements));
    case CollectiveOp::kBroadcast:
      return hops * message(elements);
  }
  return 0.0;
}

CollectiveStats Collectives::all_reduce(int rank, std::span<float> buffer) {
  const std::span<float> pieces[1] = {buffer};
  return all_reduce(rank, std::span<const std::span<float>>(pieces));
}

std::unique_ptr<Collectives> make_thread_collectives(int ranks, CollectiveAlgorithm algorithm,
                                                     const LinkModel& link) {
  return std::make_unique<ThreadCollectives>(ranks, algorithm, link);
}

// ---- the shared-memory backend's bookkeeping ----

ThreadCollectives::ThreadCollectives(int ranks, CollectiveAlgorithm algorithm,
                                     const LinkModel& link)
    : n_(ranks),
      algorithm_(algorithm),
      link_(link),
      yield_(threads_outnumber_cores(ranks)),
      barrier_(ranks),
      ranks_(static_cast<size_t>(ranks)) {
  assert(ranks >= 1);
}

int64_t ThreadCollectives::buffer_bytes(int rank) const {
  const Rank& r = ranks_[static_cast<size_t>(rank)];
  return static_cast<int64_t>((r.staging[0].capacity() + r.staging[1].capacity()) * sizeof(float));
}

int ThreadCollectives::begin_call(int rank, int64_t elements) {
  Rank& me = ranks_[rank];
  const int parity = static_cast<int>(me.calls++ % 2);
  // Others read this buffer at the earliest after this call's first barrier, and stopped reading
  // it (two calls ago) before entering the previous call: resizing here is safe.
  auto& buffer = me.staging[parity];
  if (static_cast<int64_t>(buffer.size()) < std::max<int64_t>(elements, 1))
    buffer.resize(std::max<int64_t>(elements, 1));
  return parity;
}

void ThreadCollectives::first_barrier(int rank, int parity, CollectiveStats& stats) {
  Rank& me = ranks_[rank];
  const auto t0 = Clock::now();
  me.arrived[parity] = t0;
  barrier_.arrive_and_wait();
  const auto t1 = Clock::now();
  stats.wait_us = std::chrono::duration<double, std::micro>(t1 - t0).count();
  // Every rank's arrival of this call is visible after the barrier, and is not overwritten before
  // the call after next (arrivals alternate by parity, like the staging buffers).
  if (!link_.active()) return;
  me.exchange_start = t0;
  for (const Rank& other : ranks_)
    me.exchange_start = std::max(me.exchange_start, other.arrived[parity]);
}

void ThreadCollectives::finish(int rank, CollectiveOp op, int64_t elements,
                               CollectiveStats& stats) {
  if (!link_.active() || n_ <= 1) return;
  stats.link_us = modeled_link_us(op, algorithm_, n_, elements, link_);
  const auto deadline =
      ranks_[rank].exchange_start + std::chrono::duration_cast<Clock::duration>(
                                        std::chrono::duration<double, std::micro>(stats.link_us));
  wait_until(deadline, yield_);
}

CollectiveStats ThreadCollectives::all_reduce(int rank, Pieces buffers) {
  CollectiveStats stats;
  if (n_ == 1) return stats;
  const int64_t total = total_floats(buffers);
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_all_reduce(rank, buffers, total, stats);
  else
    naive_all_reduce(rank, buffers, total, stats);
  finish(rank, CollectiveOp::kAllReduce, total, stats);
  return stats;
}

CollectiveStats ThreadCollectives::all_gather(int rank, std::span<const float> in,
                                              std::span<float> out) {
  CollectiveStats stats;
  assert(static_cast<int64_t>(in.size()) == chunk_of(out.size(), n_, rank).size);
  if (n_ == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return stats;
  }
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_all_gather(rank, in, out, stats);
  else
    naive_all_gather(rank, in, out, stats);
  finish(rank, CollectiveOp::kAllGather, static_cast<int64_t>(out.size()), stats);
  return stats;
}

CollectiveStats ThreadCollectives::reduce_scatter(int rank, std::span<const float> in,
                                                  std::span<float> out) {
  CollectiveStats stats;
  assert(static_cast<int64_t>(out.size()) == chunk_of(in.size(), n_, rank).size);
  if (n_ == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return stats;
  }
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_reduce_scatter(rank, in, out, stats);
  else
    naive_reduce_scatter(rank, in, out, stats);
  finish(rank, CollectiveOp::kReduceScatter, static_cast<int64_t>(in.size()), stats);
  return stats;
}

CollectiveStats ThreadCollectives::reduce_scatter(int rank, Pieces buffers) {
  CollectiveStats stats;
  if (n_ == 1) return stats;
  const int64_t total = total_floats(buffers);
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_reduce_scatter(rank, buffers, total, stats);
  else
    naive_reduce_scatter(rank, buffers, total, stats);
  finish(rank, CollectiveOp::kReduceScatter, total, stats);
  return stats;
}

CollectiveStats ThreadCollectives::all_gather(int rank, Pieces buffers) {
  CollectiveStats stats;
  if (n_ == 1) return stats;
  const int64_t total = total_floats(buffers);
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_all_gather(rank, buffers, total, stats);
  else
    naive_all_gather(rank, buffers, total, stats);
  finish(rank, CollectiveOp::kAllGather, total, stats);
  return stats;
}

CollectiveStats ThreadCollectives::broadcast(int rank, int root, std::span<float> buffer) {
  CollectiveStats stats;
  if (n_ == 1) return stats;
  if (algorithm_ == CollectiveAlgorithm::kRing)
    ring_broadcast(rank, root, buffer, stats);
  else
    naive_broadcast(rank, root, buffer, stats);
  finish(rank, CollectiveOp::kBroadcast, static_cast<int64_t>(buffer.size()), stats);
  return stats;
}

// ---- piecewise helpers ----

namespace {

// Calls fn(piece pointer, logical position, count) for the part of each piece inside
// [begin, end).
template <class Fn>
void for_pieces(ThreadCollectives::Pieces a, int64_t begin, int64_t end, Fn fn) {
  int64_t base = 0;
  for (size_t i = 0; i < a.size() && base < end; ++i) {
    const int64_t n = static_cast<int64_t>(a[i].size());
    const int64_t lo = std::max(begin, base), hi = std::min(end, base + n);
    if (lo < hi) fn(a[i].data() + (lo - base), i, lo - base, hi - lo, lo);
    base += n;
  }
}

}  // namespace

void add_pieces(ThreadCollectives::Pieces a, ThreadCollectives::Pieces b, int64_t begin,
                int64_t end) {
  for_pieces(a, begin, end, [&](float* p, size_t i, int64_t off, int64_t n, int64_t) {
    const float* q = b[i].data() + off;
    for (int64_t k = 0; k < n; ++k) p[k] += q[k];
  });
}

void copy_pieces(ThreadCollectives::Pieces a, ThreadCollectives::Pieces b, int64_t begin,
                 int64_t end) {
  for_pieces(a, begin, end, [&](float* p, size_t i, int64_t off, int64_t n, int64_t) {
    copy_floats(p, b[i].data() + off, n);
  });
}

void pieces_to_flat(ThreadCollectives::Pieces a, float* flat, int64_t begin, int64_t end) {
  for_pieces(a, begin, end, [&](float* p, size_t, int64_t, int64_t n, int64_t at) {
    copy_floats(flat + (at - begin), p, n);
  });
}

void flat_to_pieces(const float* flat, ThreadCollectives::Pieces a, int64_t begin, int64_t end) {
  for_pieces(a, begin, end, [&](float* p, size_t, int64_t, int64_t n, int64_t at) {
    copy_floats(p, flat + (at - begin), n);
  });
}

void add_pieces_to_flat(ThreadCollectives::Pieces a, float* flat, int64_t begin, int64_t end) {
  for_pieces(a, begin, end, [&](float* p, size_t, int64_t, int64_t n, int64_t at) {
    for (int64_t k = 0; k < n; ++k) flat[at - begin + k] += p[k];
  });
}

}  // namespace fitbench
