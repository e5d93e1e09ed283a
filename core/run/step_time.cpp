#include "core/run/step_time.h"

#include <algorithm>

#include "core/distribution/collectives/collective_schedule.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/layout/batch_shards.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/layout/model_parallel_plan.h"
#include "core/distribution/spec/strategies.h"
#include "core/nn/conv.h"
#include "core/nn/dense.h"
#include "core/nn/network.h"
#include "core/nn/normalization.h"

namespace fitbench {
namespace {

double message_seconds(int64_t bytes, const LinkModel& link) {
  return link.latency_us * 1e-6 +
         (link.gbps > 0.0 ? static_cast<double>(bytes) / (link.gbps * 1e9) : 0.0);
}

// Bytes on every link of one all-reduce (what CollectiveSchedule::total_bytes() counts).
int64_t all_reduce_bytes(CollectiveAlgorithm algorithm, int ranks, int64_t elements) {
  if (ranks < 2) return 0;
  if (ranks <= 64) return CollectiveSchedule(algorithm, ranks, elements).total_bytes();
  // Ring: each of 2(N-1) steps moves every chunk once (E floats); naive: N-1 whole buffers in
  // and N-1 out.
  return 2 * (ranks - 1) * elements * kFloatBytes;
}

// Bytes on every link of an all-gather (or reduce-scatter) of `elements` floats in all.
int64_t gather_bytes(CollectiveAlgorithm algorithm, int ranks, int64_t elements) {
  if (ranks < 2) return 0;
  if (algorithm == CollectiveAlgorithm::kNaive) return (ranks - 1) * 2 * elements * kFloatBytes;
  return (ranks - 1) * elements * kFloatBytes;
}

struct StepCollectives {
  std::vector<CollectiveCost> list;
  void all_reduce(std::string what, int ranks, int groups, int64_t elements,
                  CollectiveAlgorithm algorithm, const LinkModel& link) {
    if (ranks < 2 || elements <= 0) return;
    list.push_back({std::move(what), CollectiveOp::kAllReduce, ranks, elements,
                    groups * all_reduce_bytes(algorithm, ranks, elements),
                    all_reduce_seconds(algorithm, ranks, elements, link)});
  }
  void all_gather(std::string what, int ranks, int groups, int64_t elements,
                  CollectiveAlgorithm algorithm, const LinkModel& link) {
    if (ranks < 2 || elements <= 0) return;
    list.push_back(
        {std::move(what), CollectiveOp::kAllGather, ranks, elements,
         groups * gather_bytes(algorithm, ranks, elements),
         modeled_link_us(CollectiveOp::kAllGather, algorithm, ranks, elements, link) * 1e-6});
  }
};

// BatchNormalization's sums of the global batch (Layer::batch_sums), each an all-reduce over the
// `ranks` devices that share the batch (`groups` such groups side by side): two in the forward
// pass and one in the backward pass per layer, as the executors run them.
void add_statistics_sums(const Network& net, int ranks, int groups, CollectiveAlgorithm algorithm,
                         const LinkModel& link, StepCollectives& forward,
                         StepCollectives& backward) {
  std::vector<int64_t> sizes;
  const auto& layers = net.layers();
  for (const auto& layer : layers) {
    sizes.clear();
    layer->batch_sums(false, false, sizes);
    for (int64_t s : sizes)
      forward.all_reduce(layer->name() + " statistics all_reduce", ranks, groups, s, algorithm,
                         link);
  }
  for (size_t l = layers.size(); l-- > 0;) {
    sizes.clear();
    layers[l]->batch_sums(true, l > 0, sizes);
    for (int64_t s : sizes)
      backward.all_reduce(layers[l]->name() + " statistics all_reduce", ranks, groups, s, algorithm,
                          link);
  }
}

// One row's FLOPs through a layer, forward and backward, and the matrix products among them
// (the part a layout splits over the model axis).
struct LayerFlops {
  double forward = 0.0;
  double backward = 0.0;
  double forward_products = 0.0;
  double backward_products = 0.0;
};

std::vector<LayerFlops> layer_flops(const Network& net) {
  std::vector<LayerFlops> out;
  int64_t inputs = net.input_units();
  for (size_t l = 0; l < net.layers().size(); ++l) {
    const int64_t units = net.layer_units(l);
    LayerFlops f;
    const auto* conv = dynamic_cast<const Conv2D*>(net.layers()[l].get());
    if (dynamic_cast<const Dense*>(net.layers()[l].get()) || conv) {
      // A Conv2D's product: each output pixel's window times the (window, filters) kernel.
      const double product =
          2.0 * (conv ? static_cast<double>(conv->pixels_out() * conv->window()) *
                            static_cast<double>(conv->spec().filters)
                      : static_cast<double>(inputs * units));
      // Forward: the product, bias and activation. Backward: the kernel's gradient, the bias's
      // and the activation's, and the input's gradient past the first layer.
      f.forward_products = product;
      f.backward_products = l > 0 ? 2.0 * product : product;
      f.forward = product + 2.0 * static_cast<double>(units);
      f.backward = f.backward_products + 2.0 * static_cast<double>(units);
    } else if (dynamic_cast<const LayerNormalization*>(net.layers()[l].get())) {
      // The moments, the normalization, gamma and beta: about 8 operations per unit forward;
      // gamma's and beta's sums and the input's gradient about 10 backward.
      f.forward = 8.0 * static_cast<double>(units);
      f.backward = 10.0 * static_cast<double>(units);
    } else {
      // An element-wise layer: one operation per unit forward, two backward.
      f.forward = static_cast<double>(units);
      f.backward = 2.0 * static_cast<double>(units);
    }
    out.push_back(f);
    inputs = units;
  }
  return out;
}

// The rows of each of `shards` shards of `rows` (shard_rows: the first ones one longer).
std::vector<int64_t> shard_sizes(int64_t rows, int shards) {
  std::vector<Index> offsets(static_cast<size_t>(shards)), sizes(static_cast<size_t>(shards));
  shard_rows(static_cast<Index>(rows), shards, offsets, sizes);
  return {sizes.begin(), sizes.end()};
}

int64_t train_step_rows(const CapacityInput& in) {
  return std::min(in.batch_size, std::max<int64_t>(in.train_rows, 1));
}

}  // namespace

double all_reduce_seconds(CollectiveAlgorithm algorithm, int ranks, int64_t elements,
                          const LinkModel& link) {
  if (ranks < 2) return 0.0;
  if (ranks > 64)
    return modeled_link_us(CollectiveOp::kAllReduce, algorithm, ranks, elements, link) * 1e-6;
  const CollectiveSchedule schedule(algorithm, ranks, elements);
  double total = 0.0;
  std::vector<double> sent(static_cast<size_t>(ranks)), received(static_cast<size_t>(ranks));
  for (int step = 1; step <= schedule.steps(); ++step) {
    std::fill(sent.begin(), sent.end(), 0.0);
    std::fill(received.begin(), received.end(), 0.0);
    for (const CollectiveMessage& m : schedule.messages(step)) {
      const double s = message_seconds(m.bytes, link);
      sent[static_cast<size_t>(m.from)] += s;
      received[static_cast<size_t>(m.to)] += s;
    }
    // A device sends (and receives) its messages of a step one after another.
    double busiest = 0.0;
    for (int d = 0; d < ranks; ++d)
      busiest = std::max({busiest, sent[static_cast<size_t>(d)], received[static_cast<size_t>(d)]});
    total += busiest;
  }
  return total;
}

double row_flops(const CapacityInput& in) {
  Network net(in.model);
  net.build_shapes(in.features);
  double flops = 0.0;
  for (const LayerFlops& l : layer_flops(net)) flops += l.forward + l.backward;
  return flops;
}

double update_flops_per_float(const OptimizerSpec& spec) {
  const std::string& c = spec.class_name;
  if (c == "SGD") return spec.momentum > 0.0 ? 4.0 : 2.0;
  if (c == "Adam" || c == "AdamW") return spec.amsgrad ? 13.0 : 12.0;
  if (c == "RMSprop") return 7.0 + (spec.momentum > 0.0 ? 2.0 : 0.0) + (spec.centered ? 4.0 : 0.0);
  if (c == "Adagrad") return 6.0;
  return 10.0;
}

StepPhases predict_step_phases(const CapacityInput& in, const Target& target) {
  StepPhases out;
  Network net(in.model);
  net.build_shapes(in.features);
  int64_t trainable = 0;
  for (const NetworkVariable& v : net.variables())
    if (v.trainable) {
      int64_t size = 1;
      for (int64_t d : v.shape) size *= d;
      trainable += size;
    }
  const double per_float = update_flops_per_float(in.optimizer);
  const std::vector<LayerFlops> layers = layer_flops(net);
  const int64_t batch = train_step_rows(in);
  const CollectiveAlgorithm algorithm = in.options.algorithm;
  StepCollectives forward, backward;
  // Each device's FLOPs: forward, backward and update.
  struct Flops {
    int64_t rows = 0;
    double forward = 0.0, backward = 0.0, update = 0.0;
  };
  std::vector<Flops> devices;
  if (in.distribution.class_name == kModelParallel) {
    const ModelParallelPlan mp = mesh_plan(in, net);
    using Split = ModelParallelPlan::Split;
    const int64_t rows = (batch + mp.batch - 1) / mp.batch;
    const LinkModel& row_link = target.link_for(mp.model);
    const LinkModel& column_link = target.link_for(mp.batch * mp.model);
    // A row's products split over the model axis; everything else each device does whole.
    double row_forward = 0.0, row_backward = 0.0;
    int64_t inputs = net.input_units();
    for (size_t l = 0; l < net.layers().size(); ++l) {
      const int64_t units = net.layer_units(l);
      row_forward += layers[l].forward;
      row_backward += layers[l].backward;
      const auto* conv = dynamic_cast<const Conv2D*>(net.layers()[l].get());
      if (conv && mp.variables[net.first_variable(l)] == Split::kColumns) {
        // Split by its output channels: each device its filters' product; the row all-gathers
        // the output, all-reduces the input gradient and, for a replicated bias, all-gathers its
        // gradient.
        const size_t k = net.first_variable(l);
        row_forward -= layers[l].forward_products * (1.0 - 1.0 / mp.model);
        row_backward -= layers[l].backward_products * (1.0 - 1.0 / mp.model);
        const std::string name = net.layers()[l]->name();
        forward.all_gather(name + " forward all_gather", mp.model, mp.batch, rows * units,
                           algorithm, row_link);
        if (net.variable_count(l) > 1 && mp.variables[k + 1] == Split::kReplicated)
          backward.all_gather(name + " bias gradient all_gather", mp.model, mp.batch,
                              conv->spec().filters, algorithm, row_link);
        if (l > 0)
          backward.all_reduce(name + " backward all_reduce", mp.model, mp.batch, rows * inputs,
                              algorithm, row_link);
      } else if (dynamic_cast<const Dense*>(net.layers()[l].get())) {
        const size_t k = net.first_variable(l);
        const Split split = mp.variables[k];
        if (split != Split::kReplicated) {
          row_forward -= layers[l].forward_products * (1.0 - 1.0 / mp.model);
          row_backward -= layers[l].backward_products * (1.0 - 1.0 / mp.model);
        }
        const std::string name = net.layers()[l]->name();
        if (split == Split::kColumns) {
          forward.all_gather(name + " forward all_gather", mp.model, mp.batch, rows * units,
                             algorithm, row_link);
          if (l > 0)
            backward.all_reduce(name + " backward all_reduce", mp.model, mp.batch, rows * inputs,
                                algorithm, row_link);
        } else if (split == Split::kRows) {
          forward.all_reduce(name + " forward all_reduce", mp.model, mp.batch, rows * units,
                             algorithm, row_link);
          if (l > 0)
            backward.all_gather(name + " backward all_gather", mp.model, mp.batch, rows * inputs,
                                algorithm, row_link);
        } else if (net.variable_count(l) > 1 && mp.variables[k + 1] == Split::kColumns) {
          forward.all_gather(name + " bias all_gather", mp.model, mp.batch, units, algorithm,
                             row_link);
        }
      }
      inputs = units;
    }
    // Each device updates its slice of every trainable variable (the same on every mesh row).
    const std::vector<NetworkVariable>& vars = net.variables();
    std::vector<int64_t> slice(static_cast<size_t>(mp.model), 0);
    for (size_t i = 0; i < vars.size(); ++i) {
      if (!vars[i].trainable) continue;
      const Index r = matrix_rows(vars[i].shape), cols = matrix_cols(vars[i].shape);
      for (int m = 0; m < mp.model; ++m) {
        const SliceRect s = slice_rect(r, cols, mp.variables[i], m, mp.model);
        slice[static_cast<size_t>(m)] += s.rows * s.cols;
      }
    }
    add_statistics_sums(net, mp.batch, mp.model, algorithm, column_link, forward, backward);
    backward.all_reduce("gradient all_reduce", mp.batch, mp.model, slice.front(), algorithm,
                        column_link);
    const std::vector<int64_t> mesh_rows = shard_sizes(batch, mp.batch);
    for (int b = 0; b < mp.batch; ++b)
      for (int m = 0; m < mp.model; ++m) {
        const auto r = static_cast<double>(mesh_rows[static_cast<size_t>(b)]);
        devices.push_back({mesh_rows[static_cast<size_t>(b)], r * row_forward, r * row_backward,
                           per_float * static_cast<double>(slice[static_cast<size_t>(m)])});
      }
  } else {
    const bool distributed = in.distribution.class_name == kDataParallel;
    const int n = distributed ? std::max(in.devices, 1) : 1;
    const bool sharded =
        distributed && shards_update(n, elementwise_update(in.optimizer), trainable, in.options);
    double row_forward = 0.0, row_backward = 0.0;
    for (const LayerFlops& l : layers) {
      row_forward += l.forward;
      row_backward += l.backward;
    }
    const std::vector<int64_t> rows = shard_sizes(batch, n);
    const std::vector<int64_t> updated =
        sharded ? shard_sizes(trainable, n) : std::vector(size_t(n), trainable);
    for (int d = 0; d < n; ++d) {
      const auto r = static_cast<double>(rows[static_cast<size_t>(d)]);
      devices.push_back({rows[static_cast<size_t>(d)], r * row_forward, r * row_backward,
                         per_float * static_cast<double>(updated[static_cast<size_t>(d)])});
    }
    const LinkModel& link = target.link_for(n);
    // Per-device statistics (devices.batch_norm_statistics) sum nothing.
    if (!in.options.per_device_batch_statistics)
      add_statistics_sums(net, n, 1, algorithm, link, forward, backward);
    if (sharded && algorithm == CollectiveAlgorithm::kNaive) {
      // Two collectives instead of one: through device 0, each a chunk in and the whole out.
      backward.list.push_back(
          {"gradient reduce_scatter", CollectiveOp::kReduceScatter, n, trainable,
           gather_bytes(algorithm, n, trainable),
           modeled_link_us(CollectiveOp::kReduceScatter, algorithm, n, trainable, link) * 1e-6});
      backward.all_gather("variable all_gather", n, 1, trainable, algorithm, link);
    } else {
      // The ring's reduce-scatter and all-gather are the all-reduce's two halves.
      backward.all_reduce(
          sharded ? "gradient reduce_scatter + variable all_gather" : "gradient all_reduce", n, 1,
          trainable, algorithm, link);
    }
  }
  // Devices beyond the cores that compute at once take turns.
  const double count = std::max(in.devices, 1);
  const double share = target.cores > 0.0 ? std::max(1.0, count / target.cores) : 1.0;
  const double per_flop = target.flops > 0.0 ? share / target.flops : 0.0;
  for (const Flops& f : devices)
    out.devices.push_back(
        {f.rows, f.forward * per_flop, f.backward * per_flop, f.update * per_flop});
  out.forward_collectives = std::move(forward.list);
  out.backward_collectives = std::move(backward.list);
  return out;
}

StepTime predict_step(const CapacityInput& in, const Target& target) {
  const StepPhases phases = predict_step_phases(in, target);
  StepTime t;
  for (const DevicePhases& d : phases.devices) t.compute_s = std::max(t.compute_s, d.compute_s());
  for (const auto* list : {&phases.forward_collectives, &phases.backward_collectives})
    for (const CollectiveCost& cost : *list) {
      t.communication_s += cost.seconds;
      t.communication_bytes += cost.bytes_on_links;
      t.collectives.push_back(cost);
    }
  t.total_s = t.compute_s + t.communication_s;
  t.samples_per_s = t.total_s > 0.0 ? static_cast<double>(train_step_rows(in)) / t.total_s : 0.0;
  return t;
}

}  // namespace fitbench
