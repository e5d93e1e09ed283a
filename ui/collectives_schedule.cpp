// CollectiveSchedule: the engine's all-reduce algorithms replayed as messages. Ring (Patarasuk and
// Yuan, JPDC 69(2), 2009, as ring_collectives.cpp runs it): device r sends to r+1; at
// reduce-scatter step k (0-based) it sends chunk r-1-k, which r+1 adds to its own; at all-gather
// step k it sends chunk r-k, which r+1 copies. Naive (naive_collectives.cpp): every device sends
// its buffer to device 0, which sends the sum back to each.

#include "ui/collectives_schedule.h"

#include <algorithm>
#include <cassert>

namespace fitbench {
namespace {

int wrap(int x, int n) { return ((x % n) + n) % n; }

constexpr int64_t kFloat = sizeof(float);

}  // namespace

CollectiveSchedule::CollectiveSchedule(CollectiveAlgorithm algorithm, int devices, int64_t elements)
    : m_algorithm(algorithm), m_devices(devices), m_elements(elements) {
  assert(devices >= 1 && devices <= 64 && elements >= 0);
}

int CollectiveSchedule::steps() const {
  if (m_devices < 2) return 0;
  return m_algorithm == CollectiveAlgorithm::kRing ? 2 * (m_devices - 1) : 2;
}

bool CollectiveSchedule::isReduceScatter(int step) const {
  return m_algorithm == CollectiveAlgorithm::kRing ? step <= m_devices - 1 : step <= 1;
}

std::vector<CollectiveMessage> CollectiveSchedule::messages(int step) const {
  std::vector<CollectiveMessage> out;
  const int n = m_devices;
  if (step < 1 || step > steps()) return out;
  if (m_algorithm == CollectiveAlgorithm::kNaive) {
    const int64_t whole = m_elements * kFloat;
    for (int d = 1; d < n; ++d)
      out.push_back(step == 1 ? CollectiveMessage{d, 0, -1, whole}
                              : CollectiveMessage{0, d, -1, whole});
    return out;
  }
  const bool reduce = isReduceScatter(step);
  const int k = reduce ? step - 1 : step - n;  // 0-based within its phase
  for (int r = 0; r < n; ++r) {
    const int c = wrap(reduce ? r - 1 - k : r - k, n);
    out.push_back({r, wrap(r + 1, n), c, chunk_of(m_elements, n, c).size * kFloat});
  }
  return out;
}

uint64_t CollectiveSchedule::everyone() const {
  return m_devices >= 64 ? ~uint64_t{0} : (uint64_t{1} << m_devices) - 1;
}

std::vector<uint64_t> CollectiveSchedule::holds(int step) const {
  const int n = m_devices;
  const auto at = [n](int device, int chunk) { return static_cast<size_t>(device * n + chunk); };
  std::vector<uint64_t> held(static_cast<size_t>(n) * static_cast<size_t>(n));
  for (int d = 0; d < n; ++d)
    for (int c = 0; c < n; ++c) held[at(d, c)] = uint64_t{1} << d;
  step = std::clamp(step, 0, steps());
  for (int s = 1; s <= step; ++s) {
    // Every message of a step reads the sender's chunk as it was before the step.
    const std::vector<uint64_t> before = held;
    const bool reduce = isReduceScatter(s);
    for (const CollectiveMessage& m : messages(s)) {
      for (int c = 0; c < n; ++c) {
        if (m.chunk >= 0 && c != m.chunk) continue;
        if (reduce)
          held[at(m.to, c)] |= before[at(m.from, c)];
        else
          held[at(m.to, c)] = before[at(m.from, c)];
      }
    }
  }
  return held;
}

int64_t CollectiveSchedule::bytesSent(int device) const {
  int64_t sum = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.from == device) sum += m.bytes;
  return sum;
}

int64_t CollectiveSchedule::bytesReceived(int device) const {
  int64_t sum = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.to == device) sum += m.bytes;
  return sum;
}

int CollectiveSchedule::messagesSent(int device) const {
  int count = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.from == device) ++count;
  return count;
}

int64_t CollectiveSchedule::totalBytes() const {
  int64_t sum = 0;
  for (int d = 0; d < m_devices; ++d) sum += bytesSent(d);
  return sum;
}

int CollectiveSchedule::busiestDevice() const {
  int best = 0;
  for (int d = 1; d < m_devices; ++d)
    if (bytesSent(d) > bytesSent(best)) best = d;
  return best;
}

}  // namespace fitbench
