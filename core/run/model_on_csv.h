// A trained model (a ModelFile: what a model file holds and what a run ends with) evaluated on,
// or predicting for, the rows of another CSV file, read as the model was trained: its feature
// columns by name, its standardization. fitbench-cli's evaluate and predict and the window's
// Evaluate/Predict dialog share it. Free functions on values; each call builds its own model, so
// calls on different threads are independent.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "core/base/tensor.h"
#include "core/training/logs.h"
#include "core/training/model_state.h"
#include "core/training/sequential.h"

namespace fitbench {

struct CsvInput {
  std::filesystem::path csv;  // the CSV file (with a header row); relative: the working folder
  // Evaluate: the target column (empty: the targets the model was trained on). Predict: a column
  // to leave out of the features when the model does not name its features (empty: none).
  std::string target;
  char delimiter = ',';
  int batch_size = 32;
  std::string model_name = "the model";    // how errors name the model, e.g. "model.json"
  std::string target_option = "--target";  // how hints name the choice of target column
};

// Whether the model names the CSV columns it was trained on (features and targets): a model
// trained on a CSV file; not one trained on a generator's data, nor an older model file.
bool names_trained_columns(const ModelFile& model);

// data.standardize's statistics from the model, applied to features read as it was trained (none
// when the model has none). Throws InputError("<model_name>: data.mean", ...) when their count is
// not the features'.
void standardize_as_trained(const ModelFile& model, Matrix& x, const std::string& model_name);

// Keras's model.evaluate on the CSV's rows: the loss and metrics (keys as fit's logs). Throws
// InputError naming the place: the model (no compile section), the CSV (path, line and column;
// a missing feature column; too few columns), "data.target" for a target column the user chose
// that is not there (or, when the model names none, that is needed), "data.delimiter",
// "batch_size".
struct Evaluation {
  Logs logs;       // "loss" and the compiled metrics, as model.evaluate returns them
  Index rows = 0;  // the CSV's data rows
};
Evaluation evaluate_on_csv(const ModelFile& model, const CsvInput& in, int verbose = 0,
                           const RunOptions& run = {});

// The CSV's input rows (as read, before standardization) and the model's outputs for them.
struct Predictions {
  std::vector<std::string> input_names;   // the feature columns, in the model's order
  Matrix inputs;                          // (rows, features)
  std::vector<std::string> output_names;  // "output_0", "output_1", ...
  Matrix outputs;                         // (rows, outputs)
};

// model.predict on the CSV's rows; the same errors as evaluate_on_csv but no target is needed.
Predictions predict_on_csv(const ModelFile& model, const CsvInput& in);

// How Keras prints a log value (and Python a float): {:.4f} when |v| > 1e-3 or v is 0, else
// {:.4e}; "nan", "inf", "-inf".
std::string keras_number(double v);

// Results as files: a header row, then one row per line, numbers as "%.9g" (a float's value
// exactly). logs_csv: "name,value" rows; logs_json: {"accuracy": .., "loss": ..}, as Keras's
// evaluate(return_dict=True). predictions_csv: the input columns (unless `with_inputs` is false)
// then output_0 ...; predictions_json: {"columns": [...], "data": [[row], ...]}.
std::string logs_csv(const Logs& logs);
std::string logs_json(const Logs& logs);
std::string predictions_csv(const Predictions& p, bool with_inputs = true);
std::string predictions_json(const Predictions& p);

}  // namespace fitbench
