// A BatchReducer over a CollectiveGroup: what BatchNormalization's statistics of the global
// batch take when devices hold its parts (DataParallel: every device; ModelParallel: a column of
// the mesh). Used by one device's thread during its forward and backward.
#pragma once

#include <algorithm>
#include <chrono>
#include <span>
#include <vector>

#include "core/distribution/trace/collective_group.h"
#include "core/nn/layer.h"

namespace fitbench {

// BatchNormalization's sums over the global batch: a traced all_reduce of this device's part on
// the devices' collectives, in float32 as the gradients' (each part's sum is in double first).
// A sum closes the span running before it (forward or backward), which time() then continues.
class GroupBatchReducer final : public BatchReducer {
 public:
  using Clock = std::chrono::steady_clock;
  GroupBatchReducer(CollectiveGroup& group, int rank, DeviceTimeline& timeline,
                    std::vector<float>& staging, SpanKind kind, Clock::time_point start)
      : group_(group),
        rank_(rank),
        timeline_(timeline),
        staging_(staging),
        kind_(kind),
        t_(start) {}

  void sum(std::span<double> values) override {
    t_ = timeline_.end_span(kind_, t_);
    const std::span<float> buffer(staging_.data(), values.size());
    for (size_t i = 0; i < values.size(); ++i) buffer[i] = static_cast<float>(values[i]);
    t_ = group_.all_reduce(rank_, timeline_, t_, buffer);
    for (size_t i = 0; i < values.size(); ++i) values[i] = buffer[i];
    ++calls_;
  }
  // After a device failed (or skipped its work for another's failure): takes part, with zeros,
  // in the sums of `sizes` (Layer::batch_sums) this reducer has not made, so that the devices
  // sharing the batch finish theirs. The step's results are then discarded.
  void finish(std::span<const int64_t> sizes) {
    for (size_t i = static_cast<size_t>(calls_); i < sizes.size(); ++i) {
      t_ = timeline_.end_span(kind_, t_);
      const std::span<float> buffer(staging_.data(), static_cast<size_t>(sizes[i]));
      std::fill(buffer.begin(), buffer.end(), 0.0f);
      t_ = group_.all_reduce(rank_, timeline_, t_, buffer);
    }
    calls_ = static_cast<int>(sizes.size());
  }
  // Where the span after the last sum begins (the start when none ran).
  Clock::time_point time() const { return t_; }
  void restart(SpanKind kind, Clock::time_point start) {
    kind_ = kind;
    t_ = start;
    calls_ = 0;
  }

 private:
  CollectiveGroup& group_;
  int rank_;
  DeviceTimeline& timeline_;
  std::vector<float>& staging_;
  SpanKind kind_;
  Clock::time_point t_;
  int calls_ = 0;  // sums made since the start or the last restart
};

}  // namespace fitbench
