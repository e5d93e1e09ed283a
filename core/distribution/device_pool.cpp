#include "core/distribution/device_pool.h"

#include <mutex>

namespace fitbench {
namespace {
std::mutex g_error_mutex;

// Waiting for a few microseconds: a pause on a core of its own, but a yield when devices
// outnumber cores, so a waiting device hands its core to one that has work.
inline void relax(bool oversubscribed) {
  if (oversubscribed) {
    std::this_thread::yield();
    return;
  }
#if defined(__x86_64__)
  __builtin_ia32_pause();
#endif
}

bool oversubscribed(int devices) {
  const unsigned cores = std::thread::hardware_concurrency();
  return cores > 0 && static_cast<unsigned>(devices) > cores;
}
}  // namespace

DevicePool::DevicePool(int devices)
    : devices_(devices), oversubscribed_(oversubscribed(devices)), barrier_(devices) {
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
    for (int spin = 0; g == seen && spin < 4000; ++spin) {
      relax(oversubscribed_);
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
  for (int spin = 0; left != 0 && spin < 4000; ++spin) {
    relax(oversubscribed_);
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
