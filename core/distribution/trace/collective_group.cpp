#include "core/distribution/trace/collective_group.h"

#include <algorithm>

namespace fitbench {

int ArrivalBoard::arrive(int rank, Clock::time_point arrival) {
  Member& me = members_[static_cast<size_t>(rank)];
  const int parity = static_cast<int>(me.calls++ % 2);
  me.arrived[parity] = arrival;
  return parity;
}

ArrivalBoard::Clock::time_point ArrivalBoard::record_waiting(int rank, int parity,
                                                             DeviceTimeline& timeline) const {
  // Every member's arrival at this call is visible now: the call synchronized the group, and no
  // member writes this parity's slot again before every member has entered the next call.
  const Clock::time_point own = members_[static_cast<size_t>(rank)].arrived[parity];
  Clock::time_point last = own;
  int last_rank = rank;
  for (size_t m = 0; m < members_.size(); ++m) {
    const Clock::time_point t = members_[m].arrived[parity];
    if (t > last || (t == last && static_cast<int>(m) < last_rank)) {
      last = t;
      last_rank = static_cast<int>(m);
    }
  }
  if (last_rank != rank) {
    TraceSpan waiting;
    waiting.kind = SpanKind::kWaiting;
    waiting.begin_us = timeline.since_start_us(own);
    waiting.duration_us = timeline.since_start_us(last) - waiting.begin_us;
    timeline.add(waiting);
  }
  return last;
}

CollectiveGroup::CollectiveGroup(int size, CollectiveAlgorithm algorithm, const LinkModel& link)
    : collectives_(make_thread_collectives(size, algorithm, link)), arrivals_(size) {}

CollectiveGroup::CollectiveGroup(std::unique_ptr<Collectives> collectives, int members)
    : collectives_(std::move(collectives)), arrivals_(members) {}

CollectiveGroup::Clock::time_point CollectiveGroup::record(int rank, int parity,
                                                           DeviceTimeline& timeline,
                                                           CollectiveOp op,
                                                           const CollectiveStats& stats) {
  const auto end = Clock::now();
  const Clock::time_point last = arrivals_.record_waiting(rank, parity, timeline);
  TraceSpan c;
  c.kind = SpanKind::kCollective;
  c.algorithm = collectives_->algorithm();
  c.op = op;
  c.begin_us = timeline.since_start_us(last);
  c.duration_us = timeline.since_start_us(end) - c.begin_us;
  c.bytes_sent = stats.bytes_sent;
  c.bytes_received = stats.bytes_received;
  timeline.add(c, stats.link_us);
  return end;
}

CollectiveGroup::Clock::time_point CollectiveGroup::all_reduce(
    int rank, DeviceTimeline& timeline, Clock::time_point arrival,
    std::span<const std::span<float>> buffers) {
  if (size() == 1) return arrival;
  const int parity = arrivals_.arrive(rank, arrival);
  const CollectiveStats stats = collectives_->all_reduce(rank, buffers);
  return record(rank, parity, timeline, CollectiveOp::kAllReduce, stats);
}

CollectiveGroup::Clock::time_point CollectiveGroup::all_reduce(int rank, DeviceTimeline& timeline,
                                                               Clock::time_point arrival,
                                                               std::span<float> buffer) {
  const std::span<float> pieces[1] = {buffer};
  return all_reduce(rank, timeline, arrival, std::span<const std::span<float>>(pieces));
}

CollectiveGroup::Clock::time_point CollectiveGroup::all_gather(int rank, DeviceTimeline& timeline,
                                                               Clock::time_point arrival,
                                                               std::span<const float> in,
                                                               std::span<float> out) {
  if (size() == 1) {
    std::copy(in.begin(), in.end(), out.begin());
    return Clock::now();
  }
  const int parity = arrivals_.arrive(rank, arrival);
  const CollectiveStats stats = collectives_->all_gather(rank, in, out);
  return record(rank, parity, timeline, CollectiveOp::kAllGather, stats);
}

CollectiveGroup::Clock::time_point CollectiveGroup::reduce_scatter(
    int rank, DeviceTimeline& timeline, Clock::time_point arrival,
    std::span<const std::span<float>> buffers) {
  if (size() == 1) return arrival;
  const int parity = arrivals_.arrive(rank, arrival);
  const CollectiveStats stats = collectives_->reduce_scatter(rank, buffers);
  return record(rank, parity, timeline, CollectiveOp::kReduceScatter, stats);
}

CollectiveGroup::Clock::time_point CollectiveGroup::all_gather(
    int rank, DeviceTimeline& timeline, Clock::time_point arrival,
    std::span<const std::span<float>> buffers) {
  if (size() == 1) return arrival;
  const int parity = arrivals_.arrive(rank, arrival);
  const CollectiveStats stats = collectives_->all_gather(rank, buffers);
  return record(rank, parity, timeline, CollectiveOp::kAllGather, stats);
}

void CollectiveGroup::warm_up(int rank, int64_t elements) {
  if (size() == 1 || elements <= 0) return;
  std::vector<float> buffer(static_cast<size_t>(elements));
  std::vector<float> piece(static_cast<size_t>(chunk_of(elements, size(), global_rank(rank)).size));
  // Calls alternate between two sets of buffers: each operation runs once on each.
  for (int i = 0; i < 2; ++i) collectives_->all_reduce(rank, std::span<float>(buffer));
  for (int i = 0; i < 2; ++i) collectives_->all_gather(rank, piece, buffer);
}

}  // namespace fitbench
