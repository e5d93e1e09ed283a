// The Keras 3 side of a model file (docs/interoperability.md): the config.json of a .keras file
// (model.to_json(): the Sequential with its build and compile configs) and the saveable layout the
// weights follow (keras/src/saving/saving_lib.py). The statistics a model standardizes its inputs
// with (ModelData::mean, stddev) become Keras's own Normalization layer in front of the model, so
// that Keras predicts from raw inputs as fitbench does. Free functions; no shared state.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/training/model_state.h"

namespace fitbench {

// One layer as saving_lib stores it: its group under layers/ (the snake_case class name, with
// _1, _2, ... for repeats of a class), its name, and its variables in Keras's order (Dense:
// kernel, bias), each as its path and shape (values left empty).
struct KerasLayerVars {
  std::string group;
  std::string name;
  std::vector<NamedWeight> variables;
};

// The group of the Normalization layer an exported model starts with.
inline constexpr const char* kNormalizationGroup = "normalization";

// The layers of a model as Keras saves them (InputLayer has no group; a Normalization made from
// model.data is not among them). Throws InputError when the config has no input shape.
std::vector<KerasLayerVars> keras_layer_vars(const ModelSpec& config);
// The number of input features the config declares; throws InputError when it declares none.
int64_t keras_input_units(const ModelSpec& config);

// keras/src/utils/naming.py to_snake_case: an object's automatic name and a layer's group from
// its class ("Dense" -> "dense", "Adam" -> "adam", "RMSprop" -> "rm_sprop").
std::string keras_snake_case(const std::string& class_name);

// model.to_json() of `model`, as Keras 3.16 writes it (docs/interoperability.md lists the keys).
nlohmann::ordered_json keras_model_json(const ModelFile& model);

// A config.json read back: the model, its compile options, and the Normalization layer it starts
// with, if any (its mean and variance are given in the config or are the weights of its group).
struct KerasModelConfig {
  ModelSpec model;
  std::optional<CompileOptions> compile;
  bool normalization = false;
  std::vector<double> mean, variance;  // from the config; empty: from the weights
};
// Throws InputError at `place` (e.g. "model.keras: config.json") for anything fitbench cannot
// run, naming the layer or option and what is supported.
KerasModelConfig parse_keras_model_json(const nlohmann::ordered_json& doc,
                                        const std::string& place);

}  // namespace fitbench
