#include "core/distribution/trace/device_timeline.h"

#include <cassert>

#include "core/distribution/threads/device_pool.h"

namespace fitbench {

DeviceTimeline::DeviceTimeline(Clock::time_point start, double speed, bool yield, size_t capacity)
    : start_(start), speed_(speed), yield_(yield) {
  spans_.reserve(capacity);
  injections_.reserve(capacity);
}

void DeviceTimeline::clear() {
  spans_.clear();
  injections_.clear();
}

DeviceTimeline::Clock::time_point DeviceTimeline::end_span(SpanKind kind, Clock::time_point begin) {
  auto end = Clock::now();
  SpanInjection injected;
  const bool stretched =
      kind == SpanKind::kForward || kind == SpanKind::kBackward || kind == SpanKind::kUpdate;
  if (stretched) injected.work_us = std::chrono::duration<double, std::micro>(end - begin).count();
  if (stretched && speed_ < 1.0) {
    // A slower device: the phase lasts 1/speed of what it took, in real time.
    const auto work = end - begin;
    const auto target = std::chrono::duration_cast<Clock::duration>(work / speed_);
    injected.added_us = std::chrono::duration<double, std::micro>(target - work).count();
    wait_until(begin + target, yield_);
    end = Clock::now();
  }
  TraceSpan span;
  span.kind = kind;
  span.begin_us = since_start_us(begin);
  span.duration_us = std::chrono::duration<double, std::micro>(end - begin).count();
  assert(spans_.size() < spans_.capacity());
  spans_.push_back(span);
  injections_.push_back(injected);
  return end;
}

void DeviceTimeline::add(const TraceSpan& span, double added_us) {
  assert(spans_.size() < spans_.capacity());
  spans_.push_back(span);
  injections_.push_back({0.0, added_us});
}

StepTimelines::StepTimelines(int devices, const std::vector<double>& speed, bool yield,
                             size_t spans_per_step) {
  const auto start = DeviceTimeline::Clock::now();
  trace_.shard_rows.resize(static_cast<size_t>(devices));
  trace_.spans.resize(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    const double s = speed.empty() ? 1.0 : speed[static_cast<size_t>(d)];
    timelines_.push_back(std::make_unique<DeviceTimeline>(start, s, yield, spans_per_step));
    trace_.spans[static_cast<size_t>(d)].reserve(spans_per_step);
  }
}

void StepTimelines::publish(uint64_t step) {
  trace_.step = step;
  trace_.epoch = trace_.batch = -1;
  for (size_t d = 0; d < timelines_.size(); ++d) trace_.spans[d] = timelines_[d]->spans();
}

}  // namespace fitbench
