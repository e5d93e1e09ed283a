// A model file (docs/model-format.md): a Keras model config, its compile options and its weights
// by Keras variable path ("sequential/dense/kernel"), values row-major. Reading validates every key
// and throws InputError naming the file and JSON path; writing is atomic. Free functions.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "core/nn/layer_spec.h"
#include "core/tensor.h"
#include "core/training/fit_options.h"

namespace fitbench {

struct NamedWeight {
  std::string path;           // e.g. "sequential/dense/kernel"
  Shape shape;                // e.g. {4, 1}; a bias is {units}
  std::vector<float> values;  // row-major, product(shape) values
};

struct ModelFile {
  ModelSpec config;
  std::optional<CompileOptions> compile;
  std::vector<NamedWeight> weights;
};

ModelFile read_model_file(const std::filesystem::path& file);
void write_model_file(const ModelFile& model, const std::filesystem::path& file);

}  // namespace fitbench
