#include "core/run/model_on_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/data/csv_reader.h"
#include "core/data/dataset.h"
#include "core/python/random.h"
#include "core/run/experiment_runner.h"

namespace fitbench {
namespace {

std::string g9(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

// A value for JSON: the float's "%.9g" digits as a double (NaN and infinities become null).
nlohmann::json json_number(double v) {
  if (!std::isfinite(v)) return nullptr;
  return std::stod(g9(v));
}

// The CSV's features and target columns, every column but the target being a feature.
Dataset read_features(const std::string& csv, const std::string& target, char delimiter) {
  DataSpec spec;
  spec.generator.clear();
  spec.csv = csv;
  if (!target.empty()) spec.target = {target};
  spec.delimiter = delimiter;
  return read_csv_dataset(spec, std::filesystem::current_path());
}

// The CSV's feature columns against the model's input, named after the file (with a hint about
// the target option when the target columns may still be among them).
void check_feature_count(const Sequential& model, Index columns, const std::string& csv,
                         bool target_given, const std::string& target_option) {
  const Index wanted = model.network().input_units();
  if (columns == wanted) return;
  throw InputError(csv, target_given
                            ? "has " + counted(columns, "feature column") +
                                  " (every column but the target) but the model takes " +
                                  counted(wanted, "feature")
                            : "has " + counted(columns, "column") + " but the model takes " +
                                  counted(wanted, "feature") +
                                  "; if the target columns are among them, name them with " +
                                  target_option + " to leave them out");
}

// The model's feature columns, by name, from a CSV table (its header names them all).
Matrix named_features(const ModelData& data, const CsvTable& table, char delimiter,
                      const std::string& csv, const std::string& model_name) {
  Matrix x(table.values.rows(), static_cast<Index>(data.features.size()));
  for (size_t f = 0; f < data.features.size(); ++f) {
    const std::string& name = data.features[f];
    const auto at = std::find(table.header.begin(), table.header.end(), name);
    if (at == table.header.end()) {
      throw InputError(csv, "has no column \"" + name + "\", a feature " + model_name +
                                " was trained on; " +
                                describe_csv_header(table.header, delimiter, name));
    }
    x.col(static_cast<Index>(f)) = table.values.col(at - table.header.begin());
  }
  return x;
}

// The model with its weights, built for `features` inputs. Building draws initializer seeds: a
// sequence of this thread's own, so that the process-wide one (a run's) is left as it was.
std::unique_ptr<Sequential> load_model(const ModelFile& file, Index features,
                                       const std::string& csv, bool target_given,
                                       const CsvInput& in) {
  RandomScope own_seeds;
  auto model = std::make_unique<Sequential>(file.config);
  if (!model->built()) model->build(features);
  check_feature_count(*model, features, csv, target_given, in.target_option);
  model->set_weights(file.weights, in.model_name);
  return model;
}

}  // namespace

void standardize_as_trained(const ModelFile& file, Matrix& x, const std::string& model_name) {
  if (!file.data || file.data->mean.empty()) return;
  if (static_cast<Index>(file.data->mean.size()) != x.cols())
    throw InputError(model_name + ": data.mean",
                     "has " + counted(static_cast<long long>(file.data->mean.size()), "value") +
                         " but the data has " + counted(x.cols(), "feature column"));
  for (Index j = 0; j < x.cols(); ++j) {
    const auto mean = static_cast<float>(file.data->mean[static_cast<size_t>(j)]);
    const auto stddev = static_cast<float>(file.data->stddev[static_cast<size_t>(j)]);
    x.col(j) = (x.col(j).array() - mean) / stddev;
  }
}

bool names_trained_columns(const ModelFile& model) {
  return model.data && !model.data->features.empty() && !model.data->targets.empty();
}

Evaluation evaluate_on_csv(const ModelFile& file, const CsvInput& in, int verbose,
                           const RunOptions& run) {
  if (!file.compile)
    throw InputError(in.model_name, "has no \"compile\" section, so it has no loss to evaluate");
  const std::string csv = in.csv.string();
  Dataset data;
  if (names_trained_columns(file)) {
    // The columns the model was trained on, by name; a chosen target may name other targets.
    DataSpec spec;
    spec.generator.clear();
    spec.csv = csv;
    spec.target = in.target.empty() ? file.data->targets : std::vector<std::string>{in.target};
    spec.features_columns = file.data->features;
    spec.delimiter = in.delimiter;
    try {
      data = read_csv_dataset(spec, std::filesystem::current_path());
    } catch (const InputError& e) {
      if (e.place() == "data.target")
        throw InputError(in.target.empty() ? csv : "data.target", e.message());
      if (e.place() == "data.features")
        throw InputError(csv, e.message() + " (a feature " + in.model_name + " was trained on)");
      throw;
    }
  } else {
    if (in.target.empty())
      throw InputError("data.target", "must name the target column: " + in.model_name +
                                          " does not name the columns it was trained on");
    data = read_features(csv, in.target, in.delimiter);
  }
  standardize_as_trained(file, data.x, in.model_name);
  std::unique_ptr<Sequential> model = load_model(file, data.x.cols(), csv, true, in);
  try {
    model->compile(*file.compile);
  } catch (const InputError& e) {
    throw e.within(in.model_name);  // the model's compile section
  }
  check_sparse_labels(data, model->network().output_units(), file.compile->loss.name);
  return {model->evaluate(data.x, data.y, in.batch_size, verbose, run), data.size()};
}

Predictions predict_on_csv(const ModelFile& file, const CsvInput& in) {
  const std::string csv = in.csv.string();
  Predictions p;
  if (file.data && !file.data->features.empty()) {
    // The trained-on columns by name: others (a target) are left out.
    const CsvTable table = read_csv_table(csv, in.delimiter);
    p.inputs = named_features(*file.data, table, in.delimiter, csv, in.model_name);
    p.input_names = file.data->features;
  } else if (!in.target.empty()) {
    Dataset data = read_features(csv, in.target, in.delimiter);
    p.inputs = std::move(data.x);
    p.input_names = std::move(data.feature_names);
  } else {
    CsvTable table = read_csv_table(csv, in.delimiter);
    p.inputs = std::move(table.values);
    p.input_names = std::move(table.header);
  }
  Matrix x = p.inputs;
  standardize_as_trained(file, x, in.model_name);
  std::unique_ptr<Sequential> model = load_model(file, x.cols(), csv, !in.target.empty(), in);
  p.outputs = model->predict(x, in.batch_size, 0);
  for (Index c = 0; c < p.outputs.cols(); ++c)
    p.output_names.push_back("output_" + std::to_string(c));
  return p;
}

std::string keras_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, std::abs(v) > 1e-3 || v == 0.0 ? "%.4f" : "%.4e", v);
  return buf;
}

std::string logs_csv(const Logs& logs) {
  std::string out = "name,value\n";
  for (const auto& [name, value] : logs) out += csv_field(name) + "," + g9(value) + "\n";
  return out;
}

std::string logs_json(const Logs& logs) {
  nlohmann::json doc = nlohmann::json::object();
  for (const auto& [name, value] : logs) doc[name] = json_number(value);
  return doc.dump(2) + "\n";
}

std::string predictions_csv(const Predictions& p, bool with_inputs) {
  std::string out;
  std::vector<std::string> names = with_inputs ? p.input_names : std::vector<std::string>{};
  names.insert(names.end(), p.output_names.begin(), p.output_names.end());
  for (size_t c = 0; c < names.size(); ++c) out += (c ? "," : "") + csv_field(names[c]);
  out += "\n";
  for (Index r = 0; r < p.outputs.rows(); ++r) {
    bool first = true;
    auto add = [&](float v) {
      if (!first) out += ",";
      out += g9(static_cast<double>(v));
      first = false;
    };
    if (with_inputs)
      for (Index c = 0; c < p.inputs.cols(); ++c) add(p.inputs(r, c));
    for (Index c = 0; c < p.outputs.cols(); ++c) add(p.outputs(r, c));
    out += "\n";
  }
  return out;
}

std::string predictions_json(const Predictions& p) {
  nlohmann::json columns = p.input_names;
  for (const std::string& name : p.output_names) columns.push_back(name);
  nlohmann::json data = nlohmann::json::array();
  for (Index r = 0; r < p.outputs.rows(); ++r) {
    nlohmann::json row = nlohmann::json::array();
    for (Index c = 0; c < p.inputs.cols(); ++c) row.push_back(json_number(p.inputs(r, c)));
    for (Index c = 0; c < p.outputs.cols(); ++c) row.push_back(json_number(p.outputs(r, c)));
    data.push_back(std::move(row));
  }
  return nlohmann::json{{"columns", std::move(columns)}, {"data", std::move(data)}}.dump() + "\n";
}

}  // namespace fitbench
