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

void TrainingControl::reset() {
  std::lock_guard<std::mutex> lock(mutex_);
  stop_.store(false, std::memory_order_release);
  paused_ = false;
  steps_allowed_ = 0;
}

bool TrainingControl::paused() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return paused_;
}

bool TrainingControl::wait_for_next_batch() {
  std::unique_lock<std::mutex> lock(mutex_);
  cv_.wait(lock, [&] { return stop_.load() || !paused_ || steps_allowed_ > 0; });
  if (stop_.load()) return false;
  if (paused_ && steps_allowed_ > 0) --steps_allowed_;
  return true;
}

}  // namespace fitbench
