// One simulated device's record of one train step: its spans (trace.h), timestamped from the
// run's start, and what the rehearsal knobs added to each span. A device slower than 1 has each
// compute phase (forward, backward, update) stretched in real time to 1/speed of its measured
// length, and the stretch is noted beside the span. Owned by its executor; written by the
// device's thread during a step and read by the driving thread between steps (the device pool's
// dispatch orders the two); not thread-safe.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/distribution/trace/trace.h"

namespace fitbench {

// What the rehearsal knobs added to one span, in microseconds.
struct SpanInjection {
  double work_us = 0.0;   // a compute span: the phase's own measured time, before any stretch
  double added_us = 0.0;  // compute: work_us * (1/speed - 1); collective: its modeled link time
};

class DeviceTimeline {
 public:
  using Clock = std::chrono::steady_clock;

  // `capacity`: the most spans one step records (reserved here, so a step allocates nothing).
  // `yield`: waiting devices hand their core to others (more devices than cores).
  DeviceTimeline(Clock::time_point start, double speed, bool yield, size_t capacity);

  double speed() const { return speed_; }
  bool yield() const { return yield_; }

  // Starts a new step: forgets the last one's spans.
  void clear();
  // Ends a span of `kind` that began at `begin`: a compute phase of a device slower than 1 first
  // lasts until begin + (now - begin) / speed. Records the span and returns its end.
  Clock::time_point end_span(SpanKind kind, Clock::time_point begin);
  // Records a span as it is (waiting, a collective) and what the knobs added to it.
  void add(const TraceSpan& span, double added_us = 0.0);

  // Microseconds from the run's start to t.
  double since_start_us(Clock::time_point t) const {
    return std::chrono::duration<double, std::micro>(t - start_).count();
  }

  const std::vector<TraceSpan>& spans() const { return spans_; }
  // One per span, in the same order.
  const std::vector<SpanInjection>& injections() const { return injections_; }

 private:
  Clock::time_point start_;
  double speed_;
  bool yield_;
  std::vector<TraceSpan> spans_;
  std::vector<SpanInjection> injections_;
};

// Every device's timeline in a distributed executor, started at the same moment (the trace's
// zero), and the StepTrace made of them after each train step. Owned by the executor; the
// timelines are used as above, trace() and publish() by the driving thread between steps.
class StepTimelines {
 public:
  // `speed`: one per device, or empty (all 1); `spans_per_step` as DeviceTimeline's capacity.
  StepTimelines(int devices, const std::vector<double>& speed, bool yield, size_t spans_per_step);

  DeviceTimeline& operator[](int device) { return *timelines_[static_cast<size_t>(device)]; }
  const DeviceTimeline& operator[](int device) const {
    return *timelines_[static_cast<size_t>(device)];
  }

  // After a train step: trace() holds every device's spans of the step (within the reserved
  // capacity: no allocation) and `step`; epoch and batch are left at -1 for fit() to set; the
  // executor fills shard_rows.
  void publish(uint64_t step);
  StepTrace& trace() { return trace_; }

 private:
  std::vector<std::unique_ptr<DeviceTimeline>> timelines_;
  StepTrace trace_;
};

}  // namespace fitbench
