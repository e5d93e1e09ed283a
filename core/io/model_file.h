// A model file (docs/model-format.md): a Keras model config, its compile options and its weights
// by Keras variable path ("sequential/dense/kernel"), values row-major (ModelFile, in
// core/training/model_state.h). Reading validates every key
// and throws InputError naming the file and JSON path; writing is atomic. Free functions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/training/model_state.h"

namespace fitbench {

ModelFile read_model_file(const std::filesystem::path& file);
void write_model_file(const ModelFile& model, const std::filesystem::path& file);

}  // namespace fitbench
