#include "core/distribution/layout/device_plan.h"

#include <algorithm>
#include <cmath>

#include "core/distribution/layout/batch_shards.h"

namespace fitbench {
namespace {

std::string device_list(const std::vector<int>& devices) {
  std::string out;
  for (int d : devices) out += (out.empty() ? "cpu:" : ", cpu:") + std::to_string(d);
  return out;
}

}  // namespace

std::string mesh_process_error(const MeshPlacement& plan, int processes) {
  if (processes <= 1) return {};
  const std::string mesh = "the mesh's " + std::to_string(plan.batch) + " x " +
                           std::to_string(plan.model) + " devices (batch x model)";
  const std::string rule =
      "across processes every process hosts whole rows of the mesh (a batch group's model-axis "
      "devices stay in one process)";
  if (plan.batch % processes != 0)
    return mesh + " have " + std::to_string(plan.batch) +
           " batch groups, which cannot be spread evenly over " + std::to_string(processes) +
           " processes: " + rule + "; make the batch axis a multiple of the process count";
  const int local = plan.batch * plan.model / processes, rows = plan.batch / processes;
  for (int p = 0; p < processes; ++p) {
    for (int b = p * rows; b < (p + 1) * rows; ++b) {
      std::vector<int> row;
      bool outside = false;
      for (int m = 0; m < plan.model; ++m) {
        row.push_back(plan.at(b, m));
        outside |= row.back() / local != p;
      }
      if (outside)
        return mesh + " place batch group " + std::to_string(b) + " on " + device_list(row) +
               ", but process " + std::to_string(p) + " hosts cpu:" + std::to_string(p * local) +
               " to cpu:" + std::to_string(p * local + local - 1) + ": " + rule +
               "; name the batch axis first in distribution.mesh.axis_names";
    }
  }
  return {};
}

MeshPlacement mesh_placement(const DistributionSpec& spec) {
  MeshPlacement mesh;
  const auto& shape = spec.mesh_shape;
  const auto& names = spec.axis_names;
  if (shape.empty() || names.size() != shape.size()) return mesh;
  const std::string& batch_axis = spec.batch_dim_name.empty() ? names.front() : spec.batch_dim_name;
  const size_t batch_index = batch_axis == names.front() || shape.size() < 2 ? 0 : 1;
  mesh.batch = std::max(shape[batch_index], 1);
  mesh.model = shape.size() == 2 ? std::max(shape[1 - batch_index], 1) : 1;
  mesh.batch_axis = names[batch_index];
  if (shape.size() == 2) mesh.model_axis = names[1 - batch_index];
  mesh.device.resize(static_cast<size_t>(mesh.batch * mesh.model));
  for (int b = 0; b < mesh.batch; ++b)
    for (int m = 0; m < mesh.model; ++m)
      mesh.device[static_cast<size_t>(b * mesh.model + m)] =
          batch_index == 0 ? b * mesh.model + m : m * mesh.batch + b;
  return mesh;
}

int split_dimension(const VariableLayout& v, int model) {
  int dim = -1;
  if (model <= 1) return dim;
  for (size_t d = 0; d < v.axes.size() && d < v.shape.size(); ++d)
    if (!v.axes[d].empty()) dim = static_cast<int>(d);
  return dim;
}

std::vector<VariablePiece> variable_pieces(const std::vector<VariableLayout>& variables,
                                           const MeshPlacement& mesh) {
  std::vector<VariablePiece> out;
  std::vector<int> everyone(mesh.device);
  std::sort(everyone.begin(), everyone.end());
  for (size_t i = 0; i < variables.size(); ++i) {
    const VariableLayout& v = variables[i];
    const int dim = split_dimension(v, mesh.model);
    if (dim < 0) {
      out.push_back({static_cast<int>(i), -1, 0, 0, everyone});
      continue;
    }
    const int64_t piece = v.shape[static_cast<size_t>(dim)] / mesh.model;
    for (int m = 0; m < mesh.model; ++m) {
      VariablePiece p{static_cast<int>(i), dim, piece * m, piece * (m + 1), {}};
      for (int b = 0; b < mesh.batch; ++b) p.devices.push_back(mesh.at(b, m));
      std::sort(p.devices.begin(), p.devices.end());
      out.push_back(std::move(p));
    }
  }
  return out;
}

int64_t training_rows(int64_t samples, double validation_split) {
  if (!(validation_split > 0.0 && validation_split < 1.0)) return samples;
  return static_cast<int64_t>(std::floor(static_cast<double>(samples) * (1.0 - validation_split)));
}

std::vector<int64_t> batch_parts(int64_t rows, int parts) {
  const int n = std::max(parts, 1);
  std::vector<Index> offsets(static_cast<size_t>(n)), sizes(static_cast<size_t>(n));
  shard_rows(static_cast<Index>(std::max<int64_t>(rows, 0)), n, offsets, sizes);
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

}  // namespace fitbench
