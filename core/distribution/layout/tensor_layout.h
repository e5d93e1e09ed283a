// keras.distribution.TensorLayout: one mesh axis name per tensor dimension ("" where Keras
// writes None: that dimension is replicated), optionally bound to a DeviceMesh. A value type;
// thread-safe as any const value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/distribution/layout/device_mesh.h"

namespace fitbench {

class TensorLayout {
 public:
  // Throws InputError when a mesh is given and an axis is not one of its axis names.
  explicit TensorLayout(std::vector<std::string> axes,
                        std::optional<DeviceMesh> device_mesh = std::nullopt)
      : axes_(std::move(axes)), device_mesh_(std::move(device_mesh)) {
    validate_axes();
  }

  const std::vector<std::string>& axes() const { return axes_; }
  const std::optional<DeviceMesh>& device_mesh() const { return device_mesh_; }

  // Binds the layout to a mesh once, as Keras's device_mesh setter: a second mesh is an error.
  void set_device_mesh(const DeviceMesh& mesh) {
    if (device_mesh_)
      throw InputError("TensorLayout", "Cannot override device mesh value. Existing value is " +
                                           device_mesh_->repr());
    device_mesh_ = mesh;
    validate_axes();
  }

  // Python's repr: <TensorLayout axes=(None, 'model'), device_mesh=<DeviceMesh ...>>
  std::string repr() const {
    std::string s = "<TensorLayout axes=(";
    for (size_t i = 0; i < axes_.size(); ++i)
      s += (i ? ", " : "") + (axes_[i].empty() ? std::string("None") : "'" + axes_[i] + "'");
    s += axes_.size() == 1 ? ",)" : ")";
    return s + ", device_mesh=" + (device_mesh_ ? device_mesh_->repr() : "None") + ">";
  }

  bool operator==(const TensorLayout&) const = default;

 private:
  // distribution_lib.py TensorLayout._validate_axes, naming the first unknown axis.
  void validate_axes() const {
    if (!device_mesh_) return;
    for (const auto& a : axes_)
      if (!a.empty() && device_mesh_->axis_index(a) < 0)
        throw InputError("TensorLayout", "Invalid axis names for Layout. Valid axis names: " +
                                             python_str_list(device_mesh_->axis_names()) +
                                             ", Got '" + a + "'");
  }

  std::vector<std::string> axes_;
  std::optional<DeviceMesh> device_mesh_;
};

}  // namespace fitbench
