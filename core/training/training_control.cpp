#include "core/training/training_control.h"

namespace fitbench {

void TrainingControl::request_stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  cv_.notify_all();
}

void TrainingControl::pause() {
  std::lock_guard<std::mutex> lock(mutex_);
  paused_ = true;
  steps_allowed_ = 0;
}

void TrainingControl::resume() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = false;
  }
  cv_.notify_all();
}

void TrainingControl::step_once() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    paused_ = true;
    ++steps_allowed_;
  }
  cv_.notify_all();
}

void TrainingControl::set_min_step_interval(double seconds) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    min_interval_ = seconds > 0.0 ? seconds : 0.0;
  }
  cv_.notify_all();  // a batch waiting out the old pace takes the new one
}

double TrainingControl::min_step_interval() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return min_interval_;
}

void TrainingControl::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_.store(false, std::memory_order_release);
  paused_ = false;
  steps_allowed_ = 0;
  any_batch_ = false;
}

bool TrainingControl::paused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return paused_;
}

bool TrainingControl::wait_for_next_batch() {
  using Clock = std::chrono::steady_clock;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stop_.load() || !paused_ || steps_allowed_ > 0; });
    if (stop_.load()) return false;
    if (paused_) {  // a step let through by step_once(): at once
      --steps_allowed_;
      break;
    }
    // The pace: wait until the interval since the last batch's start has passed, unless a
    // stop, a pause or a new pace comes first.
    if (min_interval_ <= 0.0 || !any_batch_) break;
    const auto due = last_batch_ + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(min_interval_));
    if (Clock::now() >= due) break;
    const double interval = min_interval_;
    cv_.wait_until(lock, due, [&] { return stop_.load() || paused_ || min_interval_ != interval; });
    if (!stop_.load() && !paused_ && min_interval_ == interval && Clock::now() >= due) break;
  }
  last_batch_ = Clock::now();
  any_batch_ = true;
  return true;
}

}  // namespace fitbench
