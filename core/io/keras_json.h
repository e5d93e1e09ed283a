// Ordered-JSON forms of the functions in experiment.h (keys keep the document's order: the
// readers need it for ModelParallel layout maps, the writers use it for a human key order), and
// the pieces shared by the experiment and model file readers. Free functions; no shared state.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "core/io/experiment.h"

namespace fitbench {

ExperimentSpec parse_experiment(const nlohmann::ordered_json& doc, const std::string& source,
                                const std::filesystem::path& base_dir);
nlohmann::ordered_json experiment_to_ordered_json(const ExperimentSpec& spec);

ModelSpec parse_model_config(const nlohmann::ordered_json& doc, const std::string& path);
nlohmann::ordered_json model_config_to_ordered_json(const ModelSpec& spec);

CompileOptions parse_compile(const nlohmann::ordered_json& doc, const std::string& path);
nlohmann::ordered_json compile_to_ordered_json(const CompileOptions& options);

// The `fit` section: Keras's fit() argument names and serialized callbacks.
FitOptions parse_fit(const nlohmann::ordered_json& doc, const std::string& path);
nlohmann::ordered_json fit_to_ordered_json(const FitOptions& options);

// A serialized keras.optimizers.schedules object {"class_name": "ExponentialDecay", "config": ...}.
ScheduleSpec parse_schedule(const nlohmann::ordered_json& doc, const std::string& path);
nlohmann::ordered_json schedule_to_ordered_json(const ScheduleSpec& schedule);

}  // namespace fitbench
