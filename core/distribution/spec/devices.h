// The simulated devices: how many CPU devices there are and their names, as
// keras.distribution.list_devices reports them. The count comes from (first that is set):
// --devices N, the experiment's devices.count, FITBENCH_CPU_DEVICES=N, or
// XLA_FLAGS=--xla_force_host_platform_device_count=N; otherwise 1, as JAX on a CPU host.
// Free functions reading the environment; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fitbench {

// The device count the environment asks for (FITBENCH_CPU_DEVICES, then XLA_FLAGS), if any.
// Throws InputError naming the variable when its value is not a positive integer.
std::optional<int> environment_device_count();

// Resolves the count from the command line, the experiment and the environment (in that order).
int resolve_device_count(std::optional<int> command_line, std::optional<int> experiment);

// "cpu:0" ... "cpu:N-1" for type "cpu" (N as resolve_device_count with nothing else given);
// an empty list for "gpu" and "tpu": fitbench simulates CPU devices only. Throws InputError for
// an unknown type.
std::vector<std::string> list_devices(const std::string& device_type = "cpu", int count = 0);

// "" for "cpu"; for "gpu" and "tpu" the sentence a run that asks for them fails with
// ("\"gpu\" devices are not available: fitbench simulates CPU devices only; use \"cpu\"").
std::string device_type_error(const std::string& device_type);

// Python's repr of a list of device names: ['cpu:0', 'cpu:1'].
std::string device_list_repr(const std::vector<std::string>& devices);

}  // namespace fitbench
