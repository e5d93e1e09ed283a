#include "core/run/experiment_runner.h"

#include <cmath>
#include <sstream>

#include "core/base/error.h"
#include "core/io/model_file.h"
#include "core/python/random.h"

namespace fitbench {

void check_sparse_labels(const Dataset& data, Index units, const std::string& loss) {
  if (loss != "sparse_categorical_crossentropy" || data.y.cols() != 1 || units < 1) return;
  for (Index r = 0; r < data.y.rows(); ++r) {
    const float label = data.y(r, 0);
    const bool whole = std::floor(label) == label;
    if (whole && label >= 0.0f && label < static_cast<float>(units)) continue;
    std::ostringstream text;
    text << "is the sparse label " << label;
    if (!whole) {
      // Keras would truncate it for the loss (an int32 cast) and count it as no class for the
      // accuracy, so the two would disagree: most likely the wrong column or loss.
      text << ", not a whole number: sparse_categorical_crossentropy takes class indices";
    } else {
      text << ", but the last layer has " << units << (units == 1 ? " unit" : " units")
           << ": sparse_categorical_crossentropy takes class indices from 0 to " << units - 1;
    }
    throw InputError(data.label_place ? data.label_place(r) : "data row " + std::to_string(r),
                     text.str());
  }
}

namespace {

// Loads the weights of spec.initial_weights and, when the file has it, the optimizer state (as
// Keras's load_model does), so that training continues where the saved model stopped.
void load_initial_weights(const ExperimentSpec& spec, PreparedRun& run) {
  const std::string& file = spec.initial_weights;
  const ModelFile saved = read_weights_file(file, run.model->model_file());
  run.model->set_weights(saved.weights, file);
  if (saved.data && !saved.data->mean.empty() && !spec.data.standardize)
    throw InputError(file,
                     "starts with a Normalization layer (the model was trained on "
                     "standardized features) but this experiment does not standardize its "
                     "data; set data.standardize to true");
  if (!saved.optimizer) return;
  const std::string& mine = spec.compile.optimizer.class_name;
  if (saved.compile && saved.compile->optimizer.class_name != mine) {
    run.notes.push_back(file + ": its " + saved.compile->optimizer.class_name +
                        " optimizer state is not loaded, because this experiment trains with " +
                        mine + "; the optimizer starts afresh");
    return;
  }
  run.model->set_optimizer_state(*saved.optimizer, file);
}

}  // namespace

PreparedRun prepare_run(const ExperimentSpec& spec,
                        const std::function<void(const Dataset&)>& data_loaded) {
  PreparedRun run;
  run.spec = spec;
  if (spec.seed) set_random_seed(*spec.seed);
  // Paths were made absolute by read_experiment; relative ones are taken from the working folder.
  run.data = load_dataset(spec.data, std::filesystem::current_path());
  run.notes = run.data.notes;
  // Written into the model's files, so that evaluate and predict read a CSV as this run did: its
  // columns by name (a CSV's; a generator's data has none) and the standardization.
  ModelData data;
  if (!spec.data.csv.empty()) {
    data.features = run.data.feature_names;
    data.targets = run.data.target_names;
  }
  if (spec.data.standardize) {
    // Fitted on the rows fit() trains on (a split that empties a side fails here as it would
    // there).
    const Index train_rows = validation_split_at(run.data.size(), spec.fit.validation_split);
    const Standardizer s = Standardizer::fit(run.data.x.topRows(train_rows));
    s.apply(run.data.x);
    if (run.data.has_validation_data()) s.apply(run.data.validation_x);
    for (Index j = 0; j < s.mean.size(); ++j) {
      data.mean.push_back(static_cast<double>(s.mean[j]));
      data.stddev.push_back(static_cast<double>(s.stddev[j]));
    }
  }
  if (data_loaded) data_loaded(run.data);
  run.model = std::make_unique<Sequential>(spec.model);
  run.model->data_info = std::move(data);
  if (!run.model->built()) run.model->build(run.data.shape_of_sample());
  // A model that declares its input (an InputLayer) meets the data here, before any training.
  if (run.data.x.cols() != run.model->network().input_units())
    throw InputError(
        "data",
        "the data has " + counted(run.data.x.cols(), "feature column") + " but the model expects " +
            std::to_string(run.model->network().input_units()) + [&] {
              const Shape& s = run.data.sample_shape;
              if (s.empty()) return std::string();
              std::string dims, list;
              for (size_t i = 0; i < s.size(); ++i) {
                dims += (i ? " x " : "") + std::to_string(s[i]);
                list += (i ? ", " : "") + std::to_string(s[i]);
              }
              return " (the images are " + dims + " = " + std::to_string(run.data.x.cols()) +
                     " values each: give the model an InputLayer of shape [" + list +
                     "] and a Flatten layer, or of shape [" + std::to_string(run.data.x.cols()) +
                     "])";
            }());
  // Images go in as they are, or flat (a row of all their values, as x.reshape(-1, 784)).
  const Shape& model_shape = run.model->network().input_shape();
  if (!run.data.sample_shape.empty() && model_shape.size() > 1 &&
      model_shape != run.data.sample_shape)
    throw InputError("data",
                     "the data's samples have shape " + batch_shape_text(run.data.sample_shape) +
                         " but the model's input has shape " + batch_shape_text(model_shape) +
                         "; give the InputLayer the data's shape, or one axis of all " +
                         std::to_string(run.data.x.cols()) + " values");
  if (const Network& net = run.model->network(); !net.layers().empty()) {
    const Shape& out = net.layer_shape(net.layers().size() - 1);
    if (out.size() > 1)
      throw InputError("model", "the model's output has shape " + batch_shape_text(out) +
                                    ", and fitbench's losses and metrics take one axis of "
                                    "outputs; end the model with a Dense layer, or a Flatten");
  }
  run.model->compile(spec.compile);
  check_sparse_labels(run.data, run.model->network().output_units(), spec.compile.loss.name);
  if (!spec.initial_weights.empty()) load_initial_weights(spec, run);
  return run;
}

std::vector<RunFile> run_inputs(const ExperimentSpec& spec, const std::string& experiment_file,
                                const std::filesystem::path& base_dir) {
  const auto from_base = [&](const std::string& path) {
    if (base_dir.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (base_dir / path).string();
  };
  std::vector<RunFile> files;
  if (!experiment_file.empty()) files.push_back({experiment_file, {}, "the experiment file"});
  if (!spec.data.csv.empty()) files.push_back({from_base(spec.data.csv), {}, "the data file"});
  if (!spec.initial_weights.empty())
    files.push_back({from_base(spec.initial_weights), {}, "the model file the weights come from"});
  return files;
}

std::vector<RunFile> callback_outputs(const FitOptions& fit, const std::string& source) {
  std::vector<RunFile> files;
  for (size_t i = 0; i < fit.callbacks.size(); ++i) {
    const CallbackSpec& c = fit.callbacks[i];
    if (c.class_name != "ModelCheckpoint" && c.class_name != "CSVLogger") continue;
    if (c.filepath.empty()) continue;  // make_callbacks refuses it
    const std::string key = c.class_name == "CSVLogger" ? "filename" : "filepath";
    files.push_back({c.filepath,
                     (source.empty() ? "" : source + ": ") + "fit.callbacks[" + std::to_string(i) +
                         "].config." + key,
                     c.class_name + "'s file too", c.class_name == "ModelCheckpoint"});
  }
  return files;
}

}  // namespace fitbench
