// A model as values: its Keras config, compile options, weights by Keras variable path and what
// it was trained on. What Sequential::model_file() gives and a model file holds; the file format
// itself is core/io/model_file.h (the training loop writes files only through a ModelWriter that
// its caller gives it). Value types.
#pragma once

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/nn/layer_spec.h"
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

// The optimizer's variables as Keras saves them (optimizer/vars of a .weights.h5 file): its
// iteration count, its learning rate (a variable unless a schedule gives it) and its slot
// variables in Keras's order (Optimizer::keras_slots), each named "<variable path> <kind>".
struct OptimizerState {
  std::string name;  // Keras's optimizer name, e.g. "adam"
  int64_t iterations = 0;
  std::optional<float> learning_rate;
  std::vector<NamedWeight> slot_variables;  // (not "slots": a Qt keyword)
};

struct ModelFile {
  ModelSpec config;
  std::optional<CompileOptions> compile;
  std::vector<NamedWeight> weights;
  std::optional<ModelData> data;
  // Present once the optimizer has been built (trained); .keras and .weights.h5 files keep it.
  std::optional<OptimizerState> optimizer;
};

// Writes a model file (write_model_file, core/io/model_file.h): what ModelCheckpoint saves with.
using ModelWriter = std::function<void(const ModelFile&, const std::filesystem::path&)>;

}  // namespace fitbench
