#include "core/distribution/layout/model_parallel_plan.h"

#include "core/base/error.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"

namespace fitbench {

ModelParallelPlan make_model_parallel_plan(const Network& network, const DistributionSpec& spec,
                                           int devices) {
  std::vector<VariableInfo> vars;
  for (const auto& v : network.variables()) vars.push_back({v.path, v.shape});
  const LayoutCheck check = check_layout_map(vars, spec, devices);
  check.throw_if_invalid();
  // The same placement and splits the views draw (device_plan.h).
  const MeshPlacement mesh = mesh_placement(spec);
  ModelParallelPlan plan;
  plan.batch = mesh.batch;
  plan.model = mesh.model;
  plan.device = mesh.device;
  using Split = ModelParallelPlan::Split;
  for (size_t i = 0; i < check.variables.size(); ++i) {
    const VariableLayout& v = check.variables[i];
    const int dim = split_dimension(v, plan.model);
    const Layer& layer = *network.layers()[static_cast<size_t>(network.variables()[i].layer)];
    if (dim >= 0 && layer.class_name() != "Dense")
      throw InputError(layout_entry_place(spec.layout_map[static_cast<size_t>(v.entry)].first),
                       "shards " + v.path + ", a variable of " + layer.class_name() + " layer '" +
                           layer.name() +
                           "'; fitbench shards the variables of Dense layers only, so use null "
                           "for every dimension of this layer's variables (they are then "
                           "replicated on every device of the model axis)");
    // Keras dims to matrix axes: a kernel (input, units) is rows x columns, a bias one row.
    plan.variables.push_back(dim < 0                           ? Split::kReplicated
                             : v.shape.size() == 2 && dim == 0 ? Split::kRows
                                                               : Split::kColumns);
  }
  return plan;
}

SliceRect slice_rect(const Matrix& full, ModelParallelPlan::Split split, int m, int model) {
  return slice_rect(full.rows(), full.cols(), split, m, model);
}

SliceRect slice_rect(Index rows, Index cols, ModelParallelPlan::Split split, int m, int model) {
  SliceRect r{0, 0, rows, cols};
  if (split == ModelParallelPlan::Split::kRows) {
    r.rows = rows / model;
    r.row = r.rows * m;
  } else if (split == ModelParallelPlan::Split::kColumns) {
    r.cols = cols / model;
    r.col = r.cols * m;
  }
  return r;
}

}  // namespace fitbench
