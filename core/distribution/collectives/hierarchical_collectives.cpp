#include "core/distribution/collectives/hierarchical_collectives.h"

#include <cassert>

#include "core/distribution/collectives/thread_collectives.h"

namespace fitbench {
namespace {

constexpr int64_t kFloat = sizeof(float);

int64_t total_of(HierarchicalCollectives::Pieces pieces) {
  int64_t n = 0;
  for (const auto& p : pieces) n += static_cast<int64_t>(p.size());
  return n;
}

}  // namespace

HierarchicalCollectives::HierarchicalCollectives(std::shared_ptr<ProcessGroup> group, int local,
                                                 CollectiveAlgorithm algorithm)
    : group_(std::move(group)),
      local_(local),
      first_(group_->rank() * local),
      n_(group_->size() * local),
      processes_(group_->size()),
      algorithm_(algorithm),
      barrier_(local),
      members_(static_cast<size_t>(local)),
      send_counts_(static_cast<size_t>(processes_)),
      send_displs_(static_cast<size_t>(processes_)),
      recv_counts_(static_cast<size_t>(processes_)),
      recv_displs_(static_cast<size_t>(processes_)) {
  assert(local >= 1);
}

void HierarchicalCollectives::meet() {
  if (local_ > 1) barrier_.arrive_and_wait();
}

Chunk HierarchicalCollectives::process_span(int64_t total, int q) const {
  const Chunk first = chunk_of(total, n_, q * local_);
  const Chunk last = chunk_of(total, n_, q * local_ + local_ - 1);
  return {first.begin, last.begin + last.size - first.begin};
}

int HierarchicalCollectives::contributor(int c, int i) const {
  // ThreadCollectives' ring adds chunk c along the ring starting after its owner:
  // ((x[c+1] + x[c+2]) + ...) + x[c]; its naive algorithm adds in rank order.
  return algorithm_ == CollectiveAlgorithm::kRing ? (c + 1 + i) % n_ : i;
}

void HierarchicalCollectives::reduce_owned(int64_t total, CollectiveStats& stats) {
  const int k = local_;
  const Chunk mine = process_span(total, group_->rank());
  send_.resize(static_cast<size_t>(k * total));
  recv_.resize(static_cast<size_t>(k * mine.size * processes_));
  sums_.resize(static_cast<size_t>(mine.size));
  // To process q: for each of its chunks, every member's part of that chunk.
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    const int64_t base = k * span.begin;
    for (int cl = 0; cl < k; ++cl) {
      const Chunk c = chunk_of(total, n_, q * k + cl);
      for (int m = 0; m < k; ++m)
        read(m, c.begin, c.size, send_.data() + base + k * (c.begin - span.begin) + m * c.size);
    }
    send_counts_[static_cast<size_t>(q)] = static_cast<int>(k * span.size);
    send_displs_[static_cast<size_t>(q)] = static_cast<int>(base);
    recv_counts_[static_cast<size_t>(q)] = static_cast<int>(k * mine.size);
    recv_displs_[static_cast<size_t>(q)] = static_cast<int>(q * k * mine.size);
  }
  group_->all_to_all(send_.data(), send_counts_.data(), send_displs_.data(), recv_.data(),
                     recv_counts_.data(), recv_displs_.data());
  // Each owned chunk summed over every rank, in the thread backend's order.
  for (int cl = 0; cl < k; ++cl) {
    const int c = first_ + cl;
    const Chunk chunk = chunk_of(total, n_, c);
    const int64_t within = k * (chunk.begin - mine.begin);
    auto part = [&](int g) {
      const int s = g / k, m = g % k;
      return recv_.data() + s * k * mine.size + within + m * chunk.size;
    };
    float* sum = sums_.data() + (chunk.begin - mine.begin);
    copy_floats(sum, part(contributor(c, 0)), chunk.size);
    for (int i = 1; i < n_; ++i) {
      const float* x = part(contributor(c, i));
      for (int64_t j = 0; j < chunk.size; ++j) sum[j] += x[j];
    }
  }
  stats.bytes_sent += k * (total - mine.size) * kFloat;
  stats.bytes_received += k * mine.size * (processes_ - 1) * kFloat;
  stats.messages_sent += processes_ - 1;
}

void HierarchicalCollectives::gather_chunks(const float* part, int64_t total,
                                            CollectiveStats& stats) {
  flat_.resize(static_cast<size_t>(total));
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    recv_counts_[static_cast<size_t>(q)] = static_cast<int>(span.size);
    recv_displs_[static_cast<size_t>(q)] = static_cast<int>(span.begin);
  }
  group_->all_gather(part, flat_.data(), recv_counts_.data(), recv_displs_.data());
  const Chunk mine = process_span(total, group_->rank());
  stats.bytes_sent += mine.size * (processes_ - 1) * kFloat;
  stats.bytes_received += (total - mine.size) * kFloat;
  stats.messages_sent += processes_ - 1;
}

CollectiveStats HierarchicalCollectives::shared_stats(const CollectiveStats& leader) const {
  // What the process exchanged, shared among its members.
  CollectiveStats s;
  s.bytes_sent = leader.bytes_sent / local_;
  s.bytes_received = leader.bytes_received / local_;
  s.messages_sent = leader.messages_sent;
  return s;
}

template <class Leader>
CollectiveStats HierarchicalCollectives::call(int rank, const Member& member, Leader&& leader) {
  members_[static_cast<size_t>(rank)] = member;
  meet();
  if (rank == 0) {
    leader_stats_ = {};
    leader();
  }
  meet();
  return shared_stats(leader_stats_);
}

void HierarchicalCollectives::read(int m, int64_t begin, int64_t size, float* dst) const {
  const Member& member = members_[static_cast<size_t>(m)];
  if (!member.in.empty() || member.pieces.empty())
    copy_floats(dst, member.in.data() + begin, size);
  else
    pieces_to_flat(member.pieces, dst, begin, begin + size);
}

const float* HierarchicalCollectives::own_sum(int64_t total, int rank) const {
  const Chunk mine = process_span(total, group_->rank());
  return sums_.data() + (chunk_of(total, n_, first_ + rank).begin - mine.begin);
}

void HierarchicalCollectives::gather_members(int64_t total, bool from_in) {
  const Chunk mine = process_span(total, group_->rank());
  sums_.resize(static_cast<size_t>(mine.size));
  for (int m = 0; m < local_; ++m) {
    const Chunk c = chunk_of(total, n_, first_ + m);
    // A flat input holds only the member's chunk; pieces hold the whole buffer.
    float* dst = sums_.data() + (c.begin - mine.begin);
    if (from_in)
      copy_floats(dst, members_[static_cast<size_t>(m)].in.data(), c.size);
    else
      read(m, c.begin, c.size, dst);
  }
  gather_chunks(sums_.data(), total, leader_stats_);
}

CollectiveStats HierarchicalCollectives::all_reduce(int rank, Pieces buffers) {
  const int64_t total = total_of(buffers);
  const CollectiveStats stats = call(rank, {buffers, {}, {}}, [&] {
    reduce_owned(total, leader_stats_);
    gather_chunks(sums_.data(), total, leader_stats_);
  });
  flat_to_pieces(flat_.data(), buffers, 0, total);
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int rank, Pieces buffers) {
  const int64_t total = total_of(buffers);
  const CollectiveStats stats =
      call(rank, {buffers, {}, {}}, [&] { reduce_owned(total, leader_stats_); });
  const Chunk own = chunk_of(total, n_, first_ + rank);
  flat_to_pieces(own_sum(total, rank), buffers, own.begin, own.begin + own.size);
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int rank, std::span<const float> in,
                                                        std::span<float> out) {
  const int64_t total = static_cast<int64_t>(in.size());
  const CollectiveStats stats =
      call(rank, {{}, in, {}}, [&] { reduce_owned(total, leader_stats_); });
  copy_floats(out.data(), own_sum(total, rank), chunk_of(total, n_, first_ + rank).size);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int rank, Pieces buffers) {
  const int64_t total = total_of(buffers);
  const CollectiveStats stats =
      call(rank, {buffers, {}, {}}, [&] { gather_members(total, false); });
  flat_to_pieces(flat_.data(), buffers, 0, total);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int rank, std::span<const float> in,
                                                    std::span<float> out) {
  const int64_t total = static_cast<int64_t>(out.size());
  const CollectiveStats stats = call(rank, {{}, in, {}}, [&] { gather_members(total, true); });
  copy_floats(out.data(), flat_.data(), total);
  return stats;
}

CollectiveStats HierarchicalCollectives::broadcast(int rank, int root, std::span<float> buffer) {
  const int64_t size = static_cast<int64_t>(buffer.size());
  const CollectiveStats stats = call(rank, {{}, {}, buffer}, [&] {
    const int root_process = root / local_;
    flat_.resize(static_cast<size_t>(size));
    if (root_process == group_->rank())
      copy_floats(flat_.data(), members_[static_cast<size_t>(root % local_)].out.data(), size);
    group_->broadcast(flat_.data(), size, root_process);
    if (root_process == group_->rank()) {
      leader_stats_.bytes_sent = (processes_ - 1) * size * kFloat;
      leader_stats_.messages_sent = processes_ - 1;
    } else {
      leader_stats_.bytes_received = size * kFloat;
    }
  });
  copy_floats(buffer.data(), flat_.data(), size);
  return stats;
}

int64_t HierarchicalCollectives::buffer_bytes(int rank) const {
  if (rank != 0) return 0;
  const size_t floats = send_.capacity() + recv_.capacity() + sums_.capacity() + flat_.capacity();
  return static_cast<int64_t>(floats * sizeof(float));
}

}  // namespace fitbench
