#include "core/distribution/collectives/hierarchical_collectives.h"

#include <algorithm>
#include <cassert>
#include <cstdlib>
#include <utility>

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

namespace {

// Where element `pos` of a buffer given as pieces is, and how many elements follow it in the same
// piece (at most end - pos).
std::pair<float*, int64_t> piece_run(std::span<const std::span<float>> pieces, int64_t pos,
                                     int64_t end) {
  int64_t start = 0;
  for (const auto& piece : pieces) {
    const int64_t size = static_cast<int64_t>(piece.size());
    if (pos < start + size)
      return {piece.data() + (pos - start), std::min(end, start + size) - pos};
    start += size;
  }
  // Every member's buffers hold the collective's total: never reached. Ending here beats looping.
  std::abort();
}

// dst[0, n) = ((src[0] + src[1]) + ...) + src[count - 1], element by element in that order. dst
// may be one of the sources: a block is summed on the stack before it is written.
void sum_sources(const float* const* src, int count, float* dst, int64_t n) {
  constexpr int64_t kBlock = 1024;
  float block[kBlock];
  for (int64_t at = 0; at < n; at += kBlock) {
    const int64_t len = std::min(kBlock, n - at);
    copy_floats(block, src[0] + at, len);
    for (int i = 1; i < count; ++i) {
      const float* x = src[i] + at;
      for (int64_t j = 0; j < len; ++j) block[j] += x[j];
    }
    copy_floats(dst + at, block, len);
  }
}

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
      recv_displs_(static_cast<size_t>(processes_)),
      sources_(static_cast<size_t>(n_)) {
  assert(local >= 1 && groups >= 1);
  for (Group& gr : groups_) {
    gr.members.resize(static_cast<size_t>(local));
    gr.shared_send = group_->shared_floats();
    if (gr.shared_send) gr.shared_sums = group_->shared_floats();
  }
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

int64_t HierarchicalCollectives::most_sums(int64_t total) const {
  int64_t most = 0;
  for (int q = 0; q < processes_; ++q) most = std::max(most, process_span(total, q).size);
  return most;
}

bool HierarchicalCollectives::share(Group& gr, int64_t total, int64_t send_floats) {
  if (!gr.shared_send) return false;
  if (!gr.shared_send->reserve(send_floats) || !gr.shared_sums->reserve(most_sums(total))) {
    // Every process learns it at once: the group goes on through MPI's messages.
    gr.shared_send.reset();
    gr.shared_sums.reset();
    return false;
  }
  // Every process has read what the others last wrote to their segments: this one may write.
  shared_barrier(gr);
  return true;
}

float* HierarchicalCollectives::reserve_sums(Group& gr, int64_t total) {
  if (gr.shared_sums) {
    gr.sums_at = gr.shared_sums->reserve(most_sums(total));
  } else {
    gr.sums.resize(static_cast<size_t>(process_span(total, group_->rank()).size));
    gr.sums_at = gr.sums.data();
  }
  return gr.sums_at;
}

void HierarchicalCollectives::shared_barrier(Group& gr) {
  gr.shared_send->sync();
  gr.shared_sums->sync();
  group_->barrier();
  gr.shared_send->sync();
  gr.shared_sums->sync();
}

void HierarchicalCollectives::reduce_owned(Group& gr, Into into) {
  const int k = local_, me = group_->rank();
  const int64_t total = gr.members.front().total;
  const Chunk mine = process_span(total, me);
  const bool shared = share(gr, total, k * total);
  float* send = nullptr;
  if (shared) {
    send = gr.shared_send->reserve(k * total);
  } else {
    gr.send.resize(static_cast<size_t>(k * total));
    gr.recv.resize(static_cast<size_t>(k * mine.size * processes_));
    send = gr.send.data();
  }
  reserve_sums(gr, total);
  // To process q: for each of its chunks, every member's part of that chunk. Through shared memory
  // this process's own chunks are read from the members' buffers instead.
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    const int64_t base = k * span.begin;
    if (!(shared && q == me)) {
      for (int cl = 0; cl < k; ++cl) {
        const Chunk c = chunk_of(total, n_, q * k + cl);
        for (int m = 0; m < k; ++m)
          read(gr, m, c.begin, c.size, send + base + k * (c.begin - span.begin) + m * c.size);
      }
    }
    send_counts_[static_cast<size_t>(q)] = static_cast<int>(k * span.size);
    send_displs_[static_cast<size_t>(q)] = static_cast<int>(base);
    recv_counts_[static_cast<size_t>(q)] = static_cast<int>(k * mine.size);
    recv_displs_[static_cast<size_t>(q)] = static_cast<int>(q * k * mine.size);
  }
  // Where process s's contributions to this process's chunks are: in its segment, or received.
  auto from = [&](int s) -> const float* {
    if (shared) return gr.shared_send->segment(s) + k * mine.begin;
    return gr.recv.data() + s * k * mine.size;
  };
  if (shared)
    shared_barrier(gr);  // every process's contributions are in its segment
  else
    group_->all_to_all(send, send_counts_.data(), send_displs_.data(), gr.recv.data(),
                       recv_counts_.data(), recv_displs_.data());
  // Each owned chunk summed over every rank in the thread backend's order, in one pass per piece
  // of the destination: the process's sums (to be gathered), or the member's own buffer.
  for (int cl = 0; cl < k; ++cl) {
    const int c = first_ + cl;
    const Chunk chunk = chunk_of(total, n_, c);
    const int64_t within = k * (chunk.begin - mine.begin), end = chunk.begin + chunk.size;
    const Member& owner = gr.members[static_cast<size_t>(cl)];
    for (int64_t pos = chunk.begin; pos < end;) {
      int64_t len = end - pos;
      float* dst = nullptr;
      if (into == Into::kSums) {
        dst = gr.sums_at + (pos - mine.begin);
      } else if (!owner.out.empty()) {
        dst = owner.out.data() + (pos - chunk.begin);
      } else {
        const auto run = piece_run(owner.pieces, pos, end);
        dst = run.first;
        len = std::min(len, run.second);
      }
      for (int i = 0; i < n_; ++i) {
        const int g = contributor(c, i), from_process = g / k, m = g % k;
        if (shared && from_process == me) {
          const Member& member = gr.members[static_cast<size_t>(m)];
          if (!member.in.empty() || member.pieces.empty()) {
            sources_[static_cast<size_t>(i)] = member.in.data() + pos;
          } else {
            const auto run = piece_run(member.pieces, pos, end);
            sources_[static_cast<size_t>(i)] = run.first;
            len = std::min(len, run.second);
          }
        } else {
          sources_[static_cast<size_t>(i)] =
              from(from_process) + within + m * chunk.size + (pos - chunk.begin);
        }
      }
      sum_sources(sources_.data(), n_, dst, len);
      pos += len;
    }
  }
  CollectiveStats& stats = gr.leader_stats;
  stats.bytes_sent += k * (total - mine.size) * kFloatBytes;
  stats.bytes_received += k * mine.size * (processes_ - 1) * kFloatBytes;
  stats.messages_sent += processes_ - 1;
}

void HierarchicalCollectives::gather_chunks(Group& gr, const float* part, int64_t total) {
  if (gr.shared_sums) {
    // Every process's sums are in its segment; the members read them in place (read_gathered).
    shared_barrier(gr);
  } else {
    gr.flat.resize(static_cast<size_t>(total));
    for (int q = 0; q < processes_; ++q) {
      const Chunk span = process_span(total, q);
      recv_counts_[static_cast<size_t>(q)] = static_cast<int>(span.size);
      recv_displs_[static_cast<size_t>(q)] = static_cast<int>(span.begin);
    }
    group_->all_gather(part, gr.flat.data(), recv_counts_.data(), recv_displs_.data());
  }
  const Chunk mine = process_span(total, group_->rank());
  CollectiveStats& stats = gr.leader_stats;
  stats.bytes_sent += mine.size * (processes_ - 1) * kFloatBytes;
  stats.bytes_received += (total - mine.size) * kFloatBytes;
  stats.messages_sent += processes_ - 1;
}

void HierarchicalCollectives::read_gathered(const Group& gr, int rank, int64_t total, float* flat,
                                            Pieces buffers, bool skip_own) const {
  auto put = [&](const float* src, int64_t begin, int64_t end) {
    if (begin >= end) return;
    if (flat)
      copy_floats(flat + begin, src, end - begin);
    else
      flat_to_pieces(src, buffers, begin, end);
  };
  if (!gr.shared_sums) {
    put(gr.flat.data(), 0, total);
    return;
  }
  const Chunk own = chunk_of(total, n_, first_ + rank);
  for (int q = 0; q < processes_; ++q) {
    const Chunk span = process_span(total, q);
    const float* segment = gr.shared_sums->segment(q);
    if (skip_own && q == group_->rank()) {
      put(segment, span.begin, own.begin);
      put(segment + (own.begin + own.size - span.begin), own.begin + own.size,
          span.begin + span.size);
    } else {
      put(segment, span.begin, span.begin + span.size);
    }
  }
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

void HierarchicalCollectives::gather_members(Group& gr, bool from_in) {
  const int64_t total = gr.members.front().total;
  const Chunk mine = process_span(total, group_->rank());
  share(gr, total, 1);
  float* sums = reserve_sums(gr, total);
  for (int m = 0; m < local_; ++m) {
    const Chunk c = chunk_of(total, n_, first_ + m);
    // A flat input holds only the member's chunk; pieces hold the whole buffer.
    float* dst = sums + (c.begin - mine.begin);
    if (from_in)
      copy_floats(dst, gr.members[static_cast<size_t>(m)].in.data(), c.size);
    else
      read(gr, m, c.begin, c.size, dst);
  }
  gather_chunks(gr, sums, total);
}

CollectiveStats HierarchicalCollectives::all_reduce(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats = call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) {
    reduce_owned(gr, Into::kSums);
    gather_chunks(gr, gr.sums_at, gr.members.front().total);
  });
  read_gathered(groups_[static_cast<size_t>(g)], rank, total, nullptr, buffers, false);
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats =
      call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) { reduce_owned(gr, Into::kMembers); });
  return stats;
}

CollectiveStats HierarchicalCollectives::reduce_scatter(int g, int rank, std::span<const float> in,
                                                        std::span<float> out) {
  const int64_t total = static_cast<int64_t>(in.size());
  const CollectiveStats stats =
      call(g, rank, {{}, in, out, total}, [&](Group& gr) { reduce_owned(gr, Into::kMembers); });
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int g, int rank, Pieces buffers) {
  const int64_t total = total_floats(buffers);
  const CollectiveStats stats =
      call(g, rank, {buffers, {}, {}, total}, [&](Group& gr) { gather_members(gr, false); });
  // The member's own chunk is already in its buffers.
  read_gathered(groups_[static_cast<size_t>(g)], rank, total, nullptr, buffers, true);
  return stats;
}

CollectiveStats HierarchicalCollectives::all_gather(int g, int rank, std::span<const float> in,
                                                    std::span<float> out) {
  const int64_t total = static_cast<int64_t>(out.size());
  const CollectiveStats stats =
      call(g, rank, {{}, in, {}, total}, [&](Group& gr) { gather_members(gr, true); });
  read_gathered(groups_[static_cast<size_t>(g)], rank, total, out.data(), {}, false);
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
  size_t floats = gr.send.capacity() + gr.recv.capacity() + gr.sums.capacity() + gr.flat.capacity();
  for (const auto* shared : {gr.shared_send.get(), gr.shared_sums.get()})
    if (shared) floats += static_cast<size_t>(shared->capacity());
  return static_cast<int64_t>(floats * sizeof(float));
}

}  // namespace fitbench
