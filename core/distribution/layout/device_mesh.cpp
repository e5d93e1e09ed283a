#include "core/distribution/layout/device_mesh.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/distribution/spec/devices.h"

namespace fitbench {

std::string python_tuple(const std::vector<int64_t>& dims) {
  std::string s = "(";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + (dims.size() == 1 ? ",)" : ")");
}

std::string python_str_list(const std::vector<std::string>& names) {
  std::string s = "[";
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s + "]";
}

namespace {

std::vector<int64_t> widen(const std::vector<int>& v) { return {v.begin(), v.end()}; }

}  // namespace

// keras/src/distribution/distribution_lib.py DeviceMesh.__init__: the three ValueErrors keep
// Keras's sentences; the per-axis checks are fitbench's (numpy would fail less clearly).
std::vector<LayoutDiagnostic> check_device_mesh(const std::vector<int>& shape,
                                                const std::vector<std::string>& axis_names,
                                                std::optional<int> device_count) {
  using Kind = LayoutDiagnostic::Kind;
  const std::string place = "distribution.mesh";
  std::vector<LayoutDiagnostic> out;
  if (shape.empty() || axis_names.empty()) {
    out.push_back({place,
                   "Shape and axis_names cannot be empty. Received: shape=" +
                       python_tuple(widen(shape)) + ", axis_names=" + python_str_list(axis_names),
                   Kind::kKeras});
    return out;
  }
  if (shape.size() != axis_names.size()) {
    out.push_back({place + ".axis_names",
                   "Shape and axis_names should have same size. Received: shape=" +
                       python_tuple(widen(shape)) + ", axis_names=" + python_str_list(axis_names),
                   Kind::kKeras});
    return out;
  }
  bool sizes_ok = true;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] >= 1) continue;
    sizes_ok = false;
    out.push_back({place + ".shape[" + std::to_string(i) + "]",
                   "must be a positive number of devices, got " + std::to_string(shape[i]),
                   Kind::kKeras});
  }
  for (size_t i = 0; i < axis_names.size(); ++i) {
    const std::string where = place + ".axis_names[" + std::to_string(i) + "]";
    if (axis_names[i].empty()) {
      out.push_back({where, "must be a non-empty axis name", Kind::kKeras});
    } else if (std::find(axis_names.begin(), axis_names.begin() + static_cast<long>(i),
                         axis_names[i]) != axis_names.begin() + static_cast<long>(i)) {
      out.push_back(
          {where, "'" + axis_names[i] + "' is already the name of another axis", Kind::kKeras});
    }
  }
  if (sizes_ok && device_count) {
    int64_t product = 1;
    for (int s : shape) product *= s;
    if (product != *device_count) {
      out.push_back({place + ".shape",
                     "Shape does not match the number of devices. Received: shape=" +
                         python_tuple(widen(shape)) +
                         "; devices.shape=" + python_tuple({*device_count}) + " (the mesh needs " +
                         std::to_string(product) + " devices, " +
                         there_are(*device_count, "device") + ")",
                     Kind::kKeras});
    }
  }
  return out;
}

DeviceMesh::DeviceMesh(std::vector<int> shape, std::vector<std::string> axis_names,
                       std::vector<std::string> devices)
    : shape_(std::move(shape)), axis_names_(std::move(axis_names)), devices_(std::move(devices)) {
  // Keras's default is every local device; the check below reports a mismatch.
  if (devices_.empty()) devices_ = list_devices("cpu");
  auto problems = check_device_mesh(shape_, axis_names_, static_cast<int>(devices_.size()));
  if (!problems.empty()) throw InputError(problems.front().place, problems.front().message);
}

int DeviceMesh::axis_index(const std::string& name) const {
  auto it = std::find(axis_names_.begin(), axis_names_.end(), name);
  return it == axis_names_.end() ? -1 : static_cast<int>(it - axis_names_.begin());
}

int DeviceMesh::axis_size(const std::string& name) const {
  const int i = axis_index(name);
  return i < 0 ? 0 : shape_[static_cast<size_t>(i)];
}

std::string DeviceMesh::repr() const {
  return "<DeviceMesh shape=" + python_tuple(widen(shape_)) +
         ", axis_names=" + python_str_list(axis_names_) + ">";
}

}  // namespace fitbench
