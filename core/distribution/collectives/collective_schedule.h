// What one gradient all-reduce of `elements` floats over N devices sends, message by message and
// step by step, exactly as the engine's ring (core/distribution/collectives/ring_collectives.cpp)
// and naive (naive_collectives.cpp) algorithms do, and which devices' gradients each chunk holds
// after each step. The collectives view draws and tabulates it. Value type; no shared state.
#pragma once

#include <cstdint>
#include <vector>

#include "core/distribution/collectives/collectives.h"

namespace fitbench {

// One message of a step: `from` sends `bytes` to `to`; `chunk` is the chunk_of() index sent, or
// -1 for the whole buffer (naive).
struct CollectiveMessage {
  int from = 0;
  int to = 0;
  int chunk = -1;
  int64_t bytes = 0;
};

class CollectiveSchedule {
 public:
  CollectiveSchedule() = default;
  // devices >= 1 (at most 64: a chunk's contributors are one bit per device); elements >= 0.
  CollectiveSchedule(CollectiveAlgorithm algorithm, int devices, int64_t elements);

  CollectiveAlgorithm algorithm() const { return algorithm_; }
  int devices() const { return devices_; }
  int64_t elements() const { return elements_; }

  // Steps, numbered 1..steps(): ring 2(N-1) (reduce-scatter steps 1..N-1, then all-gather);
  // naive 2 (every device to device 0, then device 0 to every device); 0 with one device.
  int steps() const;
  // Ring steps 1..N-1 (naive: step 1).
  bool is_reduce_scatter(int step) const;
  // The messages of `step`, in order of the sending device.
  std::vector<CollectiveMessage> messages(int step) const;

  // After `step` (0: before the first), bit j of holds()[d * N + c] is set when device d's chunk c
  // includes device j's gradients (ring chunks are chunk_of(elements, N, c); naive uses the same
  // chunks to draw the whole buffer).
  std::vector<uint64_t> holds(int step) const;
  // Every device's bit.
  uint64_t everyone() const;

  // Totals over the whole all-reduce, as CollectiveStats counts them.
  int64_t bytes_sent(int device) const;
  int64_t bytes_received(int device) const;
  int messages_sent(int device) const;
  int64_t total_bytes() const;  // on all links: the sum of every device's bytes sent
  // The device that sends the most bytes (the lowest index on a tie).
  int busiest_device() const;

 private:
  CollectiveAlgorithm algorithm_ = CollectiveAlgorithm::kRing;
  int devices_ = 1;
  int64_t elements_ = 0;
};

}  // namespace fitbench
