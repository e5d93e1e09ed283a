#include "core/distribution/executors/model_parallel_executor.h"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/base/error.h"
#include "core/distribution/executors/model_parallel_device.h"
#include "core/distribution/layout/device_plan.h"
#include "core/nn/conv.h"
#include "core/nn/dense.h"

namespace fitbench {

namespace {

using Split = ModelParallelPlan::Split;

// The most spans a device records per train step: shard copy; forward and backward pieces around
// at most one collective per layer each way (waiting, collective, the next piece); the gradient
// all-reduce, the wait for every device, the clip norms' all-reduce and the update pieces.
// A BatchNormalization on a mesh of more than one row adds three sums over the column, each the
// piece it closes, waiting and its all_reduce.
// A Conv2D split by its output channels with a replicated bias adds the bias gradient's
// all-gather.
size_t model_parallel_spans(const Network& net) {
  size_t spans = 10 + 6 * net.layers().size();
  for (const auto& layer : net.layers()) {
    if (layer->scratch_size() > 0) spans += 9;
    if (dynamic_cast<const Conv2D*>(layer.get())) spans += 3;
  }
  return spans;
}

int process_count(const RehearsalOptions& options) {
  return options.processes ? options.processes->size() : 1;
}

// The devices this process hosts.
int local_count(const ModelParallelPlan& plan, const RehearsalOptions& options) {
  return plan.batch * plan.model / process_count(options);
}

// The plan's mesh as mesh_process_error and mesh_lines read it.
MeshPlacement placement_of(const ModelParallelPlan& plan) {
  MeshPlacement mesh;
  mesh.batch = plan.batch;
  mesh.model = plan.model;
  mesh.device = plan.device;
  return mesh;
}

std::string process_error(const ModelParallelPlan& plan, int processes) {
  return mesh_process_error(placement_of(plan), processes);
}

}  // namespace

ModelParallelExecutor::ModelParallelExecutor(const ExecutorContext& ctx, ModelParallelPlan plan,
                                             OptimizerSpec optimizer,
                                             std::shared_ptr<ModelParallelOptimizers> state,
                                             const RehearsalOptions& options)
    : ctx_(ctx),
      plan_(std::move(plan)),
      optimizer_spec_(std::move(optimizer)),
      state_(std::move(state)),
      options_(options),
      pool_(local_count(plan_, options)),
      first_(options.processes ? options.processes->rank() * pool_.size() : 0),
      everyone_(pool_.size()),
      timelines_(pool_.size(), options.speeds_of(first_, pool_.size()), pool_.oversubscribed(),
                 model_parallel_spans(*ctx.graph.network)),
      errors_(pool_.size()) {
  assert(options_.speed.empty() ||
         static_cast<int>(options_.speed.size()) == plan_.batch * plan_.model);
  const int processes = process_count(options_);
  const MeshPlacement mesh = placement_of(plan_);
  if (const std::string why = mesh_process_error(mesh, processes); !why.empty())
    throw InputError("distribution.mesh", why);
  const int rank = options_.processes ? options_.processes->rank() : 0;
  MeshLines row_lines, col_lines;
  mesh_lines(mesh, processes, rank, true, row_lines);
  mesh_lines(mesh, processes, rank, false, col_lines);
  rows_span_ = !row_lines.within;
  const auto& vars = *ctx_.variables;
  const int local = pool_.size();
  devices_.resize(static_cast<size_t>(local));
  auto index_of = [](const std::vector<int>& lines, int line) {
    return static_cast<int>(std::find(lines.begin(), lines.end(), line) - lines.begin());
  };
  for (int b = 0; b < plan_.batch; ++b) {
    for (int m = 0; m < plan_.model; ++m) {
      const int index = plan_.device_at(b, m) - first_;
      if (index < 0 || index >= local) continue;
      auto dev = std::make_unique<Device>();
      dev->b = b;
      dev->m = m;
      dev->index = index;
      dev->row = index_of(row_lines.lines, b);
      dev->row_rank = m % row_lines.members;
      dev->col = index_of(col_lines.lines, m);
      dev->col_rank = b % col_lines.members;
      for (size_t i = 0; i < vars.size(); ++i) {
        const SliceRect r = slice_rect(vars[i].value, plan_.variables[i], m, plan_.model);
        dev->values.push_back(vars[i].value.block(r.row, r.col, r.rows, r.cols));
        dev->grads.push_back(Matrix::Zero(r.rows, r.cols));
      }
      for (size_t i = 0; i < vars.size(); ++i) {
        dev->params.push_back(&dev->values[i]);
        dev->const_params.push_back(&dev->values[i]);
        dev->grad_ptrs.push_back(vars[i].trainable ? &dev->grads[i] : nullptr);
      }
      dev->grad_pieces = gradient_pieces(dev->grad_ptrs);
      dev->trainable_vars.reserve(vars.size());
      dev->trainable_grads.reserve(vars.size());
      dev->squared_norms.assign(vars.size(), 0.0f);
      dev->totals.reset(ctx_.graph.metric_state_size());
      devices_[static_cast<size_t>(index)] = std::move(dev);
    }
  }
  // Each model index's slices are written back by its device of the lowest batch group here.
  for (auto& dev : devices_)
    dev->writes = std::none_of(devices_.begin(), devices_.end(), [&](const auto& other) {
      return other->m == dev->m && other->b < dev->b;
    });
  // The variables a layer updates itself (BatchNormalization's moving statistics).
  const Network& net = *ctx_.graph.network;
  state_variables_.assign(vars.size(), false);
  for (size_t l = 0; l < net.layers().size(); ++l)
    if (net.layers()[l]->scratch_size() > 0)
      for (size_t v = net.first_variable(l); v < net.first_variable(l) + net.variable_count(l); ++v)
        state_variables_[v] = !vars[v].trainable && net.layers()[l]->spec().trainable;
  if (options_.per_device_batch_statistics && plan_.batch > 1 && net.has_state())
    throw InputError("devices.batch_norm_statistics",
                     "\"per_device\" is DataParallel's contrast (PyTorch's "
                     "DistributedDataParallel without SyncBatchNorm); under ModelParallel "
                     "BatchNormalization takes the global batch's statistics over each column of "
                     "the mesh: set \"global\", or choose DataParallel");
  // Model device 0 of a row reports the row's totals and predictions: the rows' owners.
  for (int b = 0; b < plan_.batch; ++b) {
    const int d = plan_.device_at(b, 0);
    row_owner_.push_back(d / local);
    if (d / local == rank)
      row_totals_.push_back(&devices_[static_cast<size_t>(d - first_)]->totals);
  }
  // A row or column inside this process exchanges through threads; one that spans processes
  // through a HierarchicalCollectives over the processes that host it (a communicator of their
  // own), which serves every such line of this process at once and calls MPI from the thread of
  // this process's first device (the one that called MPI_Init_thread: the pool's calling thread).
  auto lines_of = [&](const MeshLines& lines, int size,
                      std::shared_ptr<HierarchicalCollectives>& exchange,
                      std::vector<std::unique_ptr<CollectiveGroup>>& out) {
    const int count = static_cast<int>(lines.lines.size());
    if (!lines.within) {
      exchange = std::make_shared<HierarchicalCollectives>(
          options_.processes->split(lines.color, rank), lines.members, options_.algorithm, count);
      assert(exchange->size() == size);
    }
    for (int g = 0; g < count; ++g)
      out.push_back(lines.within
                        ? std::make_unique<CollectiveGroup>(size, options_.algorithm, options_.link)
                        : std::make_unique<CollectiveGroup>(exchange->group(g), lines.members));
  };
  lines_of(row_lines, plan_.model, row_exchange_, rows_);
  lines_of(col_lines, plan_.batch, column_exchange_, columns_);
  // The member that exchanges for a spanning axis's lines is the first device here.
  const Device& front = *devices_.front();
  assert(row_lines.within || (front.row == 0 && front.row_rank == 0));
  assert(col_lines.within || (front.col == 0 && front.col_rank == 0));
  (void)front;
  // Norm clipping needs the norm of whole variables, so the executor clips across slices and the
  // device optimizers only clip by value (at most one of the three is set).
  clip_norm_ = (optimizer_spec_.clipnorm && *optimizer_spec_.clipnorm > 0.0) ||
               (optimizer_spec_.global_clipnorm && *optimizer_spec_.global_clipnorm > 0.0);
  for (const auto& v : vars) model_values_.push_back(&v.value);
}

ModelParallelExecutor::~ModelParallelExecutor() = default;

std::vector<const Matrix*> ModelParallelExecutor::device_values(int index) const {
  return devices_[static_cast<size_t>(index)]->const_params;
}

std::vector<DeviceMemory> ModelParallelExecutor::device_memory() const {
  std::vector<DeviceMemory> out;
  for (const auto& d : devices_) {
    const Device& dev = *d;
    DeviceMemory m;
    m.weights = matrix_bytes(dev.values);
    m.gradients = matrix_bytes(dev.grads);
    m.optimizer_slots = dev.optimizer ? dev.optimizer->slot_bytes() : 0;
    m.activations =
        matrix_bytes(dev.z) + matrix_bytes(dev.a) + matrix_bytes(dev.cache) + matrix_bytes(dev.da);
    m.buffers = static_cast<int64_t>(sizeof(float)) * (dev.shard.x.size() + dev.shard.y.size()) +
                rows_[static_cast<size_t>(dev.row)]->buffer_bytes(dev.row_rank) +
                columns_[static_cast<size_t>(dev.col)]->buffer_bytes(dev.col_rank);
    for (const auto* lists : {&dev.piece, &dev.gathered, &dev.full_bias})
      for (const std::vector<float>& v : *lists) m.buffers += float_bytes(v);
    m.buffers += matrix_bytes(dev.conv_bias) + matrix_bytes(dev.conv_bias_grad);
    out.push_back(m);
  }
  return out;
}

const std::vector<SpanInjection>& ModelParallelExecutor::injections(int index) const {
  return timelines_[index].injections();
}

void ModelParallelExecutor::prepare(Index max_rows) {
  const Network& net = *ctx_.graph.network;
  const Index cap = std::max<Index>((max_rows + plan_.batch - 1) / plan_.batch, 1);
  const int model = plan_.model;
  if (devices_.front()->capacity >= cap) return;
  for (auto& dev : devices_) {
    dev->capacity = cap;
    const size_t layers = net.layers().size();
    for (auto* v : {&dev->z, &dev->a, &dev->cache, &dev->da}) v->assign(layers, Matrix());
    for (auto* v : {&dev->piece, &dev->gathered, &dev->full_bias}) v->assign(layers, {});
    for (auto* v : {&dev->conv_bias, &dev->conv_bias_grad}) v->assign(layers, Matrix());
    dev->scratch.assign(layers, {});
    dev->shard.reserve(cap, net.input_units());
    int64_t in = net.input_units();
    for (size_t l = 0; l < layers; ++l) {
      const Layer& layer = *net.layers()[l];
      const int64_t units = net.layer_units(l);
      dev->a[l].resize(cap, units);
      dev->da[l].resize(cap, units);
      if (dynamic_cast<const Dense*>(&layer)) {
        dev->z[l].resize(cap, units);
        const size_t k = net.first_variable(l);
        const Split split = plan_.variables[k];
        if (split == Split::kColumns) {
          dev->piece[l].resize(static_cast<size_t>(cap * units / model));
          dev->gathered[l].resize(static_cast<size_t>(cap * units));
        } else if (split == Split::kRows) {
          dev->piece[l].resize(static_cast<size_t>(cap * in / model));
          dev->gathered[l].resize(static_cast<size_t>(cap * in));
        } else if (net.variable_count(l) > 1 && plan_.variables[k + 1] == Split::kColumns) {
          dev->full_bias[l].resize(static_cast<size_t>(units));
        }
      } else {
        dev->cache[l].resize(cap, layer.cache_units(in));
        if (sharded_conv(l)) {
          // Its output channels' piece and the row's gathered output, as a Dense split by units.
          dev->piece[l].resize(static_cast<size_t>(cap * units / model));
          dev->gathered[l].resize(static_cast<size_t>(cap * units));
          const size_t k = net.first_variable(l);
          if (net.variable_count(l) > 1 && plan_.variables[k + 1] == Split::kReplicated) {
            // A replicated bias: the device's channels of it, and their gradient.
            const Index c = dev->values[k].cols();
            dev->conv_bias[l].resize(1, c);
            dev->conv_bias_grad[l].resize(1, c);
          }
        }
      }
      dev->scratch[l].assign(static_cast<size_t>(layer.scratch_size()), 0.0);
      dev->batch_sums.resize(
          std::max(dev->batch_sums.size(), static_cast<size_t>(layer.scratch_size())));
      in = units;
    }
  }
  // The collectives' buffers, sized for the largest call of a row (an activation or input
  // gradient of `cap` rows, or the clip norms) and of a column (the gradients).
  int64_t widest = net.input_units();
  for (size_t l = 0; l < net.layers().size(); ++l) widest = std::max(widest, net.layer_units(l));
  row_elements_ = std::max<int64_t>(cap * widest, static_cast<int64_t>(ctx_.variables->size()));
  pool_.dispatch(
      [](void* self, int d) {
        auto& e = *static_cast<ModelParallelExecutor*>(self);
        const Device& dev = *e.devices_[static_cast<size_t>(d)];
        e.rows_[static_cast<size_t>(dev.row)]->warm_up(dev.row_rank, e.row_elements_);
        e.columns_[static_cast<size_t>(dev.col)]->warm_up(
            dev.col_rank, std::max<int64_t>(total_size(dev.grad_pieces),
                                            static_cast<int64_t>(dev.batch_sums.size())));
      },
      this);
}

void ModelParallelExecutor::reduce_and_update(Device& dev, Clock::time_point t) {
  const int model = plan_.model;
  const size_t n_vars = dev.values.size();
  DeviceTimeline& timeline = timelines_[dev.index];
  // The gradients summed along the batch axis: every device of a column gets the same sums.
  t = columns_[static_cast<size_t>(dev.col)]->all_reduce(dev.col_rank, timeline, t,
                                                         dev.grad_pieces);
  if (model > 1) {
    // A column is not every device: all wait for all, so an error on any device before this
    // point stops every update and the slices stay consistent.
    const int parity = everyone_.arrive(dev.index, t);
    pool_.barrier();
    t = everyone_.record_waiting(dev.index, parity, timeline);
  }
  const Network& net = *ctx_.graph.network;
  errors_.guarded(dev.index,
                  [&] { net.add_regularization_gradient(dev.const_params, dev.grad_ptrs); });
  if (clip_norm_) {
    // The squared norm of each whole variable: the sum of its slices' (a replicated variable
    // counted once, from model device 0).
    errors_.guarded(dev.index, [&] {
      for (size_t v = 0; v < n_vars; ++v)
        dev.squared_norms[v] =
            dev.grad_ptrs[v] && (plan_.variables[v] != Split::kReplicated || dev.m == 0)
                ? dev.grads[v].squaredNorm()
                : 0.0f;
    });
    if (model > 1) {
      t = timeline.end_span(SpanKind::kUpdate, t);
      t = rows_[static_cast<size_t>(dev.row)]->all_reduce(dev.row_rank, timeline, t,
                                                          std::span<float>(dev.squared_norms));
    }
    errors_.guarded(dev.index, [&] {
      // keras/src/optimizers/base_optimizer.py _clip_by_norm and clip_by_global_norm.
      if (optimizer_spec_.clipnorm && *optimizer_spec_.clipnorm > 0.0) {
        const float c = static_cast<float>(*optimizer_spec_.clipnorm);
        for (size_t v = 0; v < n_vars; ++v) {
          if (!dev.grad_ptrs[v]) continue;
          const float l2sum = dev.squared_norms[v];
          const float l2norm = l2sum > 0.0f ? std::sqrt(l2sum) : l2sum;
          dev.grads[v].array() = dev.grads[v].array() * c / std::max(l2norm, c);
        }
      } else {
        const float c = static_cast<float>(*optimizer_spec_.global_clipnorm);
        float squared = 0.0f;
        for (size_t v = 0; v < n_vars; ++v)
          if (dev.grad_ptrs[v]) squared += dev.squared_norms[v];
        const float norm = std::sqrt(squared);
        const float scale = c * std::min(1.0f / norm, 1.0f / c) + (norm - norm);
        for (size_t v = 0; v < n_vars; ++v)
          if (dev.grad_ptrs[v]) dev.grads[v].array() *= scale;
      }
    });
  }
  errors_.guarded(dev.index, [&] {
    dev.trainable_vars.clear();
    dev.trainable_grads.clear();
    for (size_t v = 0; v < n_vars; ++v) {
      if (!dev.grad_ptrs[v]) continue;
      dev.trainable_vars.push_back(dev.params[v]);
      dev.trainable_grads.push_back(dev.grad_ptrs[v]);
    }
    dev.optimizer->apply(dev.trainable_vars, dev.trainable_grads);
    // The first batch group of the process writes its slices back (replicated values once,
    // from model 0); every row holds the same values. When rows span processes, the other
    // processes' slices arrive by sync_model.
    if (!dev.writes) return;
    auto& vars = *ctx_.variables;
    for (size_t v = 0; v < n_vars; ++v) {
      if ((!dev.grad_ptrs[v] && !state_variables_[v]) ||
          (plan_.variables[v] == Split::kReplicated && dev.m != 0))
        continue;
      const SliceRect r = slice_rect(vars[v].value, plan_.variables[v], dev.m, model);
      vars[v].value.block(r.row, r.col, r.rows, r.cols) = dev.values[v];
    }
  });
  timeline.end_span(SpanKind::kUpdate, t);
}

void ModelParallelExecutor::run_device(void* self, int device) {
  static_cast<ModelParallelExecutor*>(self)->device_step(device);
}

void ModelParallelExecutor::device_step(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  DeviceTimeline& timeline = timelines_[d];
  timeline.clear();
  const Index off = job_.offsets[static_cast<size_t>(dev.b)];
  const Index rows = job_.sizes[static_cast<size_t>(dev.b)];
  assert(rows <= dev.capacity);
  auto t = Clock::now();
  errors_.guarded(d, [&] { dev.shard.copy(job_, off, rows); });
  t = timeline.end_span(SpanKind::kShardCopy, t);
  const ConstMatrixRef x = dev.shard.x.topRows(rows);
  t = forward(dev, x, off, rows, t);
  const Network& net = *ctx_.graph.network;
  const size_t last = net.layers().size() - 1;
  const ConstMatrixRef y_pred = dev.a[last].topRows(rows);
  // Every device of a batch group holds the same outputs; model device 0 reports them.
  const bool reports = dev.m == 0;
  if (job_.phase == BatchJob::Phase::kPredict) {
    if (reports) errors_.guarded(d, [&] { job_.out->middleRows(off, rows) = y_pred; });
    return;
  }
  const ConstMatrixRef y = dev.shard.y.topRows(rows);
  errors_.guarded(d, [&] {
    double loss = 0.0;
    if (job_.training())
      loss = ctx_.graph.loss->sum_and_gradient(y_pred, y, job_.scale, dev.da[last].topRows(rows));
    else if (reports)
      loss = ctx_.graph.loss->sum(y_pred, y);
    if (reports) add_shard_totals(ctx_.graph, y_pred, y, loss, dev.totals);
  });
  t = timeline.end_span(SpanKind::kForward, t);
  if (!job_.training()) return;
  t = backward(dev, x, rows, t);
  // BatchNormalization's moving statistics: the same global ones on every device.
  errors_.guarded(d, [&] {
    for (size_t l = 0; l < net.layers().size(); ++l)
      if (!dev.scratch[l].empty())
        net.layers()[l]->update_state(std::span<Matrix* const>(dev.params)
                                          .subspan(net.first_variable(l), net.variable_count(l)),
                                      dev.scratch[l]);
  });
  t = timeline.end_span(SpanKind::kBackward, t);
  reduce_and_update(dev, t);
}

void ModelParallelExecutor::run(BatchJob::Phase phase, const ConstMatrixRef& x,
                                const ConstMatrixRef* y, MatrixRef* out, StepTotals* totals) {
  job_.start(phase, x, y, out, plan_.batch);
  if (totals) {
    // The model's variables are current (every update is written back; when rows span
    // processes, the others' slices are gathered first, if there is a penalty to compute).
    if (model_stale_ && ctx_.graph.network->has_regularization()) sync_model();
    totals->reg_weighted +=
        ctx_.graph.network->regularization_loss(model_values_) * static_cast<double>(x.rows());
    for (auto& d : devices_) d->totals.reset(totals->metric_states.size());
    scratch_totals_.reset(totals->metric_states.size());
  }
  errors_.reset();
  pool_.dispatch(&ModelParallelExecutor::run_device, this);
  errors_.rethrow_first();
  ProcessGroup* processes = process_count(options_) > 1 ? options_.processes.get() : nullptr;
  if (totals && processes) {
    // Every row's totals from every process, in row order (row 0's totals are the scratch).
    exchange_.add_totals(*processes, row_owner_, row_totals_, scratch_totals_, *totals);
  } else if (totals) {
    for (StepTotals* t : row_totals_) totals->add(*t);
  }
  if (out && processes) exchange_.gather_rows(*processes, job_, row_owner_, *out);
  if (job_.training()) {
    model_stale_ = rows_span_;
    timelines_.publish(job_.step);
    for (size_t d = 0; d < devices_.size(); ++d)
      timelines_.trace().shard_rows[d] = job_.sizes[static_cast<size_t>(devices_[d]->b)];
  }
}

void ModelParallelExecutor::ensure_optimizers() {
  if (devices_.front()->optimizer) return;
  ModelParallelOptimizers& s = *state_;
  const Optimizer& owner = *ctx_.optimizer;
  if (s.owner != &owner || s.owner_iterations != owner.iterations() ||
      s.devices.size() != devices_.size()) {
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
  // A model that has trained before (or loaded an optimizer state): every device continues from
  // its slice of the model optimizer's slots.
  if (owner.iterations() != 0 && s.owner_iterations == owner.iterations() &&
      devices_.front()->optimizer->iterations() != owner.iterations()) {
    const auto owner_slots = owner.keras_slots();
    const std::vector<size_t> index = trainable_variable_indices();
    std::vector<Matrix> values;
    for (auto& dev : devices_) {
      values.clear();
      for (const Optimizer::SlotVariable& slot : owner_slots) {
        const size_t v = index[slot.variable];
        const SliceRect r =
            slice_rect((*ctx_.variables)[v].value, plan_.variables[v], dev->m, plan_.model);
        values.emplace_back(slot.value->block(r.row, r.col, r.rows, r.cols));
      }
      dev->optimizer->set_state(owner.iterations(), values);
    }
  }
  pull_from_model();
}

std::vector<size_t> ModelParallelExecutor::trainable_variable_indices() const {
  std::vector<size_t> index;
  for (size_t v = 0; v < ctx_.variables->size(); ++v)
    if ((*ctx_.variables)[v].trainable) index.push_back(v);
  return index;
}

// The model's optimizer takes the devices' slots (the first batch row holds every slice; the
// other rows are copies), so a saved model or a later fit() continues from the whole state. When
// rows span processes, every process takes the others' slices of the model and of the slots.
void ModelParallelExecutor::push_to_model() {
  sync_model();
  Device& first = *devices_.front();
  if (!first.optimizer || !ctx_.optimizer) return;
  const auto owner_slots = ctx_.optimizer->keras_slots();
  const std::vector<size_t> index = trainable_variable_indices();
  std::vector<Matrix> whole;
  for (const auto& slot : owner_slots) whole.push_back(*slot.value);
  std::vector<size_t> slot_variable;
  for (const auto& slot : owner_slots) slot_variable.push_back(index[slot.variable]);
  if (rows_span_) {
    std::vector<Matrix*> into;
    for (Matrix& w : whole) into.push_back(&w);
    gather_row_slices(
        [&](const Device& dev, std::vector<const Matrix*>& items) {
          for (const auto& slot : dev.optimizer->keras_slots()) items.push_back(slot.value);
        },
        slot_variable, into);
  } else {
    for (const auto& dev : devices_) {
      if (!dev->writes) continue;
      const auto slices = dev->optimizer->keras_slots();
      for (size_t i = 0; i < owner_slots.size(); ++i) {
        const size_t v = slot_variable[i];
        const SliceRect r =
            slice_rect((*ctx_.variables)[v].value, plan_.variables[v], dev->m, plan_.model);
        whole[i].block(r.row, r.col, r.rows, r.cols) = *slices[i].value;
      }
    }
  }
  ctx_.optimizer->set_state(first.optimizer->iterations(), whole);
  state_->owner_iterations = ctx_.optimizer->iterations();
}

void ModelParallelExecutor::sync_model() {
  if (!model_stale_) return;
  model_stale_ = false;
  auto& vars = *ctx_.variables;
  if (variable_index_.empty())
    for (size_t v = 0; v < vars.size(); ++v) {
      variable_index_.push_back(v);
      model_matrices_.push_back(&vars[v].value);
    }
  gather_row_slices(
      [](const Device& dev, std::vector<const Matrix*>& items) {
        for (const Matrix& value : dev.values) items.push_back(&value);
      },
      variable_index_, model_matrices_);
}

void ModelParallelExecutor::gather_row_slices(
    const std::function<void(const Device&, std::vector<const Matrix*>&)>& items,
    std::span<const size_t> variable, std::span<Matrix* const> whole) {
  ProcessGroup& group = *options_.processes;
  const int processes = group.size(), local = pool_.size();
  const auto& vars = *ctx_.variables;
  // Device (0, m) sends item i's slice; a replicated item comes from m = 0 only.
  auto sent = [&](int m, size_t i) {
    return m == 0 || plan_.variables[variable[i]] != Split::kReplicated;
  };
  auto floats = [&](int m) {
    int64_t n = 0;
    for (size_t i = 0; i < whole.size(); ++i)
      if (sent(m, i)) {
        const SliceRect r =
            slice_rect(vars[variable[i]].value, plan_.variables[variable[i]], m, plan_.model);
        n += static_cast<int64_t>(r.rows) * r.cols;
      }
    return n;
  };
  slice_counts_.assign(static_cast<size_t>(processes), 0);
  slice_displs_.assign(static_cast<size_t>(processes), 0);
  int64_t total = 0;
  for (int m = 0; m < plan_.model; ++m)
    slice_counts_[static_cast<size_t>(plan_.device_at(0, m) / local)] +=
        static_cast<int>(floats(m));
  for (int q = 0; q < processes; ++q) {
    slice_displs_[static_cast<size_t>(q)] = static_cast<int>(total);
    total += slice_counts_[static_cast<size_t>(q)];
  }
  slices_out_.clear();
  for (const auto& dev : devices_) {
    if (dev->b != 0) continue;
    item_list_.clear();
    items(*dev, item_list_);
    for (size_t i = 0; i < item_list_.size(); ++i)
      if (sent(dev->m, i))
        slices_out_.insert(slices_out_.end(), item_list_[i]->data(),
                           item_list_[i]->data() + item_list_[i]->size());
  }
  slices_in_.resize(static_cast<size_t>(total));
  group.all_gather(slices_out_.data(), slices_in_.data(), slice_counts_.data(),
                   slice_displs_.data());
  // Every process's slices in rank order, each process's by m: device (0, m) of process q.
  slice_at_.assign(slice_displs_.begin(), slice_displs_.end());
  for (int m = 0; m < plan_.model; ++m) {
    int& pos = slice_at_[static_cast<size_t>(plan_.device_at(0, m) / local)];
    for (size_t i = 0; i < whole.size(); ++i) {
      if (!sent(m, i)) continue;
      const SliceRect r =
          slice_rect(vars[variable[i]].value, plan_.variables[variable[i]], m, plan_.model);
      whole[i]->block(r.row, r.col, r.rows, r.cols) =
          Eigen::Map<const Matrix>(slices_in_.data() + pos, r.rows, r.cols);
      pos += static_cast<int>(r.rows * r.cols);
    }
  }
}

void ModelParallelExecutor::pull_from_model() {
  // Callbacks may have restored weights: every device takes its slice again.
  const auto& vars = *ctx_.variables;
  for (auto& dev : devices_) {
    for (size_t v = 0; v < vars.size(); ++v) {
      const SliceRect r = slice_rect(vars[v].value, plan_.variables[v], dev->m, plan_.model);
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
  job_.step = step;
  run(BatchJob::Phase::kTrain, x, &y, nullptr, &totals);
}

void ModelParallelExecutor::test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  run(BatchJob::Phase::kTest, x, &y, nullptr, &totals);
}

void ModelParallelExecutor::predict_step(ConstMatrixRef x, MatrixRef out) {
  run(BatchJob::Phase::kPredict, x, nullptr, &out, nullptr);
}

void use_model_parallel(Sequential& model, const DistributionSpec& spec, int devices,
                        const RehearsalOptions& options) {
  if (model.built()) {
    const ModelParallelPlan plan = make_model_parallel_plan(model.network(), spec, devices);
    if (const std::string why = process_error(plan, process_count(options)); !why.empty())
      throw InputError("distribution.mesh", why);
  }
  auto state = std::make_shared<ModelParallelOptimizers>();
  const Sequential* owner = &model;
  model.set_executor_factory([owner, spec, devices, state, options](const ExecutorContext& ctx) {
    return std::make_unique<ModelParallelExecutor>(
        ctx, make_model_parallel_plan(*ctx.graph.network, spec, devices),
        owner->compile_options().optimizer, state, options);
  });
}

}  // namespace fitbench
