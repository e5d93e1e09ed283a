// CollectiveSchedule: the engine's all-reduce algorithms replayed as messages. Ring (Patarasuk and
// Yuan, JPDC 69(2), 2009, as ring_collectives.cpp runs it): device r sends to r+1; at
// reduce-scatter step k (0-based) it sends chunk r-1-k, which r+1 adds to its own; at all-gather
// step k it sends chunk r-k, which r+1 copies. Naive (naive_collectives.cpp): every device sends
// its buffer to device 0, which sends the sum back to each.

#include "core/distribution/collectives/collective_schedule.h"

#include <algorithm>
#include <cassert>

#include "core/base/tensor.h"

namespace fitbench {

CollectiveSchedule::CollectiveSchedule(CollectiveAlgorithm algorithm, int devices, int64_t elements)
    : algorithm_(algorithm), devices_(devices), elements_(elements) {
  assert(devices >= 1 && devices <= 64 && elements >= 0);
}

int CollectiveSchedule::steps() const {
  if (devices_ < 2) return 0;
  return algorithm_ == CollectiveAlgorithm::kRing ? 2 * (devices_ - 1) : 2;
}

bool CollectiveSchedule::is_reduce_scatter(int step) const {
  return algorithm_ == CollectiveAlgorithm::kRing ? step <= devices_ - 1 : step <= 1;
}

std::vector<CollectiveMessage> CollectiveSchedule::messages(int step) const {
  std::vector<CollectiveMessage> out;
  const int n = devices_;
  if (step < 1 || step > steps()) return out;
  if (algorithm_ == CollectiveAlgorithm::kNaive) {
    const int64_t whole = elements_ * kFloatBytes;
    for (int d = 1; d < n; ++d)
      out.push_back(step == 1 ? CollectiveMessage{d, 0, -1, whole}
                              : CollectiveMessage{0, d, -1, whole});
    return out;
  }
  const bool reduce = is_reduce_scatter(step);
  const int k = reduce ? step - 1 : step - n;  // 0-based within its phase
  for (int r = 0; r < n; ++r) {
    const int c = wrap_rank(reduce ? r - 1 - k : r - k, n);
    out.push_back({r, wrap_rank(r + 1, n), c, chunk_of(elements_, n, c).size * kFloatBytes});
  }
  return out;
}

uint64_t CollectiveSchedule::everyone() const {
  return devices_ >= 64 ? ~uint64_t{0} : (uint64_t{1} << devices_) - 1;
}

std::vector<uint64_t> CollectiveSchedule::holds(int step) const {
  const int n = devices_;
  const auto at = [n](int device, int chunk) { return static_cast<size_t>(device * n + chunk); };
  std::vector<uint64_t> held(static_cast<size_t>(n) * static_cast<size_t>(n));
  for (int d = 0; d < n; ++d)
    for (int c = 0; c < n; ++c) held[at(d, c)] = uint64_t{1} << d;
  step = std::clamp(step, 0, steps());
  for (int s = 1; s <= step; ++s) {
    // Every message of a step reads the sender's chunk as it was before the step.
    const std::vector<uint64_t> before = held;
    const bool reduce = is_reduce_scatter(s);
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

int64_t CollectiveSchedule::bytes_sent(int device) const {
  int64_t sum = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.from == device) sum += m.bytes;
  return sum;
}

int64_t CollectiveSchedule::bytes_received(int device) const {
  int64_t sum = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.to == device) sum += m.bytes;
  return sum;
}

int CollectiveSchedule::messages_sent(int device) const {
  int count = 0;
  for (int s = 1; s <= steps(); ++s)
    for (const CollectiveMessage& m : messages(s))
      if (m.from == device) ++count;
  return count;
}

int64_t CollectiveSchedule::total_bytes() const {
  int64_t sum = 0;
  for (int d = 0; d < devices_; ++d) sum += bytes_sent(d);
  return sum;
}

int CollectiveSchedule::busiest_device() const {
  int best = 0;
  for (int d = 1; d < devices_; ++d)
    if (bytes_sent(d) > bytes_sent(best)) best = d;
  return best;
}

}  // namespace fitbench
