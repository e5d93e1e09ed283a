#include "core/run/capacity.h"

#include <algorithm>
#include <cmath>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/layout/model_parallel_plan.h"
#include "core/distribution/spec/strategies.h"
#include "core/nn/conv.h"
#include "core/nn/dense.h"
#include "core/nn/network.h"
#include "core/optimizers/optimizer_registry.h"
#include "core/run/run_plan.h"

namespace fitbench {
namespace {

// A variable as Sequential allocates it: a bias {units} is one row.
struct VariableMatrix {
  Index rows = 1, cols = 1;
  bool trainable = true;
  int64_t size() const { return rows * cols; }
};

std::vector<VariableMatrix> variable_matrices(const Network& net) {
  std::vector<VariableMatrix> out;
  for (const NetworkVariable& v : net.variables()) {
    VariableMatrix m;
    m.rows = matrix_rows(v.shape);
    m.cols = matrix_cols(v.shape);
    m.trainable = v.trainable;
    out.push_back(m);
  }
  return out;
}

// The staging buffers a rank of `ranks` keeps after CollectiveGroup::warm_up(elements): two (one
// per call parity), each sized by the largest call (ThreadCollectives::begin_call). Ring calls
// stage one chunk of ceil(elements / N); naive ones stage the whole buffer at rank 0 only.
int64_t staging_bytes(CollectiveAlgorithm algorithm, int ranks, int rank, int64_t elements) {
  if (ranks <= 1 || elements <= 0) return 0;
  int64_t floats = 0;
  if (algorithm == CollectiveAlgorithm::kRing)
    floats = (elements + ranks - 1) / ranks;
  else
    floats = rank == 0 ? elements : 0;
  return 2 * std::max<int64_t>(floats, 1) * kFloatBytes;
}

// The most rows one step takes, training or validating: what fit() prepares its executor for.
int64_t step_rows(const CapacityInput& in) {
  const int64_t train = std::min(in.batch_size, std::max<int64_t>(in.train_rows, 1));
  return std::max(train, std::min(in.batch_size, in.samples - in.train_rows));
}

int slots_per_variable(const OptimizerSpec& spec) {
  const OptimizerInfo* info = find_optimizer(spec.class_name);
  return info && info->slots_per_variable ? info->slots_per_variable(spec) : 0;
}

// One device, or DataParallel: every device holds every variable (DataParallelExecutor).
void plan_replicas(const CapacityInput& in, const Network& net, MemoryPlan& plan) {
  const bool distributed = in.distribution.class_name == kDataParallel;
  const int n = distributed ? std::max(in.devices, 1) : 1;
  const int64_t all = step_rows(in);
  const int64_t rows = distributed ? std::max<int64_t>((all + n - 1) / n, 1) : all;
  plan.rows_per_device = rows;
  plan.sharded_update =
      distributed && shards_update(n, elementwise_update(in.optimizer), plan.trainable, in.options);
  for (int d = 0; d < n; ++d) {
    DeviceMemory m;
    m.weights = plan.parameters * kFloatBytes;
    m.gradients = plan.parameters * kFloatBytes;  // a Replica keeps one per variable, frozen too
    const int64_t updated =
        plan.sharded_update ? chunk_of(plan.trainable, n, d).size : plan.trainable;
    m.optimizer_slots = plan.slots_per_variable * updated * kFloatBytes;
    m.activations = rows * net.workspace_floats_per_row() * kFloatBytes;
    if (distributed)
      m.buffers = rows * (in.features + in.targets) * kFloatBytes +
                  staging_bytes(in.options.algorithm, n, d, plan.trainable);
    plan.devices.push_back(m);
  }
  // Device 0 computes with the model's variables; with a sharded update every device has an
  // optimizer of its own and the model's keeps the whole state.
  if (plan.sharded_update) plan.host += plan.slots_per_variable * plan.trainable * kFloatBytes;
}

// ModelParallel: each device holds its slices (ModelParallelExecutor's constructor and
// prepare()); the model's variables and optimizer stay whole beside them.
void plan_model_parallel(const CapacityInput& in, const Network& net,
                         const std::vector<VariableMatrix>& vars, MemoryPlan& plan) {
  const ModelParallelPlan mp = mesh_plan(in, net);
  using Split = ModelParallelPlan::Split;
  const int64_t cap = std::max<int64_t>((step_rows(in) + mp.batch - 1) / mp.batch, 1);
  plan.rows_per_device = cap;
  int64_t widest = net.input_units();
  for (size_t l = 0; l < net.layers().size(); ++l) widest = std::max(widest, net.layer_units(l));
  const int64_t row_elements = std::max<int64_t>(cap * widest, static_cast<int64_t>(vars.size()));
  plan.devices.assign(static_cast<size_t>(mp.batch * mp.model), DeviceMemory{});
  for (int b = 0; b < mp.batch; ++b) {
    for (int m = 0; m < mp.model; ++m) {
      DeviceMemory dm;
      int64_t trainable = 0;
      for (size_t i = 0; i < vars.size(); ++i) {
        const SliceRect r = slice_rect(vars[i].rows, vars[i].cols, mp.variables[i], m, mp.model);
        dm.weights += r.rows * r.cols * kFloatBytes;
        dm.gradients += r.rows * r.cols * kFloatBytes;
        if (vars[i].trainable) trainable += r.rows * r.cols;
      }
      dm.optimizer_slots = plan.slots_per_variable * trainable * kFloatBytes;
      int64_t activations = 0, pieces = 0, in_units = net.input_units();
      for (size_t l = 0; l < net.layers().size(); ++l) {
        const Layer& layer = *net.layers()[l];
        const int64_t units = net.layer_units(l);
        activations += 2 * cap * units;  // output and its gradient
        if (dynamic_cast<const Dense*>(&layer)) {
          activations += cap * units;  // the pre-activation
          const size_t k = net.first_variable(l);
          const Split split = mp.variables[k];
          if (split == Split::kColumns)
            pieces += cap * units / mp.model + cap * units;
          else if (split == Split::kRows)
            pieces += cap * in_units / mp.model + cap * in_units;
          else if (net.variable_count(l) > 1 && mp.variables[k + 1] == Split::kColumns)
            pieces += units;
        } else {
          activations += cap * layer.cache_units(in_units);
          const size_t k = net.first_variable(l);
          if (dynamic_cast<const Conv2D*>(&layer) && mp.variables[k] == Split::kColumns) {
            // Its channels' piece and the gathered output; a replicated bias's channels and
            // their gradient.
            pieces += cap * units / mp.model + cap * units;
            if (net.variable_count(l) > 1 && mp.variables[k + 1] == Split::kReplicated)
              pieces += 2 * static_cast<const Conv2D&>(layer).spec().filters / mp.model;
          }
        }
        in_units = units;
      }
      dm.activations = activations * kFloatBytes;
      dm.buffers = (pieces + cap * (in.features + in.targets)) * kFloatBytes +
                   staging_bytes(in.options.algorithm, mp.model, m, row_elements) +
                   staging_bytes(in.options.algorithm, mp.batch, b, trainable);
      plan.devices[static_cast<size_t>(mp.device_at(b, m))] = dm;
    }
  }
  plan.host +=
      plan.parameters * kFloatBytes + plan.slots_per_variable * plan.trainable * kFloatBytes;
}

}  // namespace

CapacityInput scale_input(CapacityInput in, const CapacityScale& scale) {
  const auto times = [](int64_t n, double k) {
    return std::max<int64_t>(1, static_cast<int64_t>(std::llround(static_cast<double>(n) * k)));
  };
  if (scale.batch != 1.0) {
    in.batch_size = times(in.batch_size, scale.batch);
    in.train_rows = times(in.train_rows, scale.batch);
    in.samples = std::max(times(in.samples, scale.batch), in.train_rows);
  }
  if (scale.width != 1.0) {
    auto& layers = in.model.layers;
    size_t last = layers.size();
    for (size_t i = 0; i < layers.size(); ++i)
      if (layers[i].class_name == "Dense") last = i;
    for (size_t i = 0; i < layers.size(); ++i)
      if (layers[i].class_name == "Dense" && i != last)
        layers[i].units = times(layers[i].units, scale.width);
  }
  if (scale.devices != 1.0 && !in.distribution.class_name.empty()) {
    auto& shape = in.distribution.mesh_shape;
    if (in.distribution.class_name == kModelParallel && !shape.empty()) {
      const MeshPlacement mesh = mesh_placement(in.distribution);
      const size_t batch_index =
          shape.size() == 2 && mesh.model_axis == in.distribution.axis_names[0] ? 1 : 0;
      shape[batch_index] = static_cast<int>(times(shape[batch_index], scale.devices));
      in.devices = 1;
      for (int n : shape) in.devices *= n;
    } else {
      in.devices = static_cast<int>(times(in.devices, scale.devices));
    }
  }
  return in;
}

ModelParallelPlan mesh_plan(const CapacityInput& in, const Network& net) {
  DistributionSpec spec = in.distribution;
  std::vector<VariableInfo> infos;
  for (const NetworkVariable& v : net.variables()) infos.push_back({v.path, v.shape});
  fill_default_layout(spec, infos);
  return make_model_parallel_plan(net, spec, in.devices);
}

CapacityInput capacity_input(const RunPlan& plan) {
  CapacityInput in;
  in.model = plan.spec.model;
  in.optimizer = plan.spec.compile.optimizer;
  in.distribution = plan.spec.distribution;
  in.devices = plan.devices;
  if (plan.distributed()) in.options = rehearsal_options(plan.spec.devices, plan.devices);
  in.features = plan.data.x.cols();
  in.targets = plan.data.y.cols();
  in.samples = plan.data.size();
  in.train_rows = plan.train_rows();
  in.batch_size = plan.spec.fit.batch_size;
  return in;
}

int64_t MemoryPlan::devices_total() const {
  int64_t total = 0;
  for (const DeviceMemory& d : devices) total += d.total();
  return total;
}

int64_t MemoryPlan::largest_device() const {
  int64_t most = 0;
  for (const DeviceMemory& d : devices) most = std::max(most, d.total());
  return most;
}

MemoryPlan plan_memory(const CapacityInput& in) {
  Network net(in.model);
  net.build_shapes(in.features);
  const std::vector<VariableMatrix> vars = variable_matrices(net);
  MemoryPlan plan;
  for (const VariableMatrix& v : vars) {
    plan.parameters += v.size();
    if (v.trainable) plan.trainable += v.size();
  }
  plan.slots_per_variable = slots_per_variable(in.optimizer);
  if (in.distribution.class_name == kModelParallel)
    plan_model_parallel(in, net, vars, plan);
  else
    plan_replicas(in, net, plan);
  // fit()'s batch buffers (a shuffled batch is gathered into them) and the validation split's
  // copy; the data set itself.
  const int64_t width = in.features + in.targets;
  const int64_t batch = std::min(in.batch_size, std::max<int64_t>(in.train_rows, 1));
  plan.host += (batch + (in.samples - in.train_rows)) * width * kFloatBytes;
  plan.data = in.samples * width * kFloatBytes;
  return plan;
}

}  // namespace fitbench
