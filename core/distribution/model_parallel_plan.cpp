#include "core/distribution/model_parallel_plan.h"

#include "core/distribution/layout_map.h"

namespace fitbench {

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
  using Split = ModelParallelPlan::Split;
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

SliceRect slice_rect(const Matrix& full, ModelParallelPlan::Split split, int m, int model) {
  SliceRect r{0, 0, full.rows(), full.cols()};
  if (split == ModelParallelPlan::Split::kRows) {
    r.rows = full.rows() / model;
    r.row = r.rows * m;
  } else if (split == ModelParallelPlan::Split::kColumns) {
    r.cols = full.cols() / model;
    r.col = r.cols * m;
  }
  return r;
}

}  // namespace fitbench
