#include "core/distribution/executors/data_parallel_executor.h"

#include <cassert>
#include <map>

#include "core/base/error.h"
#include "core/distribution/collectives/hierarchical_collectives.h"
#include "core/distribution/collectives/thread_collectives.h"
#include "core/distribution/executors/batch_reducer.h"

namespace fitbench {
namespace {

bool multi_process(const RehearsalOptions& options) {
  return options.processes && options.processes->size() > 1;
}

// The devices this process hosts.
int local_count(int devices, const RehearsalOptions& options) {
  if (!multi_process(options)) return devices;
  assert(devices % options.processes->size() == 0);
  return devices / options.processes->size();
}

CollectiveGroup make_group(int devices, const RehearsalOptions& options) {
  if (!multi_process(options)) return CollectiveGroup(devices, options.algorithm, options.link);
  const int local = local_count(devices, options);
  return CollectiveGroup(
      std::make_unique<HierarchicalCollectives>(options.processes, local, options.algorithm),
      local);
}

// Spans a device records per train step at most: shard copy, forward, backward, then waiting,
// reduce_scatter, update, waiting, all_gather (sharded update) or waiting, all_reduce, update;
// and for each layer that sums statistics over the global batch (BatchNormalization: twice in
// forward, once in backward), the span the sum closes, waiting and the all_reduce.
size_t spans_per_step(const Network& net) {
  size_t layers = 0;
  for (const auto& layer : net.layers())
    if (layer->scratch_size() > 0) ++layers;
  return 8 + 9 * layers;
}

// The most doubles a layer sums over the global batch in one call (BatchNormalization's scratch
// bounds them).
int64_t batch_sum_size(const Network& net) {
  int64_t most = 0;
  for (const auto& layer : net.layers()) most = std::max(most, layer->scratch_size());
  return most;
}

}  // namespace

bool shards_update(int devices, bool elementwise, int64_t trainable_elements,
                   const RehearsalOptions& options) {
  return devices > 1 && elementwise && trainable_elements >= options.sharded_update_min_elements;
}

struct DataParallelExecutor::Device {
  std::vector<Matrix> own_values;  // empty for device 0, which uses the model's variables
  std::unique_ptr<Optimizer> optimizer;
  std::unique_ptr<Replica> replica;  // the parameter pointers and the gradient buffers
  // The forward/backward buffers (the executor runs the network itself so that forward and
  // backward are timed apart).
  Workspace ws;
  ShardBuffers shard;  // this device's copy of its shard
  StepTotals totals;
  std::vector<Matrix*> trainable_vars, trainable_grads;
  std::vector<std::span<float>> grad_pieces;  // the trainable gradients, reduced as one buffer
  std::vector<std::span<float>> var_pieces;   // the trainable variables, in the same order
  Chunk owned;  // the elements of that buffer this device updates (sharded update)
  std::vector<float> batch_sums;  // BatchNormalization's statistics through the all_reduce
};

DataParallelExecutor::DataParallelExecutor(const ExecutorContext& ctx, int devices,
                                           const RehearsalOptions& options)
    : ctx_(ctx),
      options_(options),
      devices_total_(devices),
      first_(multi_process(options) ? options.processes->rank() * local_count(devices, options)
                                    : 0),
      pool_(local_count(devices, options)),
      group_(make_group(devices, options)),
      timelines_(pool_.size(), options.speeds_of(first_, pool_.size()), pool_.oversubscribed(),
                 spans_per_step(*ctx.graph.network)),
      errors_(pool_.size()) {
  assert(options_.speed.empty() || static_cast<int>(options_.speed.size()) == devices);
  if (options_.per_device_batch_statistics && devices > 1) {
    // The variables a trainable layer updates itself (BatchNormalization's moving statistics).
    const Network& net = *ctx_.graph.network;
    for (size_t l = 0; l < net.layers().size(); ++l)
      if (net.layers()[l]->scratch_size() > 0 && net.layers()[l]->spec().trainable)
        for (size_t v = net.first_variable(l); v < net.first_variable(l) + net.variable_count(l);
             ++v)
          if (!(*ctx_.variables)[v].trainable) moving_statistics_.push_back(v);
  }
  forward_sums_ = ctx_.graph.network->batch_sums(false);
  backward_sums_ = ctx_.graph.network->batch_sums(true);
  const size_t state = ctx_.graph.metric_state_size();
  int64_t trainable = 0;
  for (const auto& v : *ctx_.variables)
    if (v.trainable) trainable += v.value.size();
  sharded_ =
      ctx_.optimizer && shards_update(devices, ctx_.optimizer->elementwise(), trainable, options_);
  for (int d = 0; d < pool_.size(); ++d) {
    auto dev = std::make_unique<Device>();
    std::vector<Matrix*> params;
    if (d == 0) {
      params = variable_values(*ctx_.variables);
    } else {
      for (const auto& v : *ctx_.variables) dev->own_values.push_back(v.value);
      for (auto& m : dev->own_values) params.push_back(&m);
    }
    // The run's chunk of the trainable elements this device updates (sharded update).
    dev->owned = chunk_of(trainable, devices, first_ + d);
    // Device 0 updates with the model's optimizer, unless each device keeps the slots of its
    // part only (a clone is the whole state until keep_range cuts it).
    if (ctx_.optimizer && (d > 0 || sharded_)) {
      dev->optimizer = ctx_.optimizer->clone();
      if (sharded_)
        dev->optimizer->keep_range(dev->owned.begin, dev->owned.begin + dev->owned.size);
    }
    dev->replica = std::make_unique<Replica>(ctx_.graph, params);
    dev->totals.reset(state);
    dev->trainable_vars.reserve(params.size());
    dev->trainable_grads.reserve(params.size());
    dev->grad_pieces = gradient_pieces(dev->replica->grads());
    dev->var_pieces.reserve(dev->grad_pieces.size());
    assert(total_size(dev->grad_pieces) == trainable);
    device_totals_.push_back(&dev->totals);
    devices_.push_back(std::move(dev));
  }
}

DataParallelExecutor::~DataParallelExecutor() = default;

void DataParallelExecutor::prepare(Index max_rows) {
  const Index per_device = std::max<Index>((max_rows + devices_total_ - 1) / devices_total_, 1);
  const Index features = ctx_.graph.network->input_units();
  for (auto& d : devices_) {
    ctx_.graph.network->reserve(d->ws, per_device);
    d->shard.reserve(per_device, features);
    d->batch_sums.resize(static_cast<size_t>(batch_sum_size(*ctx_.graph.network)));
  }
  if (!warmed_up_) {
    // The gradient all-reduce's buffers, sized once for all steps.
    pool_.dispatch(
        [](void* self, int d) {
          auto& e = *static_cast<DataParallelExecutor*>(self);
          const auto& dev = *e.devices_[static_cast<size_t>(d)];
          e.group_.warm_up(d, std::max<int64_t>(total_size(dev.grad_pieces),
                                                static_cast<int64_t>(dev.batch_sums.size())));
        },
        this);
    warmed_up_ = true;
  }
}

void DataParallelExecutor::pull_from_model() {
  // Device 0 computes on the model's variables; the others copy them (callbacks may have
  // restored weights) and take the model optimizer's learning rate.
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (d > 0)
      for (size_t i = 0; i < ctx_.variables->size(); ++i)
        devices_[d]->own_values[i] = (*ctx_.variables)[i].value;
    if (ctx_.optimizer && devices_[d]->optimizer &&
        devices_[d]->optimizer->learning_rate() != ctx_.optimizer->learning_rate() &&
        !ctx_.optimizer->has_schedule())
      devices_[d]->optimizer->set_learning_rate(ctx_.optimizer->learning_rate());
  }
}

// Device 0 trains the model's variables in place; with a sharded update, the model's optimizer
// takes the slots of every device's part (every process's too), so that a later fit() or a saved
// model continues from the whole state.
void DataParallelExecutor::push_to_model() {
  if (!sharded_update()) return;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Chunk c = devices_[d]->owned;
    ctx_.optimizer->copy_state_range(*devices_[d]->optimizer, c.begin, c.begin + c.size);
  }
  if (multi_process(options_)) gather_optimizer_state();
}

void DataParallelExecutor::gather_optimizer_state() {
  // The model's optimizer now holds this process's chunks of every slot; the other processes
  // send theirs (each kind of slot is one buffer over the trainable variables, chunked as the
  // gradients are).
  const int64_t total = total_size(devices_[0]->grad_pieces);
  std::map<std::string, std::vector<std::span<float>>> kinds;
  for (const Optimizer::SlotVariable& s : ctx_.optimizer->keras_slots()) {
    auto* m = const_cast<Matrix*>(s.value);  // the model's optimizer's own slots
    kinds[s.kind].emplace_back(m->data(), static_cast<size_t>(m->size()));
  }
  const int processes = options_.processes->size(), local = pool_.size();
  counts_.resize(static_cast<size_t>(processes));
  displs_.resize(static_cast<size_t>(processes));
  for (int q = 0; q < processes; ++q) {
    const Chunk first = chunk_of(total, devices_total_, q * local);
    const Chunk last = chunk_of(total, devices_total_, q * local + local - 1);
    counts_[static_cast<size_t>(q)] = static_cast<int>(last.begin + last.size - first.begin);
    displs_[static_cast<size_t>(q)] = static_cast<int>(first.begin);
  }
  const int64_t begin = displs_[static_cast<size_t>(options_.processes->rank())];
  const int64_t end = begin + counts_[static_cast<size_t>(options_.processes->rank())];
  for (auto& [kind, pieces] : kinds) {
    if (total_size(pieces) != total) continue;  // a slot kind not kept for every variable
    rows_out_.resize(static_cast<size_t>(end - begin));
    pieces_to_flat(pieces, rows_out_.data(), begin, end);
    rows_in_.resize(static_cast<size_t>(total));
    options_.processes->all_gather(rows_out_.data(), rows_in_.data(), counts_.data(),
                                   displs_.data());
    flat_to_pieces(rows_in_.data(), pieces, 0, total);
  }
}

std::vector<DeviceMemory> DataParallelExecutor::device_memory() const {
  std::vector<DeviceMemory> out;
  for (size_t d = 0; d < devices_.size(); ++d) {
    const Device& dev = *devices_[d];
    DeviceMemory m;
    m.weights = matrix_bytes(dev.replica->const_params());
    m.gradients = matrix_bytes(dev.replica->grad_storage());
    const Optimizer* opt = dev.optimizer ? dev.optimizer.get() : ctx_.optimizer;
    m.optimizer_slots = opt ? opt->slot_bytes() : 0;
    m.activations = workspace_bytes(dev.ws);
    m.buffers = static_cast<int64_t>(sizeof(float)) * (dev.shard.x.size() + dev.shard.y.size()) +
                group_.buffer_bytes(static_cast<int>(d));
    out.push_back(m);
  }
  return out;
}

std::vector<const Matrix*> DataParallelExecutor::replica_values(int device) const {
  auto p = devices_[static_cast<size_t>(device)]->replica->params();
  return std::vector<const Matrix*>(p.begin(), p.end());
}

const std::vector<SpanInjection>& DataParallelExecutor::injections(int device) const {
  return timelines_[device].injections();
}

void DataParallelExecutor::run_device(void* self, int device) {
  static_cast<DataParallelExecutor*>(self)->device_step(device);
}

void DataParallelExecutor::device_step(int d) {
  if (job_.training()) {
    train_device(d);
    return;
  }
  Device& dev = *devices_[static_cast<size_t>(d)];
  errors_.guarded(d, [&] {
    const Network& net = *ctx_.graph.network;
    const Index off = job_.offsets[first_ + d], rows = job_.sizes[first_ + d];
    const auto x = job_.x->middleRows(off, rows);
    net.forward(dev.replica->const_params(), x, dev.ws, ForwardContext{});
    const auto y_pred = net.output(dev.ws, rows);
    if (job_.phase == BatchJob::Phase::kPredict) {
      job_.out->middleRows(off, rows) = y_pred;
      return;
    }
    const auto y = job_.y->middleRows(off, rows);
    add_shard_totals(ctx_.graph, y_pred, y, ctx_.graph.loss->sum(y_pred, y), dev.totals);
  });
}

void DataParallelExecutor::train_device(int d) {
  Device& dev = *devices_[static_cast<size_t>(d)];
  const Network& net = *ctx_.graph.network;
  const Index off = job_.offsets[first_ + d], rows = job_.sizes[first_ + d];
  DeviceTimeline& timeline = timelines_[d];
  timeline.clear();
  auto t = Clock::now();
  errors_.guarded(d, [&] { dev.shard.copy(job_, off, rows); });
  t = timeline.end_span(SpanKind::kShardCopy, t);
  const auto x = dev.shard.x.topRows(rows);
  const auto y = dev.shard.y.topRows(rows);
  // Forward, loss (its gradient scaled by 1 / global batch) and metrics. BatchNormalization
  // normalizes by the global batch's statistics, as Keras's on a sharded batch: its sums go
  // through the reducer; with per-device statistics, by this shard's own.
  GroupBatchReducer reducer(group_, d, timeline, dev.batch_sums, SpanKind::kForward, t);
  const bool batch_sums =
      devices_total_ > 1 && net.has_state() && !options_.per_device_batch_statistics;
  const ForwardContext fc{.training = true,
                          .step = job_.step,
                          .row_offset = off,
                          .seed = ctx_.dropout_seed,
                          .batch = batch_sums ? &reducer : nullptr};
  errors_.guarded(d, [&] {
    net.forward(dev.replica->const_params(), x, dev.ws, fc);
    const auto y_pred = net.output(dev.ws, rows);
    const double loss =
        ctx_.graph.loss->sum_and_gradient(y_pred, y, job_.scale, net.output_grad(dev.ws, rows));
    add_shard_totals(ctx_.graph, y_pred, y, loss, dev.totals);
  });
  // A device that failed, or skipped its work for another's failure, still takes part in every
  // sum, so that none waits forever (the step then ends with the error).
  if (batch_sums && errors_.failed()) reducer.finish(forward_sums_);
  t = timeline.end_span(SpanKind::kForward, reducer.time());
  reducer.restart(SpanKind::kBackward, t);
  errors_.guarded(d, [&] {
    net.backward(dev.replica->const_params(), x, dev.ws, rows, dev.replica->grads(), fc);
    // The moving statistics: the same global ones on every replica (per-device statistics:
    // each replica's own, until share_moving_statistics gives every replica device 0's).
    net.update_state(dev.replica->params(), dev.ws);
  });
  if (batch_sums && errors_.failed()) reducer.finish(backward_sums_);
  t = timeline.end_span(SpanKind::kBackward, reducer.time());
  Optimizer& opt = dev.optimizer ? *dev.optimizer : *ctx_.optimizer;
  if (sharded_update()) {
    // The all-reduce split around the update: the gradients are reduce-scattered, each device
    // updates its 1/N of the variables (and keeps optimizer slots for that part only in use),
    // and the updated variables are all-gathered. The sums are the all-reduce's bits, and every
    // replica ends with the same variables. Every device takes part in both collectives, even
    // after an error (guarded() then skips the update), so that none waits forever.
    t = group_.reduce_scatter(d, timeline, t, dev.grad_pieces);
    // The variables' buffers, taken anew each step (a callback may have replaced a variable).
    dev.trainable_vars.clear();
    dev.trainable_grads.clear();
    dev.var_pieces.clear();
    const auto params = dev.replica->params();
    const auto grads = dev.replica->grads();
    for (size_t i = 0; i < grads.size(); ++i) {
      if (!grads[i]) continue;
      dev.trainable_vars.push_back(params[i]);
      dev.trainable_grads.push_back(grads[i]);
      dev.var_pieces.emplace_back(params[i]->data(), static_cast<size_t>(params[i]->size()));
    }
    errors_.guarded(d, [&] {
      net.add_regularization_gradient(dev.replica->const_params(), grads);
      opt.apply_range(dev.trainable_vars, dev.trainable_grads, dev.owned.begin,
                      dev.owned.begin + dev.owned.size);
    });
    t = timeline.end_span(SpanKind::kUpdate, t);
    group_.all_gather(d, timeline, t, dev.var_pieces);
    return;
  }
  // Every device takes part in the all-reduce, even after an error on any device, so that none
  // waits forever.
  t = group_.all_reduce(d, timeline, t, dev.grad_pieces);
  // An error on any device before the all-reduce is visible to all after it: every device skips
  // the update, so the replicas stay identical. Every replica applies the same update.
  errors_.guarded(d, [&] {
    apply_update(net, opt, dev.replica->params(), dev.replica->const_params(), dev.replica->grads(),
                 dev.trainable_vars, dev.trainable_grads);
  });
  timeline.end_span(SpanKind::kUpdate, t);
}

void DataParallelExecutor::run(BatchJob::Phase phase, const ConstMatrixRef& x,
                               const ConstMatrixRef* y, MatrixRef* out, StepTotals* totals,
                               std::span<const int64_t> index) {
  job_.start(phase, x, y, out, devices_total_, index);
  if (totals) {
    // The regularization loss is computed once, on device 0's (identical) replica.
    totals->reg_weighted +=
        ctx_.graph.network->regularization_loss(devices_[0]->replica->const_params()) *
        static_cast<double>(job_.rows());
    for (auto& d : devices_) d->totals.reset(totals->metric_states.size());
  }
  errors_.reset();
  pool_.dispatch(&DataParallelExecutor::run_device, this);
  errors_.rethrow_first();
  if (job_.training() && !moving_statistics_.empty()) share_moving_statistics();
  if (totals) add_device_totals(*totals);
  if (out && multi_process(options_))
    exchange_.gather_rows(*options_.processes, job_, pool_.size(), *out);
  if (job_.training()) {
    timelines_.publish(job_.step);
    for (size_t d = 0; d < devices_.size(); ++d)
      timelines_.trace().shard_rows[d] = job_.sizes[static_cast<size_t>(first_) + d];
  }
}

void DataParallelExecutor::share_moving_statistics() {
  // Device 0 of this process computes on the model's variables; the run's device 0 is process
  // 0's.
  std::vector<Variable>& model = *ctx_.variables;
  if (multi_process(options_))
    for (size_t v : moving_statistics_)
      options_.processes->broadcast(model[v].value.data(), model[v].value.size(), 0);
  for (size_t d = 1; d < devices_.size(); ++d)
    for (size_t v : moving_statistics_) devices_[d]->own_values[v] = model[v].value;
}

void DataParallelExecutor::add_device_totals(StepTotals& totals) {
  if (!multi_process(options_)) {
    for (auto& d : devices_) totals.add(d->totals);
    return;
  }
  // Every device's totals from every process, added in device order as one process adds them
  // (device 0's totals are reused as the scratch once sent).
  exchange_.add_totals(*options_.processes, device_totals_, devices_[0]->totals, totals);
}

void DataParallelExecutor::train_step(ConstMatrixRef x, ConstMatrixRef y, uint64_t step,
                                      StepTotals& totals) {
  job_.step = step;
  run(BatchJob::Phase::kTrain, x, &y, nullptr, &totals);
}

void DataParallelExecutor::train_step_rows(ConstMatrixRef x, ConstMatrixRef y,
                                           std::span<const int64_t> index, Matrix&, Matrix&,
                                           uint64_t step, StepTotals& totals) {
  job_.step = step;
  run(BatchJob::Phase::kTrain, x, &y, nullptr, &totals, index);
}

void DataParallelExecutor::test_step(ConstMatrixRef x, ConstMatrixRef y, StepTotals& totals) {
  run(BatchJob::Phase::kTest, x, &y, nullptr, &totals);
}

void DataParallelExecutor::predict_step(ConstMatrixRef x, MatrixRef out) {
  run(BatchJob::Phase::kPredict, x, nullptr, &out, nullptr);
}

}  // namespace fitbench
