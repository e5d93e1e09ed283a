// Internal to keras_script.cpp and keras_script_data.cpp: Python literals and the script's data
// section. Free functions on values; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/run/run_plan.h"

namespace fitbench::keras_script_parts {

// Python literals: a str's repr, a float's repr, an int, True/False, a tuple of ints ("(4,)").
std::string py_str(const std::string& text);
std::string py_float(double value);
std::string py_int(int64_t value);
std::string py_bool(bool value);
std::string py_int_tuple(const std::vector<int64_t>& values);
// A float that Keras takes as a count (decay_steps, warmup_steps, boundaries): an int literal
// when the value is whole, else the float's repr.
std::string py_count(double value);

// The lines that make `x` and `y` (float32 arrays of shape (samples, features) and (samples,
// targets)) exactly as fitbench makes the plan's data: a generator's values, or the CSV file's
// columns, Fashion-MNIST's IDX files, a folder of images; standardized on the training rows when
// data.standardize is set. Also says which modules it needs beyond numpy (math, csv) in
// `imports`.
std::string data_section(const RunPlan& plan, std::vector<std::string>& imports);

}  // namespace fitbench::keras_script_parts
