// Runs named by what differs: a run's settings as short tokens read from its experiment
// ("Adam 0.03", "m0.9", "batch 16", "16-16-1 tanh", "4 devices ModelParallel 2x2"), and labels
// that keep, for each run, only the tokens in which the runs differ ("Adam 0.03" beside
// "SGD 0.1 m0.9"). The window's runs list shows every token as the run's settings and names
// each run from Run by the differing ones. Pure functions; no Qt.
#pragma once

#include <string>
#include <vector>

namespace fitbench {

struct ExperimentSpec;

// One setting of a run: `key` says what it describes ("optimizer", "batch", "model",
// "data.noise", ...) and `text` is how it reads in a label.
struct RunSetting {
  std::string key;
  std::string text;
};

// The settings of an experiment, in the order a label reads them: optimizer and learning rate,
// its other options, loss, model, batch, epochs, validation, devices and strategy, data, seed;
// any other option (read from experiment_to_json) only where it is not the default, as
// "name=value". The experiment's name, description, verbosity and layer names are not settings.
std::vector<RunSetting> run_settings(const ExperimentSpec& spec);

// Each run's label: the texts of the settings whose text is not the same in every run, in the
// runs' order of settings, joined by spaces. A run whose settings equal all the others' is
// called `fallback[i]` ("run 2"); two runs that would read alike get " (fallback)" appended.
// `fallback` has one entry per run.
std::vector<std::string> labels_by_difference(const std::vector<std::vector<RunSetting>>& runs,
                                              const std::vector<std::string>& fallback);

// All of a run's settings as one line, "Adam 0.03, batch 16, ...".
std::string settings_text(const std::vector<RunSetting>& settings);

}  // namespace fitbench
