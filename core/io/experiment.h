// An experiment: everything the CLI's `run` and the GUI need to train one model, as read from and
// written to an experiment file (docs/experiment-format.md). Reading validates every key and value
// and throws InputError naming the file and JSON path; writing produces a file that reads back to
// an equal spec. Free functions; no shared state.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "core/data/data_spec.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/layer_spec.h"
#include "core/training/fit_options.h"

namespace fitbench {

struct ExperimentSpec {
  std::string name;
  std::string description;  // Markdown
  std::optional<uint64_t> seed;
  DevicesSpec devices{};
  DistributionSpec distribution{};
  DataSpec data{};
  ModelSpec model{};
  CompileOptions compile{};
  FitOptions fit{};
  std::string initial_weights;  // a model file; empty: none. Resolved relative to the file.
  // The sweep section as written (null: none): `fitbench-cli sweep` and the window's Sweep view
  // read it with plan_sweep (core/run/sweep.h); a run of the experiment itself ignores it.
  nlohmann::ordered_json sweep;
};

// Parses an experiment document. `source` names it in errors (usually the file name);
// `base_dir` resolves relative paths (data.csv, initial_weights).
ExperimentSpec parse_experiment(const nlohmann::json& doc, const std::string& source,
                                const std::filesystem::path& base_dir);
// Reads and parses a file; errors name the file.
ExperimentSpec read_experiment(const std::filesystem::path& file);
// The document for a spec, keys in the file's order (a layout map keeps its entries' order);
// paths are written as given.
nlohmann::ordered_json experiment_to_json(const ExperimentSpec& spec);
// Writes atomically (temporary file, then rename).
void write_experiment(const ExperimentSpec& spec, const std::filesystem::path& file);

// Keras 3 model configs (model.to_json() / get_config()), used by experiment and model files.
ModelSpec parse_model_config(const nlohmann::json& doc, const std::string& path);
nlohmann::json model_config_to_json(const ModelSpec& spec);
CompileOptions parse_compile(const nlohmann::json& doc, const std::string& path);
nlohmann::json compile_to_json(const CompileOptions& options);

}  // namespace fitbench
