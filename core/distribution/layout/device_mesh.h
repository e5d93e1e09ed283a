// keras.distribution.DeviceMesh: simulated devices arranged in a named grid, e.g. shape (2, 2)
// with axis names ("batch", "model"); devices fill the grid in row-major order as numpy.reshape
// places them. Also the mesh checks the GUI and the experiment runner share, as diagnostics.
// Value types and free functions; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// One problem found in a distribution setting, placed in the experiment file's terms.
struct LayoutDiagnostic {
  enum class Kind {
    kKeras,     // Keras (or JAX under it) rejects this too
    kFitbench,  // Keras accepts it, fitbench cannot run it
    kWarning,   // harmless but probably not what was meant (nothing is rejected)
  };
  // Where: "distribution.mesh.shape", "distribution.layout_map[\"dense.*kernel\"][1]", ...
  std::string place;
  std::string message;  // one sentence, without the place
  Kind kind = Kind::kKeras;
  int entry = -1;  // the layout-map entry it concerns (index in the map's order), or -1

  std::string text() const { return place.empty() ? message : place + ": " + message; }
};

// The checks keras.distribution.DeviceMesh makes, and fitbench's own: shape and axis_names not
// empty and of the same length (Keras's wording), every axis size >= 1, axis names non-empty and
// distinct, and, when device_count is given, shape's product equal to it (Keras's wording).
// Places are "distribution.mesh", "distribution.mesh.shape[i]", "distribution.mesh.axis_names[i]".
std::vector<LayoutDiagnostic> check_device_mesh(const std::vector<int>& shape,
                                                const std::vector<std::string>& axis_names,
                                                std::optional<int> device_count);

class DeviceMesh {
 public:
  // devices empty: list_devices("cpu") with the count of the environment (as Keras's default).
  // Throws InputError (the first problem check_device_mesh finds) for an invalid mesh.
  DeviceMesh(std::vector<int> shape, std::vector<std::string> axis_names,
             std::vector<std::string> devices = {});

  const std::vector<int>& shape() const { return shape_; }
  const std::vector<std::string>& axis_names() const { return axis_names_; }
  // Every device, flat in row-major order of the mesh ("cpu:0", "cpu:1", ...).
  const std::vector<std::string>& devices() const { return devices_; }
  int size() const { return static_cast<int>(devices_.size()); }

  // The index of an axis, or -1.
  int axis_index(const std::string& name) const;
  // The size of a named axis, or 0 when there is no such axis.
  int axis_size(const std::string& name) const;

  // Python's repr: <DeviceMesh shape=(2, 2), axis_names=['batch', 'model']>
  std::string repr() const;

  bool operator==(const DeviceMesh&) const = default;

 private:
  std::vector<int> shape_;
  std::vector<std::string> axis_names_;
  std::vector<std::string> devices_;
};

// Python reprs used in messages: (2, 2) / (8,) for a shape, ['batch', 'model'] for names.
std::string python_tuple(const std::vector<int64_t>& dims);
std::string python_str_list(const std::vector<std::string>& names);

}  // namespace fitbench
