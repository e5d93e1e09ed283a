// fitbench-cli export: an experiment or a model in another tool's format. Each format is one
// entry of kFormats; the command parses, picks the format and writes the file atomically (the
// script also to stdout for "-o -").
#include <QCommandLineParser>
#include <iostream>

#include "app/cli_commands.h"
#include "app/cli_options.h"
#include "core/base/error.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/field_info.h"
#include "core/file_checks.h"
#include "core/io/experiment.h"
#include "core/io/json_file.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/run/experiment_runner.h"
#include "core/run/keras_script.h"
#include "core/run/run_plan.h"

namespace fitbench::cli {
namespace {

struct Format {
  const char* name;
  const char* what;
  const char* suffix;  // the name Keras requires of the file; "" for any
  // Writes the model (keras, weights); null for the script, made from the plan.
  void (*write_model)(const ModelFile& model, const std::filesystem::path& file, StagedFiles* into);
};

constexpr Format kFormats[] = {
    {"python", "a runnable Keras 3 script (.py)", "", nullptr},
    {"keras", "a Keras model archive (.keras)", ".keras", write_keras_archive},
    {"weights", "Keras weights (.weights.h5)", ".weights.h5", write_keras_weights},
};

std::string format_choices() {
  std::vector<std::string> names;
  for (const Format& f : kFormats) names.push_back(std::string(f.name) + " (" + f.what + ")");
  return "the formats are: " + join_names(
                                   names, [](const std::string& n) { return n; }, ", ");
}

const Format& find_format(const std::string& name) {
  for (const Format& f : kFormats)
    if (name == f.name) return f;
  throw InputError("--format", "unknown format \"" + name + "\"; " + format_choices());
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A model file (fitbench's JSON with "format", or a .keras archive) rather than an experiment.
bool is_model_file(const std::string& file) {
  if (is_keras_archive(file) || is_keras_weights(file)) return true;
  const auto doc = json_io::read_json_file(file);
  return doc.is_object() && doc.contains("format");
}

}  // namespace

int export_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Writes an experiment or a model in another format. --format python: a runnable Keras 3 "
      "script (seed, distribution, the same data, model, compile, fit and the final line of "
      "`fitbench-cli run`), made from the run plan as `run` would train it. --format keras: a "
      ".keras file (model.save) of a model file, or of an experiment's model with the weights it "
      "starts training from. --format weights: the same as a .weights.h5 file "
      "(model.save_weights).");
  p.addPositionalArgument("input",
                          "the experiment file (.json) or, for keras and weights, a "
                          "model file (.json or .keras)");
  p.addOption({"format", "python, keras or weights", "FORMAT"});
  p.addOption({{"o", "output"}, "the file to write; - for stdout (python only)", "FILE"});
  p.addOption({"devices", "the number of simulated devices, as for run", "N"});
  if (const int code = parse(p, args, 1, "EXPERIMENT or MODEL"); code >= 0) return code;
  if (!p.isSet("format")) throw InputError("--format", "is required; " + format_choices());
  if (!p.isSet("output") || p.value("output").isEmpty())
    throw InputError("--output", "is required: -o FILE, or -o - for stdout");
  const Format& format = find_format(p.value("format").toStdString());
  const std::string file = p.positionalArguments()[0].toStdString();
  const std::string output = p.value("output").toStdString();
  if (format.write_model && output == "-")
    throw InputError("--output", std::string("must name a file: ") + format.what +
                                     " is binary, not text for stdout");
  if (format.write_model && !ends_with(output, format.suffix))
    throw InputError("--output", "\"" + output + "\" must end in " + format.suffix +
                                     ": Keras tells its files apart by that name");

  // A model file converts directly; an experiment goes through its run plan.
  if (format.write_model && is_model_file(file)) {
    if (p.isSet("devices"))
      throw InputError("--devices", "applies to an experiment, not to a model file");
    check_outputs_apart({{file, {}, "the model file"}},
                        {{output, "--output", "the exported file"}});
    check_writable_file(output);
    format.write_model(read_model_file(file), output, nullptr);
    return 0;
  }
  if (!format.write_model && (is_keras_archive(file) || is_keras_weights(file)))
    throw InputError(file,
                     "is a model, but a script needs an experiment: it makes the data and "
                     "trains; export the experiment the model was trained in");

  RunOverrides o;
  if (p.isSet("devices")) o.devices = int_option(p, "devices", 1, kMaxDeviceCount);
  if (output != "-") {
    check_outputs_apart(run_inputs(read_experiment(file), file),
                        {{output, "--output", "the exported file"}});
    check_writable_file(output);
  }
  PlanContext context;
  context.source = file;
  context.experiment_file = file;
  const RunPlan plan = plan_run(read_experiment(file), o, context);
  print_notices(plan.notices);
  if (format.write_model) {
    // The model as the run would start it: built, its initial or loaded weights.
    format.write_model(plan.model->model_file(), output, nullptr);
    return 0;
  }
  const std::string text = keras_script(plan);
  if (output == "-") {
    std::cout << text;
  } else {
    json_io::write_file_atomically(output, text);
  }
  return 0;
}

}  // namespace fitbench::cli
