// Choosing how fit() runs: on one device, or DataParallel over simulated devices. Applies an
// experiment's distribution (or the CLI's --strategy) to a model. Free functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/distribution/distribution_spec.h"
#include "core/training/sequential.h"

namespace fitbench {

// Makes `model` train with DataParallel over `devices` simulated CPU devices (1 is allowed: one
// worker, the same arithmetic as no distribution).
void use_data_parallel(Sequential& model, int devices);

// Applies spec to the model with `devices` devices. Throws InputError("distribution...") for a
// class fitbench cannot run yet (ModelParallel) or an unknown one.
void apply_distribution(Sequential& model, const DistributionSpec& spec, int devices);

// The line the seed script prints: "Distribution: DataParallel".
std::string distribution_line(const DistributionSpec& spec);

}  // namespace fitbench
