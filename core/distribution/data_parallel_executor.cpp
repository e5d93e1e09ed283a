#include "core/distribution/data_parallel_executor.h"

#include <cassert>

namespace fitbench {
namespace {

// Spans a device records per train step: shard copy, forward, backward, waiting, all_reduce,
// update.
constexpr size_t kSpansPerStep = 8;

// Makes m at least rows x cols without shrinking (allocation only when a bigger shard comes).
void ensure_size(Matrix& m, Index rows, Index cols, Index capacity) {
  if (m.cols() != cols || m.rows() < rows) m.resize(std::max(rows, capacity), cols);
}

}  // namespace

struct DataParallelExecutor::Device {
  std::vector<Matrix> own_values;  // empty for device 0, which uses the model's variables
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<Replica> replica;  // the parameter pointers and the gradient buffers
  // The forward/backward buffers (the executor runs the network itself so that forward and
  // backward are timed apart).
  Workspace ws;
  Matrix x, y;  // this device's copy of its shard
  StepTotals totals;
  std::vector<Matrix*> trainable_vars, trainable_grads;
  std::vector<std::span<float>> grad_pieces;  // the trainable gradients, all-reduced as one buffer
  std::vector<TraceSpan> spans;               // this step's
  double speed = 1.0;
  std::exception_ptr error;
};

DataParallelExecutor::DataParallelExecutor(const ExecutorContext& ctx, int devices,
                                           const DataParallelOptions& options)
    : ctx_(ctx),
      options_(options),
      pool_(devices),
      collectives_(make_thread_collectives(devices, options.allreduce, options.link)),
      start_(Clock::now()) {
  assert(options_.speed.empty() || static_cast<int>(options_.speed.size()) == devices);
  const size_t state = ctx_.graph.metric_state_size();
  trace_.shard_rows.resize(static_cast<size_t>(devices));
  trace_.spans.resize(static_cast<size_t>(devices));
  for (int d = 0; d < devices; ++d) {
    auto dev = std::make_unique<Device>();
    std::vector<Matrix*> params;
    if (d == 0) {
      params = variable_values(*ctx_.variables);
    } else {
      for (const auto& v : *ctx_.variables) dev->own_values.push_back(v.value);
      for (auto& m : dev->own_values) params.push_back(&m);
    }
    if (ctx_.optimizer) dev->optimizer = d == 0 ? nullptr : ctx_.optimizer->clone();
    dev->replica = std::make_unique<Replica>(ctx_.graph, params);
    dev->totals.reset(state);
    dev->trainable_vars.reserve(params.size());
    dev->trainable_grads.reserve(params.size());
    for (Matrix* g : dev->replica->grads())
      if (g) dev->grad_pieces.emplace_back(g->data(), static_cast<size_t>(g->size()));
    dev->spans.reserve(kSpansPerStep);
    trace_.spans[static_cast<size_t>(d)].reserve(kSpansPerStep);
    if (!options_.speed.empty()) dev->speed = options_.speed[static_cast<size_t>(d)];
    devices_.push_back(std::move(dev));
  }
  offsets_.resize(devices);
  sizes_.resize(devices);
}

DataParallelExecutor::~DataParallelExecutor() = default;

void DataParallelExecutor::shard_rows(Index rows, int devices, std::vector<Index>& offsets,
                                      std::vector<Index>& sizes) {
  const Index base = rows / devices, extra = rows % devices;
  Index at = 0;
  for (int d = 0; d < devices; ++d) {
    offsets[d] = at;
    sizes[d] = base + (d < extra ? 1 : 0);
    at += sizes[d];
  }
}

void DataParallelExecutor::prepare(Index max_rows) {
  const Index per_device = std::max<Index>((max_rows + pool_.size() - 1) / pool_.size(), 1);
  shard_capacity_ = std::max(shard_capacity_, per_device);
  const Index features = ctx_.graph.network->input_units();
  for (auto& d : devices_) {
    ctx_.graph.network->reserve(d->ws, per_device);
    ensure_size(d->x, per_device, features, shard_capacity_);
  }
}

void DataParallelExecutor::pull_from_model() {
  // Device 0 computes on the model's variables; the others copy them (callbacks may have
  // restored weights) and take the model optimizer's learning rate.
  for (size_t d = 1; d < devices_.size(); ++d) {
    for (size_t i = 0; i < ctx_.variables->size(); ++i)
      devices_[d]->own_values[i] = (*ctx_.variables)[i].value;
    if (ctx_.optimizer && devices_[d]->optimizer &&
        devices_[d]->optimizer->learning_rate() != ctx_.optimizer->learning_rate() &&
        !ctx_.optimizer->has_schedule())
      devices_[d]->optimizer->set_learning_rate(ctx_.optimizer->learning_rate());
  }
}

void DataParallelExecutor::push_to_model() {}  // device 0 trains the model's variables in place

std::vector<const Matrix*> DataParallelExecutor::replica_values(int device) const {
  auto p = devices_[static_cast<size_t>(device)]->replica->params();
  return std::vector<const Matrix*>(p.begin(), p.end());
}

void DataParallelExecutor::run_device(void* self, int device) {
  static_cast<DataParallelExecutor*>(self)->device_step(device);
}

double DataParallelExecutor::since_start_us(Clock::time_point t) const {
  return std::chrono::duration<double, std::micro>(t - start_).count();
}

DataParallelExecutor::Clock::time_point DataParallelExecutor::end_span(Device& dev, SpanKind kind,
                                                                       Clock::time_point begin) {
  auto end = Clock::now();
  if (dev.speed < 1.0 &&
      (kind == SpanKind::kForward || kind == SpanKind::kBackward || kind == SpanKind::kUpdate)) {
    // A slower device: the phase lasts 1/speed of what it took, in real time.
    const auto stretched = std::chrono::duration_cast<Clock::duration>((end - begin) / dev.speed);
    wait_until(begin + stretched, pool_.oversubscribed());
    end = Clock::now();
  }
  assert(dev.spans.size() < dev.spans.capacity());
  TraceSpan span;
  span.kind = kind;
  span.begin_us = since_start_us(begin);
  span.duration_us = std::chrono::duration<double, std::micro>(end - begin).count();
  dev.spans.push_back(span);
  return end;
}

void DataParallelExecutor::device_step(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  if (phase_ == Phase::kTrain) {
    train_device(d);
    return;
  }
  if (failed_.load(std::memory_order_acquire)) return;
  try {
    const Network& net = *ctx_.graph.network;
    const Index off = offsets_[d], rows = sizes_[d];
    const auto x = x_->middleRows(off, rows);
    net.forward(dev.replica->const_params(), x, dev.ws, ForwardContext{});
    const auto y_pred = net.output(dev.ws, rows);
    if (phase_ == Phase::kPredict) {
      out_->middleRows(off, rows) = y_pred;
      return;
    }
    const auto y = y_->middleRows(off, rows);
    dev.totals.loss_sum += ctx_.graph.loss->sum(y_pred, y);
    dev.totals.samples += static_cast<double>(rows);
    double* state = dev.totals.metric_states.data();
    for (const Metric* m : ctx_.graph.metrics) {
      m->accumulate(y_pred, y, state);
      state += m->state_size();
    }
  } catch (...) {
    dev.error = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }
}

void DataParallelExecutor::train_device(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  const Network& net = *ctx_.graph.network;
  const Index off = offsets_[d], rows = sizes_[d];
  dev.spans.clear();
  auto guarded = [&](auto&& fn) {
    if (failed_.load(std::memory_order_acquire)) return;
    try {
      fn();
    } catch (...) {
      dev.error = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  };
  auto t = Clock::now();
  guarded([&] {
    ensure_size(dev.x, rows, x_->cols(), shard_capacity_);
    ensure_size(dev.y, rows, y_->cols(), shard_capacity_);
    dev.x.topRows(rows) = x_->middleRows(off, rows);
    dev.y.topRows(rows) = y_->middleRows(off, rows);
  });
  t = end_span(dev, SpanKind::kShardCopy, t);
  const auto x = dev.x.topRows(rows);
  const auto y = dev.y.topRows(rows);
  // Forward, loss (its gradient scaled by 1 / global batch) and metrics.
  guarded([&] {
    const ForwardContext fc{
        .training = true, .step = step_, .row_offset = off, .seed = ctx_.dropout_seed};
    net.forward(dev.replica->const_params(), x, dev.ws, fc);
    const auto y_pred = net.output(dev.ws, rows);
    dev.totals.loss_sum +=
        ctx_.graph.loss->sum_and_gradient(y_pred, y, scale_, net.output_grad(dev.ws, rows));
    dev.totals.samples += static_cast<double>(rows);
    double* state = dev.totals.metric_states.data();
    for (const Metric* m : ctx_.graph.metrics) {
      m->accumulate(y_pred, y, state);
      state += m->state_size();
    }
  });
  t = end_span(dev, SpanKind::kForward, t);
  guarded(
      [&] { net.backward(dev.replica->const_params(), x, dev.ws, rows, dev.replica->grads()); });
  t = end_span(dev, SpanKind::kBackward, t);
  // Every device takes part in the all-reduce, even after an error, so that none waits forever.
  const CollectiveStats stats = collectives_->all_reduce(d, dev.grad_pieces);
  const auto collective_end = Clock::now();
  const double begin_us = since_start_us(t);
  dev.spans.push_back(
      {.kind = SpanKind::kWaiting, .begin_us = begin_us, .duration_us = stats.wait_us});
  TraceSpan c;
  c.kind = SpanKind::kCollective;
  c.algorithm = collectives_->algorithm();
  c.begin_us = begin_us + stats.wait_us;
  c.duration_us = since_start_us(collective_end) - c.begin_us;
  c.bytes_sent = stats.bytes_sent;
  c.bytes_received = stats.bytes_received;
  dev.spans.push_back(c);
  // An error on any device before the all-reduce is visible to all after it: every device skips
  // the update, so the replicas stay identical.
  if (failed_.load(std::memory_order_acquire)) return;
  t = collective_end;
  // Every replica applies the same update to its own variables.
  guarded([&] {
    Optimizer& opt = d == 0 ? *ctx_.optimizer : *dev.optimizer;
    apply_update(net, opt, dev.replica->params(), dev.replica->const_params(), dev.replica->grads(),
                 dev.trainable_vars, dev.trainable_grads);
  });
  end_span(dev, SpanKind::kUpdate, t);
}

void DataParallelExecutor::run(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y,
                               MatrixRef* out, StepTotals* totals) {
  const Index n = x.rows();
  shard_rows(n, pool_.size(), offsets_, sizes_);
  if (totals) {
    // The regularization loss is computed once, on device 0's (identical) replica.
    totals->reg_weighted +=
        ctx_.graph.network->regularization_loss(devices_[0]->replica->const_params()) *
        static_cast<double>(n);
    for (auto& d : devices_) d->totals.reset(totals->metric_states.size());
  }
  phase_ = phase;
  x_ = &x;
  y_ = y;
  out_ = out;
  scale_ = 1.0f / static_cast<float>(std::max<Index>(n, 1));
  failed_.store(false);
  pool_.dispatch(&DataParallelExecutor::run_device, this);
  for (auto& d : devices_) {
    if (d->error) {
      std::exception_ptr e = d->error;
      for (auto& other : devices_) other->error = nullptr;
      std::rethrow_exception(e);
    }
  }
  if (totals)
    for (auto& d : devices_) totals->add(d->totals);
  if (phase == Phase::kTrain) {
    trace_.step = step_;
    trace_.epoch = trace_.batch = -1;
    for (size_t d = 0; d < devices_.size(); ++d) {
      trace_.shard_rows[d] = sizes_[d];
      trace_.spans[d] = devices_[d]->spans;  // within the reserved capacity: no allocation
    }
  }
}

void DataParallelExecutor::train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step,
                                      StepTotals& totals) {
  step_ = step;
  run(Phase::kTrain, x, &y, nullptr, &totals);
}

void DataParallelExecutor::test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  run(Phase::kTest, x, &y, nullptr, &totals);
}

void DataParallelExecutor::predict_step(ConstMatrixRef x, MatrixRef out) {
  run(Phase::kPredict, x, nullptr, &out, nullptr);
}

}  // namespace fitbench
