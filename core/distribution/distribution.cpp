#include "core/distribution/distribution.h"

#include "core/distribution/data_parallel_executor.h"
#include "core/error.h"

namespace fitbench {

void use_data_parallel(Sequential& model, int devices) {
  model.set_executor_factory([devices](const ExecutorContext& ctx) {
    return std::make_unique<DataParallelExecutor>(ctx, devices);
  });
}

void apply_distribution(Sequential& model, const DistributionSpec& spec, int devices) {
  if (spec.class_name.empty()) return;
  if (spec.class_name == "DataParallel") {
    use_data_parallel(model, devices);
    return;
  }
  if (spec.class_name == "ModelParallel")
    throw InputError("distribution.class_name",
                     "ModelParallel is not available in this version of fitbench; use "
                     "DataParallel or no distribution");
  throw InputError("distribution.class_name",
                   "unknown distribution \"" + spec.class_name + "\"; expected DataParallel");
}

std::string distribution_line(const DistributionSpec& spec) {
  return "Distribution: " + spec.class_name;
}

}  // namespace fitbench
