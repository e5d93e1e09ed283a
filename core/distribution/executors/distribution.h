// Choosing how fit() runs: on one device, or DataParallel or ModelParallel over simulated
// devices. Applies an experiment's distribution (or the CLI's --strategy) and its devices'
// rehearsal knobs to a model. Free functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/training/sequential.h"

namespace fitbench {

// Makes `model` train with DataParallel over `devices` simulated CPU devices (1 is allowed: one
// worker, the same arithmetic as no distribution).
void use_data_parallel(Sequential& model, int devices, const RehearsalOptions& options = {});

// Why a list of `speeds` relative speeds does not fit `devices` devices (the sentence after
// "devices.speed: "), or "" when it does or is empty (every device at full speed).
std::string speed_count_error(size_t speeds, int devices);

// The rehearsal knobs of `spec` for `devices` devices, validated: speed entries in (0, 1] and one
// per device, latency and bandwidth >= 0 and finite, allreduce "ring" or "naive",
// batch_norm_statistics "global" or "per_device". Throws InputError("devices.speed" /
// "devices.link_latency_us" / "devices.link_gbps" / "devices.allreduce" /
// "devices.batch_norm_statistics", ...).
RehearsalOptions rehearsal_options(const DevicesSpec& spec, int devices);

// Applies spec (DataParallel or ModelParallel) to the model with `devices` devices and the
// rehearsal knobs of `devices_spec`. Throws InputError("distribution.class_name") for an unknown
// class, rehearsal_options' errors, and (for a built model) ModelParallel's layout errors.
void apply_distribution(Sequential& model, const DistributionSpec& spec, int devices,
                        const DevicesSpec& devices_spec = {});

// The line the seed script prints: "Distribution: DataParallel".
std::string distribution_line(const DistributionSpec& spec);

}  // namespace fitbench
