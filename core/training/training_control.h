// Stop / pause / single-step control of a running fit(), shared between the thread that runs it
// and a controller (the GUI, a signal handler). Every method is thread-safe; fit() checks it
// between batches, so a request takes effect within one step.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

namespace fitbench {

class TrainingControl {
 public:
  // Ends fit() cleanly after the current batch (as model.stop_training does).
  void request_stop();
  // Holds fit() before its next batch until resume() or step_once().
  void pause();
  void resume();
  // While paused: lets exactly one more batch run, then holds again.
  void step_once();
  // Pace: at least `seconds` between the starts of two batches (0: as fast as it trains), so a
  // lesson can follow each step. Takes effect at the next batch, also in a running fit(); a
  // batch let through by step_once() does not wait.
  void set_min_step_interval(double seconds);
  double min_step_interval() const;
  // Clears stop and pause, for the next run (the pace stays).
  void reset();

  bool stop_requested() const { return stop_.load(std::memory_order_acquire); }
  bool paused() const;

  // Called by fit() before each batch: blocks while paused (returns early on stop). Returns
  // false when training should stop.
  bool wait_for_next_batch();

 private:
  std::atomic<bool> stop_{false};
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  bool paused_ = false;
  int steps_allowed_ = 0;
  double min_interval_ = 0.0;  // seconds
  std::chrono::steady_clock::time_point last_batch_{};
  bool any_batch_ = false;
};

}  // namespace fitbench
