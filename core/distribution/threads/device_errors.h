// The errors simulated devices catch during one job of a DevicePool: each device keeps the first
// exception it caught, and once any device has failed every device skips its remaining compute
// (but still takes part in every collective and barrier, so that none waits forever). The
// driving thread rethrows the first error after the job. guarded() is called by each device from
// its own thread; reset() and rethrow_first() by the driving thread between jobs.
#pragma once

#include <atomic>
#include <exception>
#include <vector>

namespace fitbench {

class DeviceErrors {
 public:
  explicit DeviceErrors(int devices) : errors_(static_cast<size_t>(devices)) {}

  // Before a job.
  void reset() { failed_.store(false, std::memory_order_relaxed); }
  // Whether a device has failed (during the job: as far as this thread can see yet).
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  // Runs fn() on device d unless a device has failed; an exception it throws is kept.
  template <class F>
  void guarded(int device, F&& fn) {
    if (failed()) return;
    try {
      fn();
    } catch (...) {
      std::exception_ptr& slot = errors_[static_cast<size_t>(device)];
      if (!slot) slot = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  }

  // After a job: rethrows the error of the lowest device that failed, forgetting all of them.
  void rethrow_first();

 private:
  std::vector<std::exception_ptr> errors_;
  std::atomic<bool> failed_{false};
};

}  // namespace fitbench
