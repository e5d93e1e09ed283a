// Keras 3's own files for a model file (docs/interoperability.md): `.keras` (model.save: a zip of
// metadata.json, config.json and model.weights.h5) and `.weights.h5` (model.save_weights: the
// HDF5 tree layers/<group>/vars/<i> and optimizer/vars/<i>), written with Debian's libzip and
// HDF5 exactly as Keras 3.16 lays them out, and read back. Reading refuses, with a sentence naming
// the file and the place, anything fitbench cannot run or a damaged container. Free functions;
// safe to call from several threads (the HDF5 library is used under one lock).
#pragma once

#include <filesystem>
#include <string>

#include "core/training/model_state.h"

namespace fitbench {

class StagedFiles;  // core/staged_files.h

// `file` names a .keras archive / a .weights.h5 file (by its name, as Keras tells them apart).
bool is_keras_archive(const std::filesystem::path& file);
bool is_keras_weights(const std::filesystem::path& file);

// model.save(file): the config (with a Normalization layer when the model standardizes its
// inputs), the compile options and the weights, with the optimizer's state when it has one.
// Atomic (json_io::write_file_atomically; with `into`, only staged there). Throws InputError for a
// model Keras could not hold (no input shape) and std::runtime_error when writing fails.
void write_keras_archive(const ModelFile& model, const std::filesystem::path& file,
                         StagedFiles* into = nullptr);
// model.save_weights(file): the weights file alone.
void write_keras_weights(const ModelFile& model, const std::filesystem::path& file,
                         StagedFiles* into = nullptr);

// keras.saving.load_model(file): the model, its compile options, its weights, the Normalization
// statistics (as ModelData::mean, stddev) and the optimizer's state when the file has one.
ModelFile read_keras_archive(const std::filesystem::path& file);
// model.load_weights(file) for a model of `like.config` (with like.data's standardization when
// the file has the Normalization layer's group): returns `like` with the file's weights and
// optimizer state.
ModelFile read_keras_weights(const std::filesystem::path& file, ModelFile like);

// The check program's side of reading a weights image (fitbench-hdf5-check; core/base/child_check.h
// says why HDF5 runs there first): reads the request on `fd` (a header line, then the image),
// reads the image as fitbench is about to, and returns the program's exit status: 0 when it got
// through (the image read or refused with a sentence), kCheckRequestRefused for a request it does
// not know. A crash or a hang inside HDF5 is the answer the caller waits for.
int check_keras_weights_request(int fd);

}  // namespace fitbench
