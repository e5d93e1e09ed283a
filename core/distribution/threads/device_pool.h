// One worker thread per simulated device, kept for the life of the pool. dispatch() runs a job on
// every device at once (device 0 on the calling thread) and returns when all are done; between
// dispatches the workers sleep on a futex, so an idle pool burns no CPU. Phases inside a job
// synchronize with barrier(). dispatch() is called by one thread at a time; barrier() only from
// inside a job. Also the waiting primitives the devices share: a spinning barrier and a precise
// wait until a time point. (Plain threads rather than a oneTBB task_arena per device: measured
// faster for microsecond steps by bench/bench_pool; docs/architecture.md gives the figures.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace fitbench {

// True when `threads` busy threads would outnumber this machine's cores.
bool threads_outnumber_cores(int threads);

// A reusable barrier for a fixed number of threads. A waiting thread spins for a while (a pause
// on a core of its own, a yield when threads outnumber cores, so a waiting device hands its core
// to one that has work), then sleeps on a futex. Thread-safe; each participant calls
// arrive_and_wait() once per phase.
class SpinBarrier {
 public:
  explicit SpinBarrier(int participants);
  SpinBarrier(const SpinBarrier&) = delete;
  SpinBarrier& operator=(const SpinBarrier&) = delete;

  void arrive_and_wait();

 private:
  const int participants_;
  const bool oversubscribed_;
  alignas(64) std::atomic<int> arrived_{0};
  alignas(64) std::atomic<uint32_t> generation_{0};
};

// Waits until `deadline` on the steady clock: sleeps while more than ~200 us remain, then spins
// (yielding when `yield` is set), so waits of a few microseconds are accurate.
void wait_until(std::chrono::steady_clock::time_point deadline, bool yield);

class DevicePool {
 public:
  using Job = void (*)(void* context, int device);

  explicit DevicePool(int devices);
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  int size() const { return devices_; }
  // More devices than cores: waiting devices yield their core instead of spinning.
  bool oversubscribed() const { return oversubscribed_; }

  // Runs job(context, d) for every device d and waits for all. If any device throws, the first
  // exception is rethrown here after every device has finished the job.
  void dispatch(Job job, void* context);

  // Waits until every device of the running job reaches this point.
  void barrier();

 private:
  void worker_loop(int device);
  void run_one(int device);

  const int devices_;
  const bool oversubscribed_;
  SpinBarrier barrier_;
  alignas(64) std::atomic<uint64_t> generation_{0};
  alignas(64) std::atomic<int> remaining_{0};
  std::atomic<bool> quit_{false};
  Job job_ = nullptr;
  void* context_ = nullptr;
  std::exception_ptr error_;
  std::atomic<bool> has_error_{false};
  std::vector<std::thread> threads_;
};

}  // namespace fitbench
