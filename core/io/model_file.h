// A model file (docs/model-format.md): a Keras model config, its compile options and its weights
// by Keras variable path ("sequential/dense/kernel"), values row-major (ModelFile, in
// core/training/model_state.h). Reading validates every key
// and throws InputError naming the file and JSON path; writing is atomic. Free functions.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/training/model_state.h"

namespace fitbench {

class StagedFiles;  // core/staged_files.h

// The file's name chooses its kind: a .keras archive or a .weights.h5 file (core/io/keras_file.h)
// as Keras 3 writes them, otherwise fitbench's JSON model file. A .weights.h5 file holds no
// config, so read_model_file refuses it with a sentence; read_weights_file reads it for a model.
ModelFile read_model_file(const std::filesystem::path& file);
// A JSON model file read with json_io::WeightValues::kSkip: its weights without their values
// (their paths and shapes are checked against the config), what summary needs, in a fraction of
// a large file's time. Throws InputError naming `file` as read_model_file does.
ModelFile model_structure(const nlohmann::ordered_json& doc, const std::filesystem::path& file);
// With `into`, the file is staged there (json_io::write_file_atomically), not yet written.
void write_model_file(const ModelFile& model, const std::filesystem::path& file,
                      StagedFiles* into = nullptr);

// Whether every weight and optimizer slot is a finite number (a diverged run's are not).
bool weights_finite(const ModelFile& model);
// Every writer (JSON, .keras, .weights.h5) refuses a model whose weights are not finite, with
// this one sentence placed at `file`: training diverged, what to change. (Keras would save
// them; a model made of NaN cannot be evaluated or trained on, so fitbench keeps the History
// and says so instead.)
void check_weights_finite(const ModelFile& model, const std::filesystem::path& file);

// The weights and optimizer state `file` holds for a model like `like` (its config, compile
// options and data): read_model_file's answer, or a .weights.h5 file's as read_keras_weights
// gives it.
ModelFile read_weights_file(const std::filesystem::path& file, const ModelFile& like);

}  // namespace fitbench
