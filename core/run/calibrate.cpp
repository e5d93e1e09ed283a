#include "core/run/calibrate.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "core/base/statistics.h"
#include "core/distribution/spec/strategies.h"
#include "core/nn/dense.h"
#include "core/nn/network.h"
#include "core/optimizers/optimizer.h"
#include "core/run/run_plan.h"
#include "core/run/step_time.h"
#include "core/training/callback.h"

namespace fitbench {
namespace {

using SteadyClock = std::chrono::steady_clock;

double seconds_since(SteadyClock::time_point t) {
  return std::chrono::duration<double>(SteadyClock::now() - t).count();
}

// Repeats f until `budget` seconds have passed (at least five times): the median time of one
// call, what the machine sustains while it is shared, not its best moment.
template <class F>
double median_time(double budget, F&& f) {
  std::vector<double> times;
  const auto start = SteadyClock::now();
  while (times.size() < 5 || seconds_since(start) < budget) {
    const auto t = SteadyClock::now();
    f();
    times.push_back(seconds_since(t));
  }
  return median(std::move(times));
}

// The best time of one all_reduce of `elements` floats over two thread ranks.
double all_reduce_time(int64_t elements) {
  auto collectives = make_thread_collectives(2, CollectiveAlgorithm::kRing);
  std::vector<float> a(static_cast<size_t>(elements), 1.0f), b(a);
  constexpr int kCalls = 200;
  double best = 1e30;
  for (int round = 0; round < 5; ++round) {
    std::thread other([&] {
      for (int i = 0; i < kCalls; ++i) collectives->all_reduce(1, std::span<float>(b));
    });
    const auto t = SteadyClock::now();
    for (int i = 0; i < kCalls; ++i) collectives->all_reduce(0, std::span<float>(a));
    const double each = seconds_since(t) / kCalls;
    other.join();
    best = std::min(best, each);
  }
  return best;
}

// Times each training step (after the first) of a fit(): the median.
class StepClock : public Callback {
 public:
  void on_train_batch_begin(int, const Logs&) override { begin_ = SteadyClock::now(); }
  void on_train_batch_end(int, const Logs&) override {
    if (seen_++ > 0) times_.push_back(seconds_since(begin_));
  }
  double median_step() const { return median(times_); }

 private:
  SteadyClock::time_point begin_;
  int seen_ = 0;
  std::vector<double> times_;
};

// One device's share of a training step of `in` (forward, backward and the update, as the
// executors run them), on random values.
class DeviceStep {
 public:
  DeviceStep(const CapacityInput& in, Index rows) : net_(in.model), rows_(rows) {
    net_.build(in.features);
    for (const NetworkVariable& v : net_.variables()) {
      const Index r = matrix_rows(v.shape), c = matrix_cols(v.shape);
      values_.push_back(Matrix::Random(r, c) * 0.05f);
      grads_.push_back(Matrix::Zero(r, c));
    }
    for (size_t i = 0; i < values_.size(); ++i) {
      params_.push_back(&values_[i]);
      const_params_.push_back(&values_[i]);
      grad_ptrs_.push_back(&grads_[i]);
    }
    optimizer_ = make_optimizer(in.optimizer, "compile.optimizer");
    net_.reserve(ws_, rows);
    x_ = Matrix::Random(rows, in.features);
  }
  void run() {
    net_.forward(const_params_, x_, ws_, ForwardContext{.training = true});
    net_.output_grad(ws_, rows_).setConstant(1e-3f);
    net_.backward(const_params_, x_, ws_, rows_, grad_ptrs_);
    optimizer_->apply(params_, grad_ptrs_);
  }

 private:
  Network net_;
  Index rows_;
  std::vector<Matrix> values_, grads_;
  std::vector<Matrix*> params_, grad_ptrs_;
  std::vector<const Matrix*> const_params_;
  std::unique_ptr<Optimizer> optimizer_;
  Workspace ws_;
  Matrix x_;
};

}  // namespace

Calibration calibrate(const CapacityInput& in) {
  Calibration c;
  const int parts = in.distribution.class_name == kDataParallel ? std::max(in.devices, 1) : 1;
  const int64_t batch = std::min(in.batch_size, std::max<int64_t>(in.train_rows, 1));
  const Index rows = std::max<Index>((batch + parts - 1) / parts, 1);
  // FLOP/s sustained by one device thread on its share of this plan's step.
  DeviceStep one(in, rows);
  const double t1 = median_time(0.3, [&] { one.run(); });
  int64_t trainable = 0;
  Network net(in.model);
  net.build_shapes(in.features);
  for (const NetworkVariable& v : net.variables()) {
    int64_t size = 1;
    for (int64_t d : v.shape) size *= d;
    if (v.trainable) trainable += size;
  }
  const double work = static_cast<double>(rows) * row_flops(in) +
                      update_flops_per_float(in.optimizer) * static_cast<double>(trainable);
  c.flops = work / std::max(t1, 1e-9);
  // The cores the machine gives now: the same step on every core at once, each thread timing
  // its own calls (after one warm-up call) for the same budget; the median call against t1.
  const unsigned hardware = std::max(std::thread::hardware_concurrency(), 1u);
  c.cores = 1.0;
  if (hardware > 1) {
    std::vector<std::unique_ptr<DeviceStep>> steps;
    for (unsigned i = 0; i < hardware; ++i) steps.push_back(std::make_unique<DeviceStep>(in, rows));
    std::vector<std::vector<double>> times(hardware);
    std::atomic<unsigned> ready{0};
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < hardware; ++i)
      threads.emplace_back([&, i] {
        steps[i]->run();
        ready.fetch_add(1);
        while (ready.load() < hardware) std::this_thread::yield();
        const auto start = SteadyClock::now();
        while (times[i].size() < 5 || seconds_since(start) < 0.3) {
          const auto t = SteadyClock::now();
          steps[i]->run();
          times[i].push_back(seconds_since(t));
        }
      });
    for (auto& t : threads) t.join();
    std::vector<double> all;
    for (const auto& v : times) all.insert(all.end(), v.begin(), v.end());
    std::nth_element(all.begin(), all.begin() + all.size() / 2, all.end());
    const double each = all[all.size() / 2];
    c.cores =
        std::clamp(static_cast<double>(hardware) * t1 / each, 1.0, static_cast<double>(hardware));
  }
  // Latency from a one-float all-reduce (two ring steps of one message), bandwidth from a
  // 4M-float one (two messages of 2M floats each, less their latency).
  const double small = all_reduce_time(1);
  c.link.latency_us = small / 2.0 * 1e6;
  constexpr int64_t kLarge = int64_t{1} << 22;
  const double large = all_reduce_time(kLarge);
  const double per_message = std::max(large / 2.0 - small / 2.0, 1e-9);
  c.link.gbps = static_cast<double>(kLarge / 2 * sizeof(float)) / per_message / 1e9;
  return c;
}

Target calibrated_target(const Calibration& c) {
  Target t = this_machine();
  t.flops = c.flops;
  t.inside_host = t.between_hosts = c.link;
  t.cores = c.cores;
  t.source = "this machine, calibrated: " + std::to_string(static_cast<int>(c.flops / 1e9)) +
             " GFLOP/s per device thread, thread collectives of " +
             std::to_string(c.link.latency_us).substr(0, 4) + " µs and " +
             std::to_string(c.link.gbps).substr(0, 4) + " GB/s per message, " +
             std::to_string(c.cores).substr(0, 4) + " cores free";
  return t;
}

double measure_step_seconds(RunPlan& plan, int steps) {
  StepClock clock;
  RunOptions run;
  run.callbacks.push_back(&clock);
  FitOptions fit = plan.spec.fit;
  fit.epochs = 1;
  fit.verbose = 0;
  fit.validation_split = 0.0;
  fit.callbacks.clear();
  const Index rows =
      std::min<Index>(plan.data.size(), static_cast<Index>(fit.batch_size) * (steps + 1));
  const Matrix x = plan.data.x.topRows(rows), y = plan.data.y.topRows(rows);
  plan.model->fit(x, y, fit, run);
  return clock.median_step();
}

}  // namespace fitbench
