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

// What the model was trained on, so that evaluate and predict read new data the same way: the
// CSV columns by name (empty for a generator's data) and data.standardize's statistics.
struct ModelData {
  std::vector<std::string> features;  // the model's inputs, in order
  std::vector<std::string> targets;
  std::vector<double> mean, stddev;  // x' = (x - mean) / stddev per feature; empty: as read
};

struct ModelFile {
  ModelSpec config;
  std::optional<CompileOptions> compile;
  std::vector<NamedWeight> weights;
  std::optional<ModelData> data;
};

ModelFile read_model_file(const std::filesystem::path& file);
void write_model_file(const ModelFile& model, const std::filesystem::path& file);

}  // namespace fitbench
