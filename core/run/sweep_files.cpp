// A sweep's files: each trial's resolved experiment and History, and the trials tables
// (core/run/sweep.h, docs/sweeps.md).
#include <cmath>
#include <cstdio>

#include "core/base/error.h"
#include "core/base/text.h"
#include "core/io/history_file.h"
#include "core/io/json_file.h"
#include "core/io/json_reader.h"
#include "core/python/python_repr.h"
#include "core/run/sweep.h"

namespace fitbench {
namespace {

using Json = nlohmann::ordered_json;

std::string trial_folder(int number) {
  char name[32];
  std::snprintf(name, sizeof name, "trial_%03d", number);
  return name;
}

std::string csv_value(const Json& v) {
  if (v.is_null()) return "";
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_number_float()) return python_repr(v.get<double>());
  return v.dump();
}

}  // namespace

nlohmann::ordered_json trials_json(const SweepPlan& plan, const std::vector<TrialResult>& results) {
  Json list = Json::array();
  for (size_t t = 0; t < results.size() && t < plan.trials.size(); ++t) {
    const TrialResult& r = results[t];
    const SweepTrial& trial = plan.trials[t];
    Json row = Json::object();
    row["trial"] = r.number;
    row["status"] = status_name(r.status);
    Json params = Json::object();
    for (size_t i = 0; i < plan.spec.parameters.size(); ++i)
      params[plan.spec.parameters[i].path] = trial.values[i];
    row["parameters"] = std::move(params);
    row["objective"] = plan.spec.objective.name;
    row["value"] = json_io::number_or_null(r.objective);
    if (plan.spec.executions_per_trial > 1) {
      row["spread"] = json_io::number_or_null(r.spread);
      Json each = Json::array();
      for (double v : r.objectives) each.push_back(json_io::number_or_null(v));
      row["values"] = std::move(each);
    }
    row["best_epoch"] = r.best_epoch >= 0 ? Json(r.best_epoch) : Json(nullptr);
    row["epochs"] = r.epochs_run;
    row["seconds"] = r.seconds;
    if (r.status != TrialResult::Status::kPending && r.status != TrialResult::Status::kFailed &&
        !r.histories.empty())
      row["experiment"] = trial_folder(r.number) + "/experiment.json";
    if (!r.error.empty()) row["error"] = r.error;
    list.push_back(std::move(row));
  }
  return list;
}

std::string trials_csv(const SweepPlan& plan, const std::vector<TrialResult>& results) {
  const bool repeats = plan.spec.executions_per_trial > 1;
  const std::string& name = plan.spec.objective.name;
  std::string out = "trial,status";
  for (const SweepParameter& p : plan.spec.parameters) out += "," + csv_field(p.path);
  out += "," + csv_field(name) + (repeats ? "," + csv_field(name + "_std") : "") +
         ",best_epoch,epochs,seconds,error\n";
  for (size_t t = 0; t < results.size() && t < plan.trials.size(); ++t) {
    const TrialResult& r = results[t];
    out += std::to_string(r.number) + "," + status_name(r.status);
    for (const Json& v : plan.trials[t].values) out += "," + csv_value(v);
    out += "," + csv_value(json_io::number_or_null(r.objective));
    if (repeats) out += "," + csv_value(json_io::number_or_null(r.spread));
    out += "," + (r.best_epoch >= 0 ? std::to_string(r.best_epoch) : std::string()) + "," +
           std::to_string(r.epochs_run) + "," + python_repr(r.seconds) + "," + csv_field(r.error) +
           "\n";
  }
  return out;
}

void write_trial_files(const SweepPlan& plan, const SweepTrial& trial, const TrialResult& result,
                       const std::filesystem::path& out_dir) {
  const std::filesystem::path dir = out_dir / trial_folder(trial.number);
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(dir.string(), "cannot be made a folder for the trial's files" +
                                       (ec ? ": " + ec.message() : std::string()));
  json_io::write_file_atomically(
      dir / "experiment.json",
      json_io::dump_document(result.experiment.is_null() ? trial.document : result.experiment));
  for (size_t e = 0; e < result.histories.size(); ++e)
    write_history(result.histories[e], dir / (e == 0 ? std::string("history.json")
                                                     : "history_" + std::to_string(e) + ".json"));
  (void)plan;
}

void write_trials_tables(const SweepPlan& plan, const std::vector<TrialResult>& results,
                         const std::filesystem::path& out_dir) {
  json_io::write_file_atomically(out_dir / "trials.json",
                                 json_io::dump_document(trials_json(plan, results)));
  json_io::write_file_atomically(out_dir / "trials.csv", trials_csv(plan, results));
}

}  // namespace fitbench
