#include "core/distribution/threads/device_pool.h"

#include <mutex>

namespace fitbench {
namespace {
std::mutex g_error_mutex;

// One turn of a wait for another thread: a pause while the wait is young (the other thread is
// probably running and about to arrive), then a yield, so that a waiting thread hands its core to
// one with work when devices outnumber cores or other processes keep the cores busy.
constexpr int kPauseSpins = 200;  // ~5 us of pauses
constexpr int kSpins = 4000;      // then yields; then sleep on a futex
inline void relax(int spin, bool oversubscribed) {
  if (oversubscribed || spin >= kPauseSpins) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}
}  // namespace

bool threads_outnumber_cores(int threads) {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 && static_cast<unsigned>(threads) > cores;
}

SpinBarrier::SpinBarrier(int participants)
    : participants_(participants), oversubscribed_(threads_outnumber_cores(participants)) {}

void SpinBarrier::arrive_and_wait() {
  if (participants_ <= 1) return;
  // The generation cannot advance before this thread arrives, so reading it first is safe.
  const uint32_t gen = generation_.load(std::memory_order_acquire);
  if (arrived_.fetch_add(1, std::memory_order_acq_rel) == participants_ - 1) {
    // The last to arrive resets the count, then releases the others (the release publishes the
    // reset and every participant's writes before the barrier).
    arrived_.store(0, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_release);
    generation_.notify_all();
    return;
  }
  for (int spin = 0; spin < kSpins; ++spin) {
    if (generation_.load(std::memory_order_acquire) != gen) return;
    relax(spin, oversubscribed_);
  }
  while (generation_.load(std::memory_order_acquire) == gen)
    generation_.wait(gen, std::memory_order_acquire);
}

void wait_until(std::chrono::steady_clock::time_point deadline, bool yield) {
  using namespace std::chrono;
  for (;;) {
    const auto now = steady_clock::now();
    if (now >= deadline) return;
    const auto left = deadline - now;
    if (left > microseconds(200)) {
      std::this_thread::sleep_for(left - microseconds(100));
    } else {
      relax(yield ? kPauseSpins : 0, false);
    }
  }
}

DevicePool::DevicePool(int devices)
    : devices_(devices), oversubscribed_(threads_outnumber_cores(devices)), barrier_(devices) {
  for (int d = 1; d < devices_; ++d) threads_.emplace_back([this, d] { worker_loop(d); });
}

DevicePool::~DevicePool() {
  quit_.store(true, std::memory_order_release);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  for (auto& t : threads_) t.join();
}

void DevicePool::run_one(int device) {
  try {
    job_(context_, device);
  } catch (...) {
    std::lock_guard<std::mutex> lock(g_error_mutex);
    if (!error_) error_ = std::current_exception();
    has_error_.store(true, std::memory_order_release);
  }
}

void DevicePool::worker_loop(int device) {
  uint64_t seen = 0;
  for (;;) {
    // Spin briefly (a training loop dispatches every few microseconds), then sleep.
    uint64_t g = generation_.load(std::memory_order_acquire);
    for (int spin = 0; g == seen && spin < kSpins; ++spin) {
      relax(spin, oversubscribed_);
      g = generation_.load(std::memory_order_acquire);
    }
    while (g == seen) {
      generation_.wait(seen, std::memory_order_acquire);
      g = generation_.load(std::memory_order_acquire);
    }
    seen = g;
    if (quit_.load(std::memory_order_acquire)) return;
    run_one(device);
    if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
  }
}

void DevicePool::dispatch(Job job, void* context) {
  job_ = job;
  context_ = context;
  error_ = nullptr;
  has_error_.store(false, std::memory_order_relaxed);
  remaining_.store(devices_ - 1, std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_acq_rel);
  generation_.notify_all();
  run_one(0);
  int left = remaining_.load(std::memory_order_acquire);
  for (int spin = 0; left != 0 && spin < kSpins; ++spin) {
    relax(spin, oversubscribed_);
    left = remaining_.load(std::memory_order_acquire);
  }
  while (left != 0) {
    remaining_.wait(left, std::memory_order_acquire);
    left = remaining_.load(std::memory_order_acquire);
  }
  if (has_error_.load(std::memory_order_acquire)) std::rethrow_exception(error_);
}

void DevicePool::barrier() { barrier_.arrive_and_wait(); }

}  // namespace fitbench
