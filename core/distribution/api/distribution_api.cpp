#include "core/distribution/api/distribution_api.h"

#include <mutex>

#include "core/base/error.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/spec/devices.h"
#include "core/training/sequential.h"

namespace fitbench {
namespace {

std::mutex g_mutex;
std::optional<Distribution> g_distribution;

}  // namespace

Distribution::Distribution(std::string class_name, DeviceMesh device_mesh,
                           std::optional<LayoutMap> layout_map, std::string batch_dim_name)
    : class_name_(std::move(class_name)),
      device_mesh_(std::move(device_mesh)),
      layout_map_(std::move(layout_map)),
      batch_dim_name_(std::move(batch_dim_name)) {}

DistributionSpec Distribution::to_spec() const {
  DistributionSpec spec;
  spec.class_name = class_name_;
  spec.mesh_shape = device_mesh_.shape();
  spec.axis_names = device_mesh_.axis_names();
  if (layout_map_) spec.layout_map = layout_map_->entries();
  spec.batch_dim_name = batch_dim_name_;
  return spec;
}

std::string Distribution::repr() const {
  return "<" + class_name_ + " device_mesh=" + device_mesh_.repr() + ">";
}

DistributionScope Distribution::scope() const { return DistributionScope(*this); }

void Distribution::distribute(Sequential& model) const {
  const int devices = device_mesh_.size();
  if (class_name_ == "DataParallel" && device_mesh_.shape().size() == 1) {
    use_data_parallel(model, devices);
    return;
  }
  // ModelParallel, or DataParallel over a multi-axis mesh (no layouts: everything replicated,
  // the batch split over the first axis).
  DistributionSpec spec = to_spec();
  spec.class_name = "ModelParallel";
  use_model_parallel(model, spec, devices);
}

DataParallel::DataParallel(std::vector<std::string> devices)
    : Distribution(
          "DataParallel",
          [&] {
            if (devices.empty()) devices = list_devices("cpu");
            const int n = static_cast<int>(devices.size());
            return DeviceMesh({n}, {"batch"}, devices);
          }(),
          std::nullopt, "batch") {}

DataParallel::DataParallel(DeviceMesh device_mesh)
    : Distribution("DataParallel", device_mesh, std::nullopt, device_mesh.axis_names().front()) {}

ModelParallel::ModelParallel(LayoutMap layout_map, std::string batch_dim_name)
    : Distribution(
          "ModelParallel", layout_map.device_mesh(), layout_map,
          batch_dim_name.empty() ? layout_map.device_mesh().axis_names().front() : batch_dim_name) {
  if (device_mesh().axis_index(this->batch_dim_name()) < 0)
    throw InputError("distribution.batch_dim_name",
                     "Invalid axis names for Layout. Valid axis names: " +
                         python_str_list(device_mesh().axis_names()) + ", Got '" +
                         this->batch_dim_name() + "'");
}

void set_distribution(std::optional<Distribution> value) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_distribution = std::move(value);
}

std::optional<Distribution> distribution() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_distribution;
}

bool distribute(Sequential& model) {
  const std::optional<Distribution> current = distribution();
  if (!current) return false;
  current->distribute(model);
  return true;
}

DistributionScope::DistributionScope(const Distribution& value) : previous_(distribution()) {
  set_distribution(value);
}

DistributionScope::~DistributionScope() { set_distribution(std::move(previous_)); }

}  // namespace fitbench
