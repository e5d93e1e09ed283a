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

std::string mesh_lines(const MeshPlacement& mesh, int processes, int p, bool rows, MeshLines& out) {
  out = MeshLines{};
  const int devices = mesh.batch * mesh.model;
  const int local = devices / std::max(processes, 1);
  const int lines = rows ? mesh.batch : mesh.model, positions = rows ? mesh.model : mesh.batch;
  auto device = [&](int line, int pos) { return rows ? mesh.at(line, pos) : mesh.at(pos, line); };
  const std::string grid = "the mesh's " + std::to_string(mesh.batch) + " x " +
                           std::to_string(mesh.model) + " devices (batch x model)";
  auto name = [&](int line) {
    return (rows ? "batch group " : "model index ") + std::to_string(line);
  };
  // What to change when a line's devices are spread over processes in unequal numbers.
  const std::string uneven_advice =
      ": across processes every mesh row and column must have as many devices in each process it "
      "spans; make the devices per process (" +
      std::to_string(local) + ") a multiple or a divisor of the mesh's " +
      (rows ? "model" : "batch") + " axis (" + std::to_string(positions) + ")";
  // Per process, the lines it hosts (ascending, as lines are visited in order).
  std::vector<std::vector<int>> hosted(static_cast<size_t>(processes));
  for (int line = 0; line < lines; ++line) {
    std::vector<int> on;  // the line's devices
    for (int pos = 0; pos < positions; ++pos) on.push_back(device(line, pos));
    // The line's runs of devices on one process.
    std::vector<int> owners, counts;
    for (int d : on) {
      const int q = d / local;
      if (owners.empty() || owners.back() != q) {
        owners.push_back(q);
        counts.push_back(0);
      }
      ++counts.back();
    }
    const std::string where = name(line) + " on " + device_list(on);
    for (size_t r = 1; r < owners.size(); ++r) {
      if (owners[r] <= owners[r - 1])
        return grid + " place " + where + " back and forth over processes " +
               std::to_string(owners[r - 1]) + " and " + std::to_string(owners[r]) +
               ": across processes a mesh row or column must meet each process once, in rank "
               "order; list the mesh's devices in order";
      if (counts[r] != counts[0])
        return grid + " place " + where + " unevenly over processes " + std::to_string(owners[0]) +
               " to " + std::to_string(owners.back()) + " (" + std::to_string(counts[0]) + " and " +
               std::to_string(counts[r]) + " devices)" + uneven_advice;
    }
    if (line == 0) out.members = counts[0];
    if (counts[0] != out.members)
      return grid + " place " + where + " with " + std::to_string(counts[0]) +
             " devices in a process where " + name(0) + " has " + std::to_string(out.members) +
             uneven_advice;
    out.within = out.within && owners.size() == 1;
    for (int q : owners) hosted[static_cast<size_t>(q)].push_back(line);
  }
  // The processes of a line host the same lines.
  for (int line = 0; line < lines; ++line) {
    int first = -1;
    for (int pos = 0; pos < positions; ++pos) {
      const int q = device(line, pos) / local;
      if (first < 0) first = q;
      if (hosted[static_cast<size_t>(q)] != hosted[static_cast<size_t>(first)])
        return grid + " place " + name(line) + " on processes " + std::to_string(first) + " and " +
               std::to_string(q) + ", which host different mesh " + (rows ? "rows" : "columns") +
               " besides: across processes the processes of a mesh row or column must host the "
               "same rows or columns; make the devices per process a multiple or a divisor of "
               "the mesh's axes";
    }
  }
  out.lines = hosted[static_cast<size_t>(p)];
  out.color = out.lines.empty() ? -1 : out.lines.front();
  return {};
}

std::string mesh_process_error(const MeshPlacement& plan, int processes) {
  if (processes <= 1) return {};
  const int devices = plan.batch * plan.model;
  if (devices % processes != 0)
    return "the mesh's " + std::to_string(plan.batch) + " x " + std::to_string(plan.model) +
           " devices (batch x model) cannot be spread evenly over " + std::to_string(processes) +
           " processes; make the mesh's size a multiple of the process count";
  MeshLines lines;
  for (bool rows : {true, false})
    if (std::string why = mesh_lines(plan, processes, 0, rows, lines); !why.empty()) return why;
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
