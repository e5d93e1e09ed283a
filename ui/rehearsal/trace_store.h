// The steps of one run's trace as the device timeline keeps them: copies of the StepTraces in a
// ring of at most capacity() steps (the oldest dropped beyond it, and counted), the RunTrace of
// the kept steps for the Chrome trace export, and their per-device usage exactly as core's
// summarize() computes it. Value holder without widgets; UI thread only (not thread-safe).
#pragma once

#include <cstddef>
#include <vector>

#include "core/distribution/trace/trace.h"

namespace fitbench {

class TraceStore {
 public:
  static constexpr size_t kDefaultCapacity = 20000;

  explicit TraceStore(size_t capacity = kDefaultCapacity);

  // Forgets every step and the dropped count; the next run has `devices` devices.
  void clear(int devices);
  // Keeps a copy of `step`; when capacity() steps are kept, the oldest one is dropped first.
  void append(const StepTrace& step);

  size_t size() const { return m_size; }
  bool empty() const { return m_size == 0; }
  size_t capacity() const { return m_capacity; }
  // Steps dropped since clear() because the store was full.
  size_t dropped() const { return m_dropped; }
  // The devices given to clear(), or more when a step brought more.
  int devices() const { return m_devices; }
  // Kept step i, 0 being the oldest kept; i < size().
  const StepTrace& step(size_t i) const;

  // The kept steps, oldest first, as write_chrome_trace takes them.
  RunTrace toRunTrace() const;
  // Busy / communication / waiting per device over the kept steps: equal to
  // summarize(toRunTrace()) bit for bit (the same sums in the same order). Incremental until a
  // step is dropped; after that the next call sums the kept steps again.
  std::vector<DeviceUsage> usage() const;

 private:
  std::vector<StepTrace> m_ring;  // m_ring[(m_head + i) % m_ring.size()] is kept step i
  size_t m_head = 0;
  size_t m_size = 0;
  size_t m_capacity = kDefaultCapacity;
  size_t m_dropped = 0;
  int m_devices = 0;
  mutable UsageSummary m_usage;  // over the kept steps when m_usageValid
  mutable bool m_usageValid = true;
};

}  // namespace fitbench
