// TraceStore: a ring of StepTrace copies with the usage summary of the kept steps.

#include "ui/rehearsal/trace_store.h"

#include <algorithm>
#include <cassert>

namespace fitbench {

TraceStore::TraceStore(size_t capacity) : m_capacity(std::max<size_t>(capacity, 1)) {}

void TraceStore::clear(int devices) {
  m_ring.clear();
  m_head = m_size = m_dropped = 0;
  m_devices = std::max(devices, 0);
  m_usage.clear();
  m_usageValid = true;
}

void TraceStore::append(const StepTrace& step) {
  m_devices = std::max(m_devices, static_cast<int>(step.spans.size()));
  if (m_ring.size() < m_capacity) {
    m_ring.push_back(step);
    ++m_size;
  } else {
    // Full: the oldest slot takes the new step (its vectors keep their capacity).
    m_ring[m_head] = step;
    m_head = (m_head + 1) % m_ring.size();
    ++m_dropped;
    m_usageValid = false;
  }
  if (m_usageValid) m_usage.add(step);
}

const StepTrace& TraceStore::step(size_t i) const {
  assert(i < m_size);
  return m_ring[(m_head + i) % m_ring.size()];
}

RunTrace TraceStore::toRunTrace() const {
  RunTrace trace;
  trace.reserve(m_size);
  for (size_t i = 0; i < m_size; ++i) trace.append(step(i));
  return trace;
}

std::vector<DeviceUsage> TraceStore::usage() const {
  if (!m_usageValid) {
    m_usage.clear();
    for (size_t i = 0; i < m_size; ++i) m_usage.add(step(i));
    m_usageValid = true;
  }
  // As summarize(): one entry per device, each with the run's total.
  std::vector<DeviceUsage> out = m_usage.devices();
  const double total = out.empty() ? 0.0 : out.front().total_us;
  out.resize(static_cast<size_t>(m_devices));
  for (auto& u : out) u.total_us = total;
  return out;
}

}  // namespace fitbench
