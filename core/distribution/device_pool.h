// One worker thread per simulated device, kept for the life of the pool. dispatch() runs a job on
// every device at once (device 0 on the calling thread) and returns when all are done; between
// dispatches the workers sleep on a futex, so an idle pool burns no CPU. Phases inside a job
// synchronize with barrier(). dispatch() is called by one thread at a time; barrier() only from
// inside a job.
#pragma once

#include <atomic>
#include <barrier>
#include <cstdint>
#include <exception>
#include <memory>
#include <thread>
#include <vector>

namespace fitbench {

class DevicePool {
 public:
  using Job = void (*)(void* context, int device);

  explicit DevicePool(int devices);
  ~DevicePool();
  DevicePool(const DevicePool&) = delete;
  DevicePool& operator=(const DevicePool&) = delete;

  int size() const { return devices_; }

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
  std::barrier<> barrier_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> remaining_{0};
  std::atomic<bool> quit_{false};
  Job job_ = nullptr;
  void* context_ = nullptr;
  std::exception_ptr error_;
  std::atomic<bool> has_error_{false};
  std::vector<std::thread> threads_;
};

}  // namespace fitbench
