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
    const std::string place =
        v.entry >= 0 ? layout_entry_place(spec.layout_map[static_cast<size_t>(v.entry)].first)
                     : std::string("distribution.layout_map");
    const std::string of =
        v.path + ", a variable of " + layer.class_name() + " layer '" + layer.name() + "'";
    if (dim >= 0 && layer.class_name() == "Conv2D") {
      // A Conv2D computes its output channels apart: its (kh, kw, in, filters) kernel is split
      // along the filters, and its bias with it.
      const bool kernel = v.shape.size() == 4;
      if (kernel && dim != 3)
        throw InputError(place, "shards dimension " + std::to_string(dim) + " of " + of +
                                    "; fitbench splits a Conv2D kernel along its output channels "
                                    "only: use [null, null, null, \"" +
                                    v.axes[static_cast<size_t>(dim)] + "\"]");
      if (!kernel) {
        const size_t kernel_index = i - 1;  // a Conv2D's variables: kernel, then bias
        if (plan.variables[kernel_index] != Split::kColumns)
          throw InputError(place, "shards " + of +
                                      " while its kernel is replicated; shard the kernel's "
                                      "output channels too (its last dimension), or replicate "
                                      "the bias");
      }
    } else if (dim >= 0 && layer.class_name() != "Dense") {
      throw InputError(place, "shards " + of +
                                  "; fitbench shards the variables of Dense and Conv2D layers "
                                  "only, so use null for every dimension of this layer's "
                                  "variables (they are then replicated on every device of the "
                                  "model axis)");
    }
    // Keras dims to matrix axes: a kernel (input, units) is rows x columns, a bias one row; a
    // Conv2D kernel is the (kh * kw * in, filters) matrix, split by its columns.
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
