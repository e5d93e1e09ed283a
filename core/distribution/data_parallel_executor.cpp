#include "core/distribution/data_parallel_executor.h"

#include <mutex>

namespace fitbench {

struct DataParallelExecutor::Device {
  std::vector<Matrix> own_values;  // empty for device 0, which uses the model's variables
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<Replica> replica;
  StepTotals totals;
  std::vector<Matrix*> trainable_vars, trainable_grads;
  std::exception_ptr error;
};

DataParallelExecutor::DataParallelExecutor(const ExecutorContext& ctx, int devices)
    : ctx_(ctx), pool_(devices) {
  const size_t state = ctx_.graph.metric_state_size();
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
  const Index per_device = (max_rows + pool_.size() - 1) / pool_.size();
  for (auto& d : devices_) d->replica->reserve(std::max<Index>(per_device, 1));
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

void DataParallelExecutor::device_step(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  const int n_dev = pool_.size();
  const Index off = offsets_[d], rows = sizes_[d];
  auto guarded = [&](auto&& fn) {
    if (failed_.load(std::memory_order_acquire)) return;
    try {
      fn();
    } catch (...) {
      dev.error = std::current_exception();
      failed_.store(true, std::memory_order_release);
    }
  };
  if (phase_ == Phase::kPredict) {
    guarded([&] {
      dev.replica->predict_block(x_->middleRows(off, rows), out_->middleRows(off, rows));
    });
    return;
  }
  if (phase_ == Phase::kTest) {
    guarded([&] {
      dev.replica->test_block(x_->middleRows(off, rows), y_->middleRows(off, rows), dev.totals);
    });
    return;
  }
  // Forward and backward on this device's shard.
  guarded([&] {
    dev.replica->train_block(x_->middleRows(off, rows), y_->middleRows(off, rows), off, step_,
                             ctx_.dropout_seed, scale_, dev.totals);
  });
  pool_.barrier();
  // All-reduce (reduce-scatter + all-gather through shared memory): device d sums slice d of
  // every gradient over all devices in device order, then every device copies the reduced
  // slices. The order of additions is fixed, so every replica gets identical gradients.
  guarded([&] {
    auto grads0 = devices_[0]->replica->grads();
    for (size_t v = 0; v < grads0.size(); ++v) {
      if (!grads0[v]) continue;
      const Index size = grads0[v]->size();
      const Index begin = size * d / n_dev, end = size * (d + 1) / n_dev;
      if (begin == end) continue;
      // Sum into device 0's buffer for this slice.
      auto dst = Eigen::Map<Eigen::ArrayXf>(grads0[v]->data() + begin, end - begin);
      for (int s = 1; s < n_dev; ++s)
        dst += Eigen::Map<const Eigen::ArrayXf>(
            devices_[static_cast<size_t>(s)]->replica->grads()[v]->data() + begin, end - begin);
    }
  });
  pool_.barrier();
  guarded([&] {
    if (d != 0) {
      auto mine = dev.replica->grads();
      auto reduced = devices_[0]->replica->grads();
      for (size_t v = 0; v < mine.size(); ++v)
        if (mine[v]) *mine[v] = *reduced[v];
    }
  });
  pool_.barrier();
  // Every replica applies the same update to its own variables.
  guarded([&] {
    Optimizer& opt = d == 0 ? *ctx_.optimizer : *dev.optimizer;
    apply_update(*ctx_.graph.network, opt, dev.replica->params(), dev.replica->const_params(),
                 dev.replica->grads(), dev.trainable_vars, dev.trainable_grads);
  });
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
