#include "core/distribution/collectives/hierarchical_collectives.h"

#include <cassert>

#include "core/base/tensor.h"
#include "core/distribution/collectives/thread_collectives.h"

namespace fitbench {
namespace {

// One group of a HierarchicalCollectives, as a Collectives of its own.
class GroupView final : public Collectives {
 public:
  GroupView(HierarchicalCollectives& all, int g) : all_(all), g_(g) {}
  int size() const override { return all_.size(); }
  CollectiveAlgorithm algorithm() const override { return all_.algorithm(); }
  int global_rank(int rank) const override { return all_.global_rank(rank); }
  CollectiveStats all_reduce(int rank, std::span<const std::span<float>> buffers) override {
    return all_.all_reduce(g_, rank, buffers);
  }
  using Collectives::all_reduce;
  CollectiveStats all_gather(int rank, std::span<const float> in, std::span<float> out) override {
    return all_.all_gather(g_, rank, in, out);
  }
  CollectiveStats reduce_scatter(int rank, std::span<const float> in,
                                 std::span<float> out) override {
    return all_.reduce_scatter(g_, rank, in, out);
  }
  CollectiveStats reduce_scatter(int rank, std::span<const std::span<float>> buffers) override {
    return all_.reduce_scatter(g_, rank, buffers);
  }
  CollectiveStats all_gather(int rank, std::span<const std::span<float>> buffers) override {
    return all_.all_gather(g_, rank, buffers);
  }
  CollectiveStats broadcast(int rank, int root, std::span<float> buffer) override {
    return all_.broadcast(g_, rank, root, buffer);
  }
  int64_t buffer_bytes(int rank) const override { return all_.group_bytes(g_, rank); }

 private:
  HierarchicalCollectives& all_;
  const int g_;
};

}  // namespace

HierarchicalCollectives::HierarchicalCollectives(std::shared_ptr<ProcessGroup> group, int local,
                                                 CollectiveAlgorithm algorithm, int groups)
    : group_(std::move(group)),
      local_(local),
      first_(group_->rank() * local),
      n_(group_->size() * local),
      processes_(group_->size()),
      algorithm_(algorithm),
      barrier_(local * groups),
      groups_(static_cast<size_t>(groups)),
      send_counts_(static_cast<size_t>(processes_)),
      send_displs_(static_cast<size_t>(processes_)),
      recv_counts_(static_cast<size_t>(processes_)),
      recv_displs_(static_cast<size_t>(processes_)) {
  assert(local >= 1 && groups >= 1);
  for (Group& gr : groups_) gr.members.resize(static_cast<size_t>(local));
}

std::unique_ptr<Collectives> HierarchicalCollectives::group(int g) {
  assert(g >= 0 && g < static_cast<int>(groups_.size()));
  return std::make_unique<GroupView>(*this, g);
}

void HierarchicalCollectives::meet() {
  if (local_ * groups_.size() > 1) barrier_.arrive_and_wait();
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

void HierarchicalCollectives::reduce_owned(Group& gr) {
  const int k = local_;
  const int64_t total = gr.members.front().total;
  const Chunk mine = process_span(total, group_->rank());
  gr.send.resize(static_cast<size_t>(k * total));
  gr.recv.resize(static_cast<size_t>(k * mine.size * processes_));
  gr.sums.resize(static_cast<size_t>(mine.size));
  // To process q: for each of its chunks, every member's part of that chunk.
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    const int64_t base = k * span.begin;
    for (int cl = 0; cl < k; ++cl) {
      const Chunk c = chunk_of(total, n_, q * k + cl);
      for (int m = 0; m < k; ++m)
        read(gr, m, c.begin, c.size,
             gr.send.data() + base + k * (c.begin - span.begin) + m * c.size);
    }
    send_counts_[static_cast<size_t>(q)] = static_cast<int>(k * span.size);
    send_displs_[static_cast<size_t>(q)] = static_cast<int>(base);
    recv_counts_[static_cast<size_t>(q)] = static_cast<int>(k * mine.size);
    recv_displs_[static_cast<size_t>(q)] = static_cast<int>(q * k * mine.size);
  }
  group_->all_to_all(gr.send.data(), send_counts_.data(), send_displs_.data(), gr.recv.data(),
                     recv_counts_.data(), recv_displs_.data());
  // Each owned chunk summed over every rank, in the thread backend's order.
  for (int cl = 0; cl < k; ++cl) {
    const int c = first_ + cl;
    const Chunk chunk = chunk_of(total, n_, c);
    const int64_t within = k * (chunk.begin - mine.begin);
    auto part = [&](int g) {
      const int s = g / k, m = g % k;
      return gr.recv.data() + s * k * mine.size + within + m * chunk.size;
    };
    float* sum = gr.sums.data() + (chunk.begin - mine.begin);
    copy_floats(sum, part(contributor(c, 0)), chunk.size);
    for (int i = 1; i < n_; ++i) {
      const float* x = part(contributor(c, i));
      for (int64_t j = 0; j < chunk.size; ++j) sum[j] += x[j];
    }
  }
  CollectiveStats& stats = gr.leader_stats;
  stats.bytes_sent += k * (total - mine.size) * kFloatBytes;
  stats.bytes_received += k * mine.size * (processes_ - 1) * kFloatBytes;
  stats.messages_sent += processes_ - 1;
}

void HierarchicalCollectives::gather_chunks(Group& gr, const float* part, int64_t total) {
  gr.flat.resize(static_cast<size_t>(total));
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    recv_counts_[static_cast<size_t>(q)] = static_cast<int>(span.size);
    recv_displs_[static_cast<size_t>(q)] = static_cast<int>(span.begin);
  }
  group_->all_gather(part, gr.flat.data(), recv_counts_.data(), recv_displs_.data());
  const Chunk mine = process_span(total, group_->rank());
  CollectiveStats& stats = gr.leader_stats;
  stats.bytes_sent += mine.size * (processes_ - 1) * kFloatBytes;
  stats.bytes_received += (total - mine.size) * kFloatBytes;
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
CollectiveStats HierarchicalCollectives::call(int g, int rank, const Member& member,
                                              Leader&& leader) {
  Group& mine = groups_[static_cast<size_t>(g)];
  mine.members[static_cast<size_t>(rank)] = member;
  meet();
  if (g == 0 && rank == 0) {
    for (Group& gr : groups_) {
      gr.leader_stats = {};
      leader(gr);
    }
  }
  meet();
  return shared_stats(mine.leader_stats);
}

void HierarchicalCollectives::read(const Group& gr, int m, int64_t begin, int64_t size,
                                   float* dst) const {
  const Member& member = gr.members[static_cast<size_t>(m)];
  if (!member.in.empty() || member.pieces.empty())
    copy_floats(dst, member.in.data() + begin, size);
  else
    pieces_to_flat(member.pieces, dst, begin, begin + size);
}

const float* HierarchicalCollectives::own_sum(const Group& gr, int64_t total, int rank) const {
  const Chunk mine = process_span(total, group_->rank());
  return gr.sums.data() + (chunk_of(total, n_, first_ + rank).begin - mine.begin);
}

void HierarchicalCollectives::gather_members(Group& gr, bool from_in) {
  const int64_t total = gr.members.front().total;
  const Chunk mine = process_span(total, group_->rank());
  gr.sums.resize(static_cast<size_t>(mine.size));
  for (int m = 0; m < local_; ++m) {
    const Chunk c = chunk_of(total, n_, first_ + m);
    // A flat input holds only the member's chunk; pieces hold the whole buffer.
    float* dst = gr.sums.data() + (c.begin - mine.begin);
    if (from_in)
      copy_floats(dst, gr.members[static_cast<size_t>(m)].in.data(), c.size);
    else
      read(gr, m, c.begin, c.size, dst);
  }
  gather_chunks(gr, gr.sums.data(), total);
}

CollectiveStats HierarchicalCollectives::all_reduce(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats = call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) {
    reduce_owned(gr);
    gather_chunks(gr, gr.sums.data(), gr.members.front().total);
  });
  flat_to_pieces(groups_[static_cast<size_t>(g)].flat.data(), buffers, 0, total);
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats =
      call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) { reduce_owned(gr); });
  const Chunk own = chunk_of(total, n_, first_ + rank);
  flat_to_pieces(own_sum(groups_[static_cast<size_t>(g)], total, rank), buffers, own.begin,
                 own.begin + own.size);
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int g, int rank, std::span<const float> in,
                                                        std::span<float> out) {
  const int64_t total = static_cast<int64_t>(in.size());
  const CollectiveStats stats =
      call(g, rank, {{}, in, {}, total}, [&](Group& gr) { reduce_owned(gr); });
  copy_floats(out.data(), own_sum(groups_[static_cast<size_t>(g)], total, rank),
              chunk_of(total, n_, first_ + rank).size);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats =
      call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) { gather_members(gr, false); });
  flat_to_pieces(groups_[static_cast<size_t>(g)].flat.data(), buffers, 0, total);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int g, int rank, std::span<const float> in,
                                                    std::span<float> out) {
  const int64_t total = static_cast<int64_t>(out.size());
  const CollectiveStats stats =
      call(g, rank, {{}, in, {}, total}, [&](Group& gr) { gather_members(gr, true); });
  copy_floats(out.data(), groups_[static_cast<size_t>(g)].flat.data(), total);
  return stats;
}

CollectiveStats HierarchicalCollectives::broadcast(int g, int rank, int root,
                                                   std::span<float> buffer) {
  const int64_t size = static_cast<int64_t>(buffer.size());
  const int root_process = root / local_;
  const CollectiveStats stats = call(g, rank, {{}, {}, buffer, size}, [&](Group& gr) {
    const int64_t count = gr.members.front().total;
    gr.flat.resize(static_cast<size_t>(count));
    if (root_process == group_->rank())
      copy_floats(gr.flat.data(), gr.members[static_cast<size_t>(root % local_)].out.data(), count);
    group_->broadcast(gr.flat.data(), count, root_process);
    if (root_process == group_->rank()) {
      gr.leader_stats.bytes_sent = (processes_ - 1) * count * kFloatBytes;
      gr.leader_stats.messages_sent = processes_ - 1;
    } else {
      gr.leader_stats.bytes_received = count * kFloatBytes;
    }
  });
  copy_floats(buffer.data(), groups_[static_cast<size_t>(g)].flat.data(), size);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_reduce(int rank, Pieces buffers) {
  return all_reduce(0, rank, buffers);
}
CollectiveStats HierarchicalCollectives::reduce_scatter(int rank, Pieces buffers) {
  return reduce_scatter(0, rank, buffers);
}
CollectiveStats HierarchicalCollectives::reduce_scatter(int rank, std::span<const float> in,
                                                        std::span<float> out) {
  return reduce_scatter(0, rank, in, out);
}
CollectiveStats HierarchicalCollectives::all_gather(int rank, Pieces buffers) {
  return all_gather(0, rank, buffers);
}
CollectiveStats HierarchicalCollectives::all_gather(int rank, std::span<const float> in,
                                                    std::span<float> out) {
  return all_gather(0, rank, in, out);
}
CollectiveStats HierarchicalCollectives::broadcast(int rank, int root, std::span<float> buffer) {
  return broadcast(0, rank, root, buffer);
}

int64_t HierarchicalCollectives::group_bytes(int g, int rank) const {
  if (rank != 0) return 0;
  const Group& gr = groups_[static_cast<size_t>(g)];
  const size_t floats =
      gr.send.capacity() + gr.recv.capacity() + gr.sums.capacity() + gr.flat.capacity();
  return static_cast<int64_t>(floats * sizeof(float));
}

}  // namespace fitbench
