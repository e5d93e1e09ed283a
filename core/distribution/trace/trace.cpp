#include "core/distribution/trace/trace.h"

#include <algorithm>
#include <cstdio>

namespace fitbench {

const char* span_name(SpanKind kind) {
  switch (kind) {
    case SpanKind::kShardCopy:
      return "shard_copy";
    case SpanKind::kForward:
      return "forward";
    case SpanKind::kBackward:
      return "backward";
    case SpanKind::kCollective:
      return "all_reduce";
    case SpanKind::kUpdate:
      return "update";
    case SpanKind::kWaiting:
      return "waiting";
  }
  return "?";
}

const char* span_label(const TraceSpan& span) {
  return span.kind == SpanKind::kCollective ? op_name(span.op) : span_name(span.kind);
}

bool is_compute(SpanKind kind) {
  return kind == SpanKind::kShardCopy || kind == SpanKind::kForward ||
         kind == SpanKind::kBackward || kind == SpanKind::kUpdate;
}

// ---- UsageSummary ----

void UsageSummary::add(int device, const TraceSpan& span) {
  if (static_cast<size_t>(device) >= sums_.size()) sums_.resize(static_cast<size_t>(device) + 1);
  DeviceUsage& u = sums_[static_cast<size_t>(device)];
  if (is_compute(span.kind))
    u.busy_us += span.duration_us;
  else if (span.kind == SpanKind::kCollective)
    u.communication_us += span.duration_us;
  else
    u.waiting_us += span.duration_us;
  if (empty_ || span.begin_us < first_us_) first_us_ = span.begin_us;
  if (empty_ || span.end_us() > last_us_) last_us_ = span.end_us();
  empty_ = false;
}

void UsageSummary::add(const StepTrace& step) {
  for (size_t d = 0; d < step.spans.size(); ++d)
    for (const TraceSpan& s : step.spans[d]) add(static_cast<int>(d), s);
}

void UsageSummary::clear() {
  sums_.clear();
  empty_ = true;
  first_us_ = last_us_ = 0.0;
}

std::vector<DeviceUsage> UsageSummary::devices() const {
  std::vector<DeviceUsage> out = sums_;
  for (auto& u : out) u.total_us = last_us_ - first_us_;
  return out;
}

std::string usage_line(const std::string& device_name, const DeviceUsage& usage) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s  busy %.1f%%  communication %.1f%%  idle %.1f%%",
                device_name.c_str(), usage.busy_percent(), usage.communication_percent(),
                usage.idle_percent());
  return buf;
}

// ---- RunTrace ----

void RunTrace::append(const StepTrace& step) {
  const int devices = static_cast<int>(step.spans.size());
  if (steps_.empty()) {
    devices_ = devices;
    // Room for as many steps as reserved, each like this one.
    size_t per_step = 0;
    for (const auto& spans : step.spans) per_step += spans.size();
    const size_t steps = std::max<size_t>(steps_.capacity(), 1);
    spans_.reserve(steps * per_step);
    shard_rows_.reserve(steps * static_cast<size_t>(devices));
  }
  const auto index = static_cast<uint32_t>(steps_.size());
  steps_.push_back({step.step, step.epoch, step.batch});
  for (int d = 0; d < devices_; ++d) {
    shard_rows_.push_back(static_cast<size_t>(d) < step.shard_rows.size()
                              ? step.shard_rows[static_cast<size_t>(d)]
                              : 0);
    if (d < devices)
      for (const TraceSpan& s : step.spans[static_cast<size_t>(d)]) spans_.push_back({d, index, s});
  }
}

void RunTrace::reserve(size_t steps) { steps_.reserve(steps); }

void RunTrace::clear() {
  devices_ = 0;
  steps_.clear();
  spans_.clear();
  shard_rows_.clear();
}

std::vector<DeviceUsage> summarize(const RunTrace& trace) {
  UsageSummary summary;
  for (const auto& s : trace.spans()) summary.add(s.device, s.span);
  std::vector<DeviceUsage> out = summary.devices();
  const double total = out.empty() ? 0.0 : out.front().total_us;
  out.resize(static_cast<size_t>(trace.devices()));  // a device without spans shows as idle
  for (auto& u : out) u.total_us = total;
  return out;
}

// ---- TraceRecorder ----

void TraceRecorder::on_train_begin(const Logs& /*logs*/) {
  trace_.clear();
  usage_.clear();
  steps_seen_ = 0;
  devices_ = 0;
  constexpr size_t kMaxReserved = 65536;
  const size_t run = static_cast<size_t>(std::max(params_.epochs, 0)) *
                     static_cast<size_t>(std::max(params_.steps, 0));
  trace_.reserve(std::min({run, max_kept_, kMaxReserved}));
}

void TraceRecorder::on_step_trace(const StepTrace& trace) {
  if (steps_seen_++ < max_kept_) trace_.append(trace);
  usage_.add(trace);
  devices_ = std::max(devices_, static_cast<int>(trace.spans.size()));
}

std::vector<DeviceUsage> TraceRecorder::usage() const {
  std::vector<DeviceUsage> out = usage_.devices();
  const double total = out.empty() ? 0.0 : out.front().total_us;
  out.resize(static_cast<size_t>(devices_));  // a device without spans shows as idle
  for (auto& u : out) u.total_us = total;
  return out;
}

}  // namespace fitbench
