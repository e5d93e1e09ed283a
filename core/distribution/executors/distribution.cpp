#include "core/distribution/executors/distribution.h"

#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/distribution/executors/model_parallel_executor.h"

namespace fitbench {
namespace {

std::string number_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

}  // namespace

void use_data_parallel(Sequential& model, int devices, const RehearsalOptions& options) {
  model.set_executor_factory([devices, options](const ExecutorContext& ctx) {
    return std::make_unique<DataParallelExecutor>(ctx, devices, options);
  });
}

std::string speed_count_error(size_t speeds, int devices) {
  if (speeds == 0 || speeds == static_cast<size_t>(devices)) return {};
  return "has " + counted(static_cast<long long>(speeds), "entry", "entries") + " but " +
         there_are(devices, "device") + "; give one speed per device";
}

RehearsalOptions rehearsal_options(const DevicesSpec& spec, int devices) {
  RehearsalOptions options;
  options.algorithm = parse_algorithm(spec.allreduce, "devices.allreduce");
  if (!spec.speed.empty()) {
    if (const std::string why = speed_count_error(spec.speed.size(), devices); !why.empty())
      throw InputError("devices.speed", why);
    for (size_t i = 0; i < spec.speed.size(); ++i) {
      const double s = spec.speed[i];
      if (!(s >= kMinDeviceSpeed && s <= 1.0))
        throw InputError("devices.speed[" + std::to_string(i) + "]",
                         "must be a relative speed from 0.01 to 1, got " + number_text(s));
    }
    options.speed = spec.speed;
  }
  if (!(spec.link_latency_us >= 0.0 && spec.link_latency_us <= kMaxLinkLatencyUs))
    throw InputError("devices.link_latency_us",
                     "must be a number of microseconds from 0 to 100000 (100 ms), got " +
                         number_text(spec.link_latency_us));
  if (!(spec.link_gbps == 0.0 ||
        (spec.link_gbps >= kMinLinkGbps && spec.link_gbps <= kMaxLinkGbps)))
    throw InputError("devices.link_gbps",
                     "must be 0 (unlimited) or a bandwidth in GB/s from 0.01 to 10000, got " +
                         number_text(spec.link_gbps));
  options.link = {spec.link_latency_us, spec.link_gbps};
  if (spec.batch_norm_statistics != "global" && spec.batch_norm_statistics != "per_device")
    throw InputError(
        "devices.batch_norm_statistics",
        "must be \"global\" or \"per_device\", got \"" + spec.batch_norm_statistics + "\"");
  options.per_device_batch_statistics = spec.batch_norm_statistics == "per_device";
  return options;
}

void apply_distribution(Sequential& model, const DistributionSpec& spec, int devices,
                        const DevicesSpec& devices_spec) {
  if (spec.class_name.empty()) return;
  std::shared_ptr<ProcessGroup> processes = process_group();
  const int process_count = processes ? processes->size() : 1;
  if (process_count > 1 && devices % process_count != 0)
    throw InputError("devices.count", counted(devices, "device") +
                                          " cannot be spread evenly over " +
                                          std::to_string(process_count) +
                                          " processes; give each process the same number");
  if (spec.class_name == "DataParallel") {
    RehearsalOptions options = rehearsal_options(devices_spec, devices);
    options.processes = std::move(processes);
    use_data_parallel(model, devices, options);
    return;
  }
  if (spec.class_name == "ModelParallel") {
    RehearsalOptions options = rehearsal_options(devices_spec, devices);
    options.processes = std::move(processes);
    use_model_parallel(model, spec, devices, options);
    return;
  }
  throw InputError("distribution.class_name", "unknown distribution \"" + spec.class_name +
                                                  "\"; expected DataParallel or ModelParallel");
}

std::string distribution_line(const DistributionSpec& spec) {
  return "Distribution: " + spec.class_name;
}

}  // namespace fitbench
