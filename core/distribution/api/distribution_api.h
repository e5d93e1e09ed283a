// keras.distribution's strategy objects and global setting: DataParallel, ModelParallel,
// set_distribution(), distribution() and the scope guard, as value types over DeviceMesh,
// LayoutMap and the executors. The global distribution is guarded by a mutex (thread-safe); the
// objects are values (const use from many threads).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/distribution/layout/device_mesh.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/distribution_spec.h"

namespace fitbench {

class Sequential;
class DistributionScope;

// keras.distribution's Distribution base: a device mesh, the axis that splits the batch and (for
// ModelParallel) the layout map. Build one through DataParallel or ModelParallel.
class Distribution {
 public:
  const std::string& class_name() const { return class_name_; }  // "DataParallel", ...
  const DeviceMesh& device_mesh() const { return device_mesh_; }
  const std::optional<LayoutMap>& layout_map() const { return layout_map_; }  // ModelParallel
  const std::string& batch_dim_name() const { return batch_dim_name_; }

  // What the experiment file holds for this distribution.
  DistributionSpec to_spec() const;
  // Python's repr: <DataParallel device_mesh=<DeviceMesh shape=(2,), axis_names=['batch']>>
  std::string repr() const;
  // `with distribution.scope():` makes this the global distribution until the guard ends.
  DistributionScope scope() const;
  // Makes `model` train with this distribution on the mesh's devices (Keras does this
  // implicitly for models made under a distribution). Throws InputError for a layout the model
  // cannot take.
  void distribute(Sequential& model) const;

 protected:
  Distribution(std::string class_name, DeviceMesh device_mesh, std::optional<LayoutMap> layout_map,
               std::string batch_dim_name);

 private:
  std::string class_name_;
  DeviceMesh device_mesh_;
  std::optional<LayoutMap> layout_map_;
  std::string batch_dim_name_;
};

// keras.distribution.DataParallel: variables replicated, the batch split over the mesh's first
// axis.
class DataParallel : public Distribution {
 public:
  // A 1-D mesh with axis "batch" over `devices`; empty: every device (list_devices()).
  explicit DataParallel(std::vector<std::string> devices = {});
  // Over a given mesh; with more than one axis Keras warns and splits the batch over the first
  // axis, replicating over the others (fitbench then runs it as ModelParallel without layouts).
  explicit DataParallel(DeviceMesh device_mesh);
};

// keras.distribution.ModelParallel: variables laid out by the layout map over its mesh, the batch
// split over batch_dim_name ("" = the mesh's first axis). Throws InputError for a batch_dim_name
// that is not a mesh axis.
class ModelParallel : public Distribution {
 public:
  explicit ModelParallel(LayoutMap layout_map, std::string batch_dim_name = "");
};

// keras.distribution.set_distribution / distribution(): the process-wide setting (nullopt: none).
void set_distribution(std::optional<Distribution> value);
std::optional<Distribution> distribution();

// Applies the global distribution, if one is set, to `model` (what Keras does when a model is
// created under a distribution). Returns whether one was applied.
bool distribute(Sequential& model);

// Restores the previous global distribution when it ends (Distribution.scope()).
class DistributionScope {
 public:
  explicit DistributionScope(const Distribution& value);
  ~DistributionScope();
  DistributionScope(const DistributionScope&) = delete;
  DistributionScope& operator=(const DistributionScope&) = delete;

 private:
  std::optional<Distribution> previous_;
};

}  // namespace fitbench
