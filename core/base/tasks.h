// Runs numbered tasks on oneTBB and waits for them, in a form ThreadSanitizer can follow although
// Debian's libtbb is not built with it (tests/tsan.supp). Used by the sweep runner (its trials)
// and the folder-of-images reader (its files).
#pragma once

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include <atomic>
#include <cstddef>
#include <memory>

namespace fitbench {

// The task's work is kept out of line, so that a race in it is reported in fitbench's frames and
// never under the TBB frames tests/tsan.supp names.
template <typename F>
[[gnu::noinline]] void run_task(F& fn, size_t i) {
  fn(i);
}

// Runs fn(0), ..., fn(count - 1) as tasks of `arena` and waits for them; an exception a task
// throws is rethrown here. The task group lives on the heap, not on the caller's stack: the worker
// threads' last writes to it are in the uninstrumented libtbb, and ThreadSanitizer would take the
// caller's next use of that stack for a race (freed heap memory is forgotten, a reused stack is
// not).
template <typename F>
void run_tasks(tbb::task_arena& arena, size_t count, F&& fn) {
  // libtbb's own hand-over is invisible to ThreadSanitizer: these two atomics give it the same
  // edges (what the caller wrote before is seen by the tasks, what they wrote is seen after).
  std::atomic<bool> go{false};
  std::atomic<size_t> finished{0};
  go.store(true, std::memory_order_release);
  auto group = std::make_unique<tbb::task_group>();
  arena.execute([&] {
    for (size_t i = 0; i < count; ++i)
      group->run([&fn, &go, &finished, i] {
        (void)go.load(std::memory_order_acquire);
        run_task(fn, i);
        finished.fetch_add(1, std::memory_order_release);
      });
    group->wait();
  });
  (void)finished.load(std::memory_order_acquire);
}

}  // namespace fitbench
