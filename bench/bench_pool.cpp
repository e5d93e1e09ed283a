// How the simulated devices' workers are run, measured: DevicePool (one std::thread per device,
// woken by a spin-then-futex generation counter; core/distribution/threads/device_pool.h) against
// oneTBB as DESIGN.md first proposes (one tbb::task_arena of concurrency 1 per device, a step
// enqueued into each and joined on a counter). Both run the same jobs with the same SpinBarrier
// inside: (a) an empty step (fork and join alone), (b) a step with two barriers (the shape of the
// seed model's DataParallel step: the all-reduce's two synchronizations), (c) 20 us of work per
// device then two barriers. N = 2 devices (one per core) and N = 4 (more devices than cores).
// Medians of repeats (alternating blocks of the two), in microseconds per step; never asserted.
// Usage: bench_pool [--repeats N]
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "core/distribution/threads/device_pool.h"

namespace {

using namespace fitbench;
using namespace fitbench::bench;
using Clock = std::chrono::steady_clock;
using Job = DevicePool::Job;

// The oneTBB form: device 0 runs on the calling thread, device d > 0 in arena d - 1, whose one
// slot a TBB worker takes. A barrier inside a job needs every device's job running at once, which
// TBB's tasks do not promise in general (a task runs when a thread is free to take it); one arena
// per device, and max_allowed_parallelism raised to N, are what make it hold here.
class TbbArenaPool {
 public:
  explicit TbbArenaPool(int devices)
      : devices_(devices),
        control_(tbb::global_control::max_allowed_parallelism, static_cast<size_t>(devices)) {
    for (int d = 1; d < devices; ++d) {
      arenas_.push_back(std::make_unique<tbb::task_arena>(1, 0));
      arenas_.back()->initialize();
    }
  }

  void dispatch(Job job, void* context) {
    remaining_.store(devices_ - 1, std::memory_order_relaxed);
    for (int d = 1; d < devices_; ++d)
      arenas_[static_cast<size_t>(d - 1)]->enqueue([this, job, context, d] {
        job(context, d);
        if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) remaining_.notify_one();
      });
    job(context, 0);
    // The same join as DevicePool's: spin a little, then sleep.
    int left = remaining_.load(std::memory_order_acquire);
    for (int spin = 0; left != 0 && spin < 4000; ++spin) {
      std::this_thread::yield();
      left = remaining_.load(std::memory_order_acquire);
    }
    while (left != 0) {
      remaining_.wait(left, std::memory_order_acquire);
      left = remaining_.load(std::memory_order_acquire);
    }
  }

 private:
  const int devices_;
  tbb::global_control control_;
  std::vector<std::unique_ptr<tbb::task_arena>> arenas_;
  alignas(64) std::atomic<int> remaining_{0};
};

struct Step {
  SpinBarrier* barrier;
  int barriers;    // per step
  double work_us;  // busy time per device before the barriers
};

void run_step(void* context, int) {
  const Step& s = *static_cast<const Step*>(context);
  if (s.work_us > 0.0) {
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double, std::micro>(s.work_us));
    while (Clock::now() < until) {
    }
  }
  for (int b = 0; b < s.barriers; ++b) s.barrier->arrive_and_wait();
}

// Microseconds per step of one block of `steps` steps.
template <class Pool>
double block_us(Pool& pool, Step& step, long steps) {
  const auto t0 = Clock::now();
  for (long i = 0; i < steps; ++i) pool.dispatch(&run_step, &step);
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() /
         static_cast<double>(steps);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::atoi(argv[i + 1]);
  std::printf("bench_pool: medians of %d repeats; %u hardware threads (%s); oneTBB %s; load %s\n",
              repeats, std::thread::hardware_concurrency(), host_cpu().c_str(), TBB_VERSION_STRING,
              load_average().c_str());
  struct Case {
    const char* name;
    int barriers;
    double work_us;
    long steps;
  };
  const Case cases[] = {{"(a) empty step", 0, 0.0, 20000},
                        {"(b) two barriers", 2, 0.0, 20000},
                        {"(c) 20 us of work, two barriers", 2, 20.0, 2000}};
  for (int n : {2, 4}) {
    for (const Case& c : cases) {
      const long steps = n > 2 ? c.steps / 10 : c.steps;
      // Both forms alive at once, timed in alternating blocks, so that both see the same
      // moments of the machine.
      SpinBarrier pool_barrier(n), tbb_barrier(n);
      Step pool_step{&pool_barrier, c.barriers, c.work_us};
      Step tbb_step{&tbb_barrier, c.barriers, c.work_us};
      DevicePool pool(n);
      TbbArenaPool tbb_pool(n);
      block_us(pool, pool_step, steps / 10 + 1);  // warm-up
      block_us(tbb_pool, tbb_step, steps / 10 + 1);
      std::vector<double> pool_blocks, tbb_blocks;
      for (int r = 0; r < repeats; ++r) {
        pool_blocks.push_back(block_us(pool, pool_step, steps));
        tbb_blocks.push_back(block_us(tbb_pool, tbb_step, steps));
      }
      const double pool_us = median(pool_blocks), tbb_us = median(tbb_blocks);
      char name[96];
      std::snprintf(name, sizeof name, "%s, N=%d", c.name, n);
      std::printf("%-42s DevicePool %9.2f us   oneTBB arenas %9.2f us   ratio %.2f\n", name,
                  pool_us, tbb_us, tbb_us / pool_us);
    }
  }
  std::printf("load at end: %s\n", load_average().c_str());
  return 0;
}
