// What each simulated device did during each training step: spans with microsecond timestamps
// (steady clock, relative to the start of the fit() that ran them) for shard copy, forward,
// backward, collective (algorithm and bytes), optimizer update and waiting. A distributed executor
// fills one StepTrace per train step; fit() hands it to Callback::on_step_trace; TraceRecorder
// keeps a whole run (RunTrace) and its per-device busy / communication / idle summary. Value types
// and a callback used on the fit() thread; not thread-safe.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/distribution/collectives/collectives.h"
#include "core/training/callback.h"

namespace fitbench {

enum class SpanKind : uint8_t {
  kShardCopy,   // copying the device's rows of the batch into its own buffers
  kForward,     // forward pass, loss and metrics on the device's shard
  kBackward,    // backward pass into the device's gradients
  kCollective,  // the gradient all-reduce
  kUpdate,      // the optimizer update of the device's replica
  kWaiting,     // waiting for slower devices before a collective
};

// "shard_copy", "forward", "backward", "all_reduce", "update", "waiting".
const char* span_name(SpanKind kind);
// Shard copy, forward, backward and update are the device's own work (busy).
bool is_compute(SpanKind kind);

struct TraceSpan {
  SpanKind kind = SpanKind::kForward;
  CollectiveAlgorithm algorithm = CollectiveAlgorithm::kRing;  // collectives only
  CollectiveOp op = CollectiveOp::kAllReduce;                  // collectives only
  double begin_us = 0.0;                                       // since the run's start
  double duration_us = 0.0;
  int64_t bytes_sent = 0;      // collectives: by this device
  int64_t bytes_received = 0;  // collectives: by this device
  double end_us() const { return begin_us + duration_us; }
};

// span_name(kind), except a collective's own operation: "all_reduce", "all_gather", ...
const char* span_label(const TraceSpan& span);

// One train step on every device.
struct StepTrace {
  uint64_t step = 0;                // the model's train step counter (0 for its first step ever)
  int epoch = -1;                   // 0-based, as Keras's callbacks count; set by fit()
  int batch = -1;                   // 0-based within the epoch; set by fit()
  std::vector<int64_t> shard_rows;  // rows of the batch each device trained on
  std::vector<std::vector<TraceSpan>> spans;  // per device, in time order

  // This step labelled with fit()'s epoch and batch (StepExecutor::labelled_step_trace).
  const StepTrace* labelled(int epoch_index, int batch_index) {
    epoch = epoch_index;
    batch = batch_index;
    return this;
  }
};

// Time per device over a run (or the steps added so far), in microseconds.
struct DeviceUsage {
  double busy_us = 0.0;           // shard copy, forward, backward, update
  double communication_us = 0.0;  // collectives
  double waiting_us = 0.0;        // waiting for other devices (part of idle)
  double total_us = 0.0;          // first span's start to last span's end, over every device
  double busy_percent() const { return percent(busy_us); }
  double communication_percent() const { return percent(communication_us); }
  // Everything else: waiting, and the time between steps (fit()'s own work, the callbacks).
  double idle_percent() const {
    // Never below 0 (rounding would print "-0.0%").
    return total_us > 0.0 ? std::max(0.0, 100.0 - busy_percent() - communication_percent()) : 0.0;
  }

 private:
  double percent(double us) const { return total_us > 0.0 ? 100.0 * us / total_us : 0.0; }
};

// Sums StepTraces as they come.
class UsageSummary {
 public:
  void add(const StepTrace& step);
  void add(int device, const TraceSpan& span);
  void clear();
  // One entry per device seen so far.
  std::vector<DeviceUsage> devices() const;

 private:
  std::vector<DeviceUsage> sums_;
  double first_us_ = 0.0, last_us_ = 0.0;
  bool empty_ = true;
};

// "cpu:1  busy 61.2%  communication 12.0%  idle 26.8%".
std::string usage_line(const std::string& device_name, const DeviceUsage& usage);

// A whole run's steps, appended as they come into flat arrays. reserve(steps) ahead sizes them
// all at the first step (spans for that many steps like the first); past that they grow
// geometrically.
class RunTrace {
 public:
  struct Step {
    uint64_t step = 0;
    int epoch = -1;
    int batch = -1;
  };
  struct Span {
    int32_t device = 0;
    uint32_t step_index = 0;  // into steps()
    TraceSpan span;
  };

  void append(const StepTrace& step);
  void reserve(size_t steps);
  void clear();

  int devices() const { return devices_; }
  const std::vector<Step>& steps() const { return steps_; }
  const std::vector<Span>& spans() const { return spans_; }
  // Rows device d trained on in step i.
  int64_t shard_rows(size_t step_index, int device) const {
    return shard_rows_[step_index * static_cast<size_t>(devices_) + static_cast<size_t>(device)];
  }

 private:
  int devices_ = 0;
  std::vector<Step> steps_;
  std::vector<Span> spans_;
  std::vector<int64_t> shard_rows_;
};

// Per-device busy / communication / waiting time over a whole run.
std::vector<DeviceUsage> summarize(const RunTrace& trace);

// A callback that records the steps of a fit() (cleared at on_train_begin): their spans, the
// RunTrace for write_chrome_trace, up to `max_kept_steps` (the first ones; room for the run's
// epochs x steps, at most 65,536 of them, is reserved ahead), and the usage summary of every step
// as running totals, whatever it keeps.
class TraceRecorder : public Callback {
 public:
  explicit TraceRecorder(size_t max_kept_steps = std::numeric_limits<size_t>::max())
      : max_kept_(max_kept_steps) {}
  void on_train_begin(const Logs& logs) override;
  void on_step_trace(const StepTrace& trace) override;

  const RunTrace& trace() const { return trace_; }
  // Steps seen since on_train_begin (trace() keeps the first max_kept_steps of them).
  size_t steps_seen() const { return steps_seen_; }
  // As summarize(trace()) would give it over every step seen: one entry per device, each with
  // the run's total time.
  std::vector<DeviceUsage> usage() const;

 private:
  size_t max_kept_;
  size_t steps_seen_ = 0;
  int devices_ = 0;
  RunTrace trace_;
  UsageSummary usage_;
};

}  // namespace fitbench
