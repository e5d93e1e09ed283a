#include "core/distribution/model_parallel_executor.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/distribution/data_parallel_executor.h"
#include "core/distribution/layout_map.h"
#include "core/error.h"
#include "core/nn/dense.h"

namespace fitbench {

namespace {

using Split = ModelParallelPlan::Split;

// The block of a full variable matrix that model-axis device m of M holds.
struct Rect {
  Index row = 0, col = 0, rows = 0, cols = 0;
};
Rect slice_rect(const Matrix& full, Split split, int m, int model) {
  Rect r{0, 0, full.rows(), full.cols()};
  if (split == Split::kRows) {
    r.rows = full.rows() / model;
    r.row = r.rows * m;
  } else if (split == Split::kColumns) {
    r.cols = full.cols() / model;
    r.col = r.cols * m;
  }
  return r;
}

}  // namespace

ModelParallelPlan make_model_parallel_plan(const Network& network, const DistributionSpec& spec,
                                           int devices) {
  std::vector<VariableInfo> vars;
  for (const auto& v : network.variables()) vars.push_back({v.path, v.shape});
  const LayoutCheck check = check_layout_map(vars, spec, devices);
  check.throw_if_invalid();
  const std::string batch_axis =
      spec.batch_dim_name.empty() ? spec.axis_names.front() : spec.batch_dim_name;
  const int batch_index = batch_axis == spec.axis_names.front() ? 0 : 1;
  ModelParallelPlan plan;
  plan.batch = spec.mesh_shape[static_cast<size_t>(batch_index)];
  plan.model =
      spec.mesh_shape.size() == 2 ? spec.mesh_shape[static_cast<size_t>(1 - batch_index)] : 1;
  plan.device.resize(static_cast<size_t>(plan.batch * plan.model));
  // DeviceMesh places the device list row-major over the mesh shape.
  for (int b = 0; b < plan.batch; ++b)
    for (int m = 0; m < plan.model; ++m)
      plan.device[static_cast<size_t>(b * plan.model + m)] =
          batch_index == 0 ? b * plan.model + m : m * plan.batch + b;
  for (const auto& v : check.variables) {
    Split split = Split::kReplicated;
    for (size_t d = 0; d < v.axes.size(); ++d) {
      if (v.axes[d].empty() || plan.model == 1) continue;
      // Keras dims to matrix axes: a kernel (input, units) is rows x columns, a bias one row.
      split = v.shape.size() == 2 && d == 0 ? Split::kRows : Split::kColumns;
    }
    plan.variables.push_back(split);
  }
  return plan;
}

struct ModelParallelExecutor::Device {
  int b = 0, m = 0;  // coordinates on the (batch, model) mesh
  std::vector<Matrix> values, grads;
  std::vector<Matrix*> params, grad_ptrs;  // grad_ptrs[i] null for a frozen variable
  std::vector<const Matrix*> const_params;
  std::vector<Matrix*> trainable_vars, trainable_grads;
  std::vector<float> squared_norms;
  Optimizer* optimizer = nullptr;
  StepTotals totals;
  // Per layer, for this device's rows of a batch: pre-activation, output, layer cache, dL/d(out),
  // and what the group's peers read: forward pieces / partial sums and their backward peers.
  Index capacity = 0;
  std::vector<Matrix> z, a, cache, da, send_forward, send_backward;
  std::exception_ptr error;
};

ModelParallelExecutor::ModelParallelExecutor(const ExecutorContext& ctx, ModelParallelPlan plan,
                                             OptimizerSpec optimizer,
                                             std::shared_ptr<ModelParallelOptimizers> state)
    : ctx_(ctx),
      plan_(std::move(plan)),
      optimizer_spec_(std::move(optimizer)),
      state_(std::move(state)),
      pool_(plan_.batch * plan_.model) {
  const auto& vars = *ctx_.variables;
  devices_.resize(static_cast<size_t>(pool_.size()));
  for (int b = 0; b < plan_.batch; ++b) {
    for (int m = 0; m < plan_.model; ++m) {
      auto dev = std::make_unique<Device>();
      dev->b = b;
      dev->m = m;
      for (size_t i = 0; i < vars.size(); ++i) {
        const Rect r = slice_rect(vars[i].value, plan_.variables[i], m, plan_.model);
        dev->values.push_back(vars[i].value.block(r.row, r.col, r.rows, r.cols));
        dev->grads.push_back(Matrix::Zero(r.rows, r.cols));
      }
      for (size_t i = 0; i < vars.size(); ++i) {
        dev->params.push_back(&dev->values[i]);
        dev->const_params.push_back(&dev->values[i]);
        dev->grad_ptrs.push_back(vars[i].trainable ? &dev->grads[i] : nullptr);
      }
      dev->trainable_vars.reserve(vars.size());
      dev->trainable_grads.reserve(vars.size());
      dev->squared_norms.assign(vars.size(), 0.0f);
      dev->totals.reset(ctx_.graph.metric_state_size());
      devices_[static_cast<size_t>(plan_.device[static_cast<size_t>(b * plan_.model + m)])] =
          std::move(dev);
    }
  }
  // Norm clipping needs the norm of whole variables, so the executor clips across slices and the
  // device optimizers only clip by value (at most one of the three is set).
  clip_norm_ = (optimizer_spec_.clipnorm && *optimizer_spec_.clipnorm > 0.0) ||
               (optimizer_spec_.global_clipnorm && *optimizer_spec_.global_clipnorm > 0.0);
  offsets_.resize(static_cast<size_t>(plan_.batch));
  sizes_.resize(static_cast<size_t>(plan_.batch));
}

ModelParallelExecutor::~ModelParallelExecutor() = default;

std::vector<const Matrix*> ModelParallelExecutor::device_values(int index) const {
  return devices_[static_cast<size_t>(index)]->const_params;
}

void ModelParallelExecutor::prepare(Index max_rows) {
  const Network& net = *ctx_.graph.network;
  const Index cap = std::max<Index>((max_rows + plan_.batch - 1) / plan_.batch, 1);
  const int model = plan_.model;
  for (auto& dev : devices_) {
    if (dev->capacity >= cap) continue;
    dev->capacity = cap;
    const size_t layers = net.layers().size();
    for (auto* v :
         {&dev->z, &dev->a, &dev->cache, &dev->da, &dev->send_forward, &dev->send_backward})
      v->assign(layers, Matrix());
    int64_t in = net.input_units();
    for (size_t l = 0; l < layers; ++l) {
      const Layer& layer = *net.layers()[l];
      const int64_t units = net.layer_units(l);
      dev->a[l].resize(cap, units);
      dev->da[l].resize(cap, units);
      if (dynamic_cast<const Dense*>(&layer)) {
        dev->z[l].resize(cap, units);
        const Split split = plan_.variables[net.first_variable(l)];
        if (split == Split::kColumns) {
          dev->send_forward[l].resize(cap, units / model);
          dev->send_backward[l].resize(cap, in);
        } else if (split == Split::kRows) {
          dev->send_forward[l].resize(cap, units);
          dev->send_backward[l].resize(cap, in / model);
        }
      } else {
        dev->cache[l].resize(cap, layer.cache_units(in));
      }
      in = units;
    }
  }
}

template <class F>
void ModelParallelExecutor::guarded(Device& dev, F&& fn) {
  if (failed_.load(std::memory_order_acquire)) return;
  try {
    fn();
  } catch (...) {
    dev.error = std::current_exception();
    failed_.store(true, std::memory_order_release);
  }
}

void ModelParallelExecutor::forward(Device& dev, ConstMatrixRef x, Index offset, Index rows,
                                    bool training) {
  const Network& net = *ctx_.graph.network;
  const int model = plan_.model;
  const ForwardContext fctx{
      .training = training, .step = step_, .row_offset = offset, .seed = ctx_.dropout_seed};
  auto peer = [&](int m) -> Device& {
    return *devices_[static_cast<size_t>(plan_.device[static_cast<size_t>(dev.b * model + m)])];
  };
  for (size_t l = 0; l < net.layers().size(); ++l) {
    const Layer& layer = *net.layers()[l];
    const ConstMatrixRef input = l == 0 ? x : ConstMatrixRef(dev.a[l - 1].topRows(rows));
    auto out = dev.a[l].topRows(rows);
    const auto* dense = dynamic_cast<const Dense*>(&layer);
    if (!dense) {
      guarded(dev, [&] { layer.forward({}, input, out, dev.cache[l].topRows(rows), fctx); });
      continue;
    }
    const size_t k = net.first_variable(l);
    const Matrix& kernel = dev.values[k];
    const Split split = plan_.variables[k];
    const Index units = net.layer_units(l);
    auto z = dev.z[l].topRows(rows);
    if (split == Split::kReplicated) {
      guarded(dev, [&] { z.noalias() = input * kernel; });
    } else if (split == Split::kColumns) {
      // Each device computes its columns of x @ kernel; the group all-gathers them.
      guarded(dev, [&] { dev.send_forward[l].topRows(rows).noalias() = input * kernel; });
      if (model > 1) pool_.barrier();
      guarded(dev, [&] {
        const Index c = units / model;
        for (int m = 0; m < model; ++m)
          z.middleCols(c * m, c) = peer(m).send_forward[l].topRows(rows);
      });
    } else {
      // Each device multiplies its input columns by its kernel rows; the group all-reduces the
      // partial sums, adding them in device order so every device gets the same z.
      guarded(dev, [&] {
        dev.send_forward[l].topRows(rows).noalias() =
            input.middleCols(kernel.rows() * dev.m, kernel.rows()) * kernel;
      });
      if (model > 1) pool_.barrier();
      guarded(dev, [&] {
        z = peer(0).send_forward[l].topRows(rows);
        for (int m = 1; m < model; ++m) z += peer(m).send_forward[l].topRows(rows);
      });
    }
    guarded(dev, [&] {
      if (net.variable_count(l) > 1) {
        if (plan_.variables[k + 1] == Split::kColumns) {
          // A sharded bias: read (all-gather) every peer's slice.
          const Index c = units / model;
          for (int m = 0; m < model; ++m)
            z.middleCols(c * m, c).rowwise() += peer(m).values[k + 1].row(0);
        } else {
          z.rowwise() += dev.values[k + 1].row(0);
        }
      }
      activation_forward(dense->activation(), z, out);
    });
  }
}

void ModelParallelExecutor::backward(Device& dev, ConstMatrixRef x, Index rows) {
  const Network& net = *ctx_.graph.network;
  const int model = plan_.model;
  auto peer = [&](int m) -> Device& {
    return *devices_[static_cast<size_t>(plan_.device[static_cast<size_t>(dev.b * model + m)])];
  };
  for (size_t l = net.layers().size(); l-- > 0;) {
    const Layer& layer = *net.layers()[l];
    const ConstMatrixRef input = l == 0 ? x : ConstMatrixRef(dev.a[l - 1].topRows(rows));
    const bool want_dx = l > 0;
    auto dy = dev.da[l].topRows(rows);
    const auto* dense = dynamic_cast<const Dense*>(&layer);
    if (!dense) {
      if (want_dx)
        guarded(dev, [&] {
          layer.backward({}, input, dev.a[l].topRows(rows), dev.cache[l].topRows(rows), dy, true,
                         dev.da[l - 1].topRows(rows), {});
        });
      continue;
    }
    const size_t k = net.first_variable(l);
    const Matrix& kernel = dev.values[k];
    const Split split = plan_.variables[k];
    const bool has_bias = net.variable_count(l) > 1;
    // dz restricted to this device's kernel columns (all of it unless column-sharded).
    const Index c = split == Split::kColumns ? kernel.cols() : 0;
    guarded(dev, [&] {
      activation_backward(dense->activation(), dev.z[l].topRows(rows), dev.a[l].topRows(rows), dy);
      if (Matrix* g = dev.grad_ptrs[k]) {
        if (split == Split::kReplicated)
          g->noalias() = input.transpose() * dy;
        else if (split == Split::kColumns)
          g->noalias() = input.transpose() * dy.middleCols(c * dev.m, c);
        else
          g->noalias() = input.middleCols(kernel.rows() * dev.m, kernel.rows()).transpose() * dy;
      }
      if (Matrix* g = has_bias ? dev.grad_ptrs[k + 1] : nullptr) {
        const Index bc = g->cols();
        if (plan_.variables[k + 1] == Split::kColumns)
          g->row(0).noalias() = dy.middleCols(bc * dev.m, bc).colwise().sum();
        else
          g->row(0).noalias() = dy.colwise().sum();
      }
    });
    if (!want_dx) continue;
    auto dx = dev.da[l - 1].topRows(rows);
    if (split == Split::kReplicated) {
      guarded(dev, [&] { dx.noalias() = dy * kernel.transpose(); });
    } else if (split == Split::kColumns) {
      // Partial input gradients from each device's columns, all-reduced in device order.
      guarded(dev, [&] {
        dev.send_backward[l].topRows(rows).noalias() =
            dy.middleCols(c * dev.m, c) * kernel.transpose();
      });
      if (model > 1) pool_.barrier();
      guarded(dev, [&] {
        dx = peer(0).send_backward[l].topRows(rows);
        for (int m = 1; m < model; ++m) dx += peer(m).send_backward[l].topRows(rows);
      });
    } else {
      // Each device has the input gradient of its kernel rows; the group all-gathers them.
      guarded(dev, [&] { dev.send_backward[l].topRows(rows).noalias() = dy * kernel.transpose(); });
      if (model > 1) pool_.barrier();
      guarded(dev, [&] {
        const Index r = kernel.rows();
        for (int m = 0; m < model; ++m)
          dx.middleCols(r * m, r) = peer(m).send_backward[l].topRows(rows);
      });
    }
  }
}

void ModelParallelExecutor::reduce_and_update(Device& dev) {
  const int batch = plan_.batch, model = plan_.model;
  auto at = [&](int b, int m) -> Device& {
    return *devices_[static_cast<size_t>(plan_.device[static_cast<size_t>(b * model + m)])];
  };
  const size_t n_vars = dev.values.size();
  if (batch > 1) {
    // Sum along the batch axis (reduce-scatter + all-gather through shared memory): device
    // (b, m) sums chunk b of each gradient over the batch group into device (0, m)'s buffer in
    // batch order, then every device copies the reduced gradient.
    pool_.barrier();
    guarded(dev, [&] {
      Device& root = at(0, dev.m);
      for (size_t v = 0; v < n_vars; ++v) {
        if (!root.grad_ptrs[v]) continue;
        const Index size = root.grads[v].size();
        const Index begin = size * dev.b / batch, end = size * (dev.b + 1) / batch;
        if (begin == end) continue;
        auto dst = Eigen::Map<Eigen::ArrayXf>(root.grads[v].data() + begin, end - begin);
        for (int s = 1; s < batch; ++s)
          dst +=
              Eigen::Map<const Eigen::ArrayXf>(at(s, dev.m).grads[v].data() + begin, end - begin);
      }
    });
    pool_.barrier();
    guarded(dev, [&] {
      if (dev.b == 0) return;
      for (size_t v = 0; v < n_vars; ++v)
        if (dev.grad_ptrs[v]) dev.grads[v] = at(0, dev.m).grads[v];
    });
  }
  // Nobody may change a value or gradient a peer still reads (sharded biases, the root's sums).
  if (batch > 1 || model > 1) pool_.barrier();
  const Network& net = *ctx_.graph.network;
  guarded(dev, [&] { net.add_regularization_gradient(dev.const_params, dev.grad_ptrs); });
  if (clip_norm_) {
    guarded(dev, [&] {
      for (size_t v = 0; v < n_vars; ++v)
        dev.squared_norms[v] = dev.grad_ptrs[v] ? dev.grads[v].squaredNorm() : 0.0f;
    });
    pool_.barrier();
    guarded(dev, [&] {
      // The squared norm of each whole variable: the sum of its slices' (in model order).
      auto full_squared = [&](size_t v) {
        if (plan_.variables[v] == Split::kReplicated) return dev.squared_norms[v];
        float s = 0.0f;
        for (int m = 0; m < model; ++m) s += at(dev.b, m).squared_norms[v];
        return s;
      };
      // keras/src/optimizers/base_optimizer.py _clip_by_norm and clip_by_global_norm.
      if (optimizer_spec_.clipnorm && *optimizer_spec_.clipnorm > 0.0) {
        const float c = static_cast<float>(*optimizer_spec_.clipnorm);
        for (size_t v = 0; v < n_vars; ++v) {
          if (!dev.grad_ptrs[v]) continue;
          const float l2sum = full_squared(v);
          const float l2norm = l2sum > 0.0f ? std::sqrt(l2sum) : l2sum;
          dev.grads[v].array() = dev.grads[v].array() * c / std::max(l2norm, c);
        }
      } else {
        const float c = static_cast<float>(*optimizer_spec_.global_clipnorm);
        float squared = 0.0f;
        for (size_t v = 0; v < n_vars; ++v)
          if (dev.grad_ptrs[v]) squared += full_squared(v);
        const float norm = std::sqrt(squared);
        const float scale = c * std::min(1.0f / norm, 1.0f / c) + (norm - norm);
        for (size_t v = 0; v < n_vars; ++v)
          if (dev.grad_ptrs[v]) dev.grads[v].array() *= scale;
      }
    });
  }
  guarded(dev, [&] {
    dev.trainable_vars.clear();
    dev.trainable_grads.clear();
    for (size_t v = 0; v < n_vars; ++v) {
      if (!dev.grad_ptrs[v]) continue;
      dev.trainable_vars.push_back(dev.params[v]);
      dev.trainable_grads.push_back(dev.grad_ptrs[v]);
    }
    dev.optimizer->apply(dev.trainable_vars, dev.trainable_grads);
    // The first batch group writes its slices back (replicated values once, from model 0).
    if (dev.b != 0) return;
    auto& vars = *ctx_.variables;
    for (size_t v = 0; v < n_vars; ++v) {
      if (!dev.grad_ptrs[v] || (plan_.variables[v] == Split::kReplicated && dev.m != 0)) continue;
      const Rect r = slice_rect(vars[v].value, plan_.variables[v], dev.m, model);
      vars[v].value.block(r.row, r.col, r.rows, r.cols) = dev.values[v];
    }
  });
}

void ModelParallelExecutor::run_device(void* self, int device) {
  static_cast<ModelParallelExecutor*>(self)->device_step(device);
}

void ModelParallelExecutor::device_step(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  const Index off = offsets_[static_cast<size_t>(dev.b)];
  const Index rows = sizes_[static_cast<size_t>(dev.b)];
  assert(rows <= dev.capacity);
  const ConstMatrixRef x = x_->middleRows(off, rows);
  forward(dev, x, off, rows, phase_ == Phase::kTrain);
  const Network& net = *ctx_.graph.network;
  const size_t last = net.layers().size() - 1;
  const ConstMatrixRef y_pred = dev.a[last].topRows(rows);
  // Every device of a batch group holds the same outputs; model device 0 reports them.
  const bool reports = dev.m == 0;
  if (phase_ == Phase::kPredict) {
    if (reports) guarded(dev, [&] { out_->middleRows(off, rows) = y_pred; });
    return;
  }
  const ConstMatrixRef y = y_->middleRows(off, rows);
  guarded(dev, [&] {
    double loss = 0.0;
    if (phase_ == Phase::kTrain)
      loss = ctx_.graph.loss->sum_and_gradient(y_pred, y, scale_, dev.da[last].topRows(rows));
    else if (reports)
      loss = ctx_.graph.loss->sum(y_pred, y);
    if (!reports) return;
    dev.totals.loss_sum += loss;
    dev.totals.samples += static_cast<double>(rows);
    double* state = dev.totals.metric_states.data();
    for (const Metric* m : ctx_.graph.metrics) {
      m->accumulate(y_pred, y, state);
      state += m->state_size();
    }
  });
  if (phase_ != Phase::kTrain) return;
  backward(dev, x, rows);
  reduce_and_update(dev);
}

void ModelParallelExecutor::run(Phase phase, const ConstMatrixRef& x, const ConstMatrixRef* y,
                                MatrixRef* out, StepTotals* totals) {
  const Index n = x.rows();
  DataParallelExecutor::shard_rows(n, plan_.batch, offsets_, sizes_);
  if (totals) {
    // The model's variables are current (every update is written back).
    const auto& vars = *ctx_.variables;
    std::vector<const Matrix*> values;
    values.reserve(vars.size());
    for (const auto& v : vars) values.push_back(&v.value);
    totals->reg_weighted +=
        ctx_.graph.network->regularization_loss(values) * static_cast<double>(n);
    for (auto& d : devices_) d->totals.reset(totals->metric_states.size());
  }
  phase_ = phase;
  x_ = &x;
  y_ = y;
  out_ = out;
  scale_ = 1.0f / static_cast<float>(std::max<Index>(n, 1));
  failed_.store(false);
  pool_.dispatch(&ModelParallelExecutor::run_device, this);
  for (auto& d : devices_) {
    if (!d->error) continue;
    std::exception_ptr e = d->error;
    for (auto& other : devices_) other->error = nullptr;
    std::rethrow_exception(e);
  }
  if (totals)
    for (auto& d : devices_)
      if (d->m == 0) totals->add(d->totals);
}

void ModelParallelExecutor::ensure_optimizers() {
  if (devices_.front()->optimizer) return;
  ModelParallelOptimizers& s = *state_;
  const Optimizer& owner = *ctx_.optimizer;
  if (s.owner != &owner || s.owner_iterations != owner.iterations() ||
      s.devices.size() != devices_.size()) {
    if (owner.iterations() != 0)
      throw InputError("distribution",
                       "ModelParallel must be chosen before the model's first training step: "
                       "its optimizer has taken " +
                           std::to_string(owner.iterations()) +
                           " steps whose state cannot be split across devices");
    OptimizerSpec spec = optimizer_spec_;
    spec.clipnorm.reset();  // clipped by the executor across slices
    spec.global_clipnorm.reset();
    s.devices.clear();
    for (size_t d = 0; d < devices_.size(); ++d)
      s.devices.push_back(make_optimizer(spec, "compile.optimizer"));
    s.owner = &owner;
    s.owner_iterations = owner.iterations();
  }
  for (size_t d = 0; d < devices_.size(); ++d) {
    Device& dev = *devices_[d];
    dev.optimizer = s.devices[d].get();
    dev.trainable_vars.clear();
    for (size_t v = 0; v < dev.values.size(); ++v)
      if (dev.grad_ptrs[v]) dev.trainable_vars.push_back(dev.params[v]);
    dev.optimizer->build(dev.trainable_vars);
  }
  pull_from_model();
}

void ModelParallelExecutor::pull_from_model() {
  // Callbacks may have restored weights: every device takes its slice again.
  const auto& vars = *ctx_.variables;
  for (auto& dev : devices_) {
    for (size_t v = 0; v < vars.size(); ++v) {
      const Rect r = slice_rect(vars[v].value, plan_.variables[v], dev->m, plan_.model);
      dev->values[v] = vars[v].value.block(r.row, r.col, r.rows, r.cols);
    }
    // A learning rate set on the model's optimizer (ReduceLROnPlateau, LearningRateScheduler).
    Optimizer* opt = dev->optimizer;
    if (opt && ctx_.optimizer && !ctx_.optimizer->has_schedule() &&
        opt->learning_rate() != ctx_.optimizer->learning_rate())
      opt->set_learning_rate(ctx_.optimizer->learning_rate());
  }
}

void ModelParallelExecutor::train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step,
                                       StepTotals& totals) {
  ensure_optimizers();
  step_ = step;
  run(Phase::kTrain, x, &y, nullptr, &totals);
}

void ModelParallelExecutor::test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  run(Phase::kTest, x, &y, nullptr, &totals);
}

void ModelParallelExecutor::predict_step(ConstMatrixRef x, MatrixRef out) {
  run(Phase::kPredict, x, nullptr, &out, nullptr);
}

void use_model_parallel(Sequential& model, const DistributionSpec& spec, int devices) {
  if (model.built()) make_model_parallel_plan(model.network(), spec, devices);
  auto state = std::make_shared<ModelParallelOptimizers>();
  const Sequential* owner = &model;
  model.set_executor_factory([owner, spec, devices, state](const ExecutorContext& ctx) {
    return std::make_unique<ModelParallelExecutor>(
        ctx, make_model_parallel_plan(*ctx.graph.network, spec, devices),
        owner->compile_options().optimizer, state);
  });
}

}  // namespace fitbench
