// A group of simulated devices that exchange through one Collectives object (DataParallel: every
// device; ModelParallel: one row or one column of the mesh), and the trace of each call. Every
// member notes when it arrives at a call; after the call (which synchronizes the group) each
// member knows when the last one arrived, so its waiting span runs from its own arrival to the
// last arrival (the last member records none) and its collective span from there to its return.
// Members call from their own threads, every member the same calls in the same order; a member's
// arrival slot alternates by call parity, like the collectives' staging buffers, so a fast member
// never overwrites an arrival a slow one has yet to read. Owned by an executor.
#pragma once

#include <chrono>
#include <memory>
#include <span>
#include <vector>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/trace/device_timeline.h"

namespace fitbench {

// When each member of a group arrived at the group's latest synchronizing call (a collective, or
// a barrier of the executor's), and the waiting that follows from it.
class ArrivalBoard {
 public:
  using Clock = std::chrono::steady_clock;

  explicit ArrivalBoard(int size) : members_(static_cast<size_t>(size)) {}

  // Notes that member `rank` arrived at its next call at `arrival`; returns the call's parity.
  int arrive(int rank, Clock::time_point arrival);
  // After the call has synchronized the group: records on `timeline` member `rank`'s waiting from
  // its arrival to the last member's (nothing for the last; ties go to the lowest rank, so
  // exactly one member of every call counts as the last) and returns the last arrival.
  Clock::time_point record_waiting(int rank, int parity, DeviceTimeline& timeline) const;

 private:
  struct alignas(64) Member {
    Clock::time_point arrived[2];
    uint64_t calls = 0;
  };
  std::vector<Member> members_;
};

class CollectiveGroup {
 public:
  using Clock = std::chrono::steady_clock;

  CollectiveGroup(int size, CollectiveAlgorithm algorithm, const LinkModel& link);
  // A group over a given backend whose `members` members call from this process (a
  // multi-process backend: members call with their index in this process).
  CollectiveGroup(std::unique_ptr<Collectives> collectives, int members);

  int size() const { return collectives_->size(); }
  // The global rank of the member that calls with `rank` (Collectives::global_rank).
  int global_rank(int rank) const { return collectives_->global_rank(rank); }
  CollectiveAlgorithm algorithm() const { return collectives_->algorithm(); }
  // The collectives' buffers held for `rank` (Collectives::buffer_bytes).
  int64_t buffer_bytes(int rank) const { return collectives_->buffer_bytes(rank); }

  // Each call below runs the collective as member `rank`, which arrived at `arrival` (the end of
  // its last span), and returns when its part ended (where its next span begins). In a group of
  // more than one it records on `timeline` the waiting (unless this member arrived last) and the
  // collective span (operation, algorithm, bytes; its modeled link time as the injection). A
  // group of one exchanges nothing and records nothing (all_gather copies `in` to `out`).
  Clock::time_point all_reduce(int rank, DeviceTimeline& timeline, Clock::time_point arrival,
                               std::span<const std::span<float>> buffers);
  Clock::time_point all_reduce(int rank, DeviceTimeline& timeline, Clock::time_point arrival,
                               std::span<float> buffer);
  Clock::time_point all_gather(int rank, DeviceTimeline& timeline, Clock::time_point arrival,
                               std::span<const float> in, std::span<float> out);
  // The in-place piecewise reduce_scatter and all_gather of Collectives.
  Clock::time_point reduce_scatter(int rank, DeviceTimeline& timeline, Clock::time_point arrival,
                                   std::span<const std::span<float>> buffers);
  Clock::time_point all_gather(int rank, DeviceTimeline& timeline, Clock::time_point arrival,
                               std::span<const std::span<float>> buffers);

  // Sizes the collectives' exchange buffers for calls of up to `elements` floats, so that later
  // calls allocate nothing: every member calls it at once (it runs all_reduce and all_gather on
  // scratch buffers twice, for both parities of calls, and records nothing; a link model makes
  // it wait as any call).
  void warm_up(int rank, int64_t elements);

 private:
  // Records the waiting and collective spans of the call of this parity; returns its end.
  Clock::time_point record(int rank, int parity, DeviceTimeline& timeline, CollectiveOp op,
                           const CollectiveStats& stats);

  std::unique_ptr<Collectives> collectives_;
  ArrivalBoard arrivals_;
};

}  // namespace fitbench
