// Turns an ExperimentSpec into what fit() needs: the data (loaded, standardized on its training
// part), a built and compiled Sequential with its initial weights; and the files a run reads and
// writes. plan_run (run_plan.h) calls it: front ends build a RunPlan, not a PreparedRun.
// A prepared run is owned by one thread at a time.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>

#include "core/data/dataset.h"
#include "core/file_checks.h"
#include "core/io/experiment.h"
#include "core/training/sequential.h"

namespace fitbench {

struct PreparedRun {
  ExperimentSpec spec;
  Dataset data;  // every sample; fit() takes validation_split from its end
  std::unique_ptr<Sequential> model;
  // What reading the data passed over and loading initial_weights left out, as sentences.
  std::vector<std::string> notes;
};

// Seeds the global sequence with spec.seed (set_random_seed), loads the data, builds and
// compiles the model, checks sparse labels (check_sparse_labels) and loads spec.initial_weights.
// `data_loaded`, if given, sees the data before the model is built (plan_run checks that the run
// fits in memory there). Throws InputError naming the place.
PreparedRun prepare_run(const ExperimentSpec& spec,
                        const std::function<void(const Dataset&)>& data_loaded = {});

// With sparse_categorical_crossentropy, every label must be a whole class index below `units`:
// throws
// InputError naming the first that is not (a CSV file's cell, "data.csv:3:3 (y)") before
// training, instead of a row of a shuffled batch during it.
void check_sparse_labels(const Dataset& data, Index units, const std::string& loss);

// The files a run of `spec` reads, for check_outputs_apart: `experiment_file` (when not empty),
// data.csv and initial_weights, relative ones taken from `base_dir` (when not empty) as the
// window's run takes them.
std::vector<RunFile> run_inputs(const ExperimentSpec& spec, const std::string& experiment_file,
                                const std::filesystem::path& base_dir = {});

// The files the callbacks of `fit` write (ModelCheckpoint's filepath, CSVLogger's filename), each
// placed as "<source>: fit.callbacks[i].config.filepath" ("fit.callbacks..." when `source` is
// empty).
std::vector<RunFile> callback_outputs(const FitOptions& fit, const std::string& source = {});

}  // namespace fitbench
