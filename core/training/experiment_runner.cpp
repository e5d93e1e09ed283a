#include "core/training/experiment_runner.h"

#include <cmath>

#include "core/error.h"
#include "core/io/model_file.h"
#include "core/random.h"

namespace fitbench {

PreparedRun prepare_run(const ExperimentSpec& spec) {
  PreparedRun run;
  run.spec = spec;
  if (spec.seed) set_random_seed(*spec.seed);
  // Paths were made absolute by read_experiment; relative ones are taken from the working folder.
  run.data = load_dataset(spec.data, std::filesystem::current_path());
  if (spec.data.standardize) {
    const double split = spec.fit.validation_split;
    const Index train_rows = split > 0.0
                                 ? static_cast<Index>(std::floor(run.data.size() * (1.0 - split)))
                                 : run.data.size();
    if (train_rows > 0) {
      const Standardizer s = Standardizer::fit(run.data.x.topRows(train_rows));
      s.apply(run.data.x);
    }
  }
  run.model = std::make_unique<Sequential>(spec.model);
  if (!run.model->built()) run.model->build(run.data.x.cols());
  run.model->compile(spec.compile);
  if (!spec.initial_weights.empty()) {
    const ModelFile weights = read_model_file(spec.initial_weights);
    run.model->set_weights(weights.weights, spec.initial_weights);
  }
  return run;
}

}  // namespace fitbench
