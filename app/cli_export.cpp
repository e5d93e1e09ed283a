// fitbench-cli export: an experiment in another tool's format. Each format is one entry of
// kFormats and one function; the command parses, picks the format and writes the text
// atomically (or to stdout for "-o -").
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
#include "core/run/experiment_runner.h"
#include "core/run/keras_script.h"
#include "core/run/run_plan.h"

namespace fitbench::cli {
namespace {

struct Format {
  const char* name;
  const char* what;
  // Makes the text from the experiment's plan; null: named, not yet available.
  std::string (*make)(const RunPlan& plan);
};

constexpr Format kFormats[] = {
    {"python", "a runnable Keras 3 script (.py)", keras_script},
    {"keras", "a Keras model archive (.keras)", nullptr},
    {"weights", "Keras weights (.weights.h5)", nullptr},
};

// "--format: must be one of ...": the available formats and those that are not yet.
std::string format_choices() {
  std::vector<std::string> available, later;
  for (const Format& f : kFormats) (f.make ? available : later).push_back(f.name);
  const auto names = [](const std::vector<std::string>& list) {
    return join_names(
        list, [](const std::string& n) { return n; }, " and ");
  };
  std::string text = "the known formats are: " + names(available);
  if (!later.empty()) text += " (" + names(later) + " are not yet available)";
  return text;
}

const Format& find_format(const std::string& name) {
  for (const Format& f : kFormats) {
    if (name != f.name) continue;
    if (f.make == nullptr)
      throw InputError("--format", "\"" + name + "\" (" + f.what + ") is not yet available; " +
                                       format_choices());
    return f;
  }
  throw InputError("--format", "unknown format \"" + name + "\"; " + format_choices());
}

}  // namespace

int export_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Writes an experiment in another format. --format python: a runnable Keras 3 script "
      "(seed, distribution, the same data, model, compile, fit and the final line of "
      "`fitbench-cli run`), made from the run plan as `run` would train it.");
  p.addPositionalArgument("experiment", "the experiment file (.json)");
  p.addOption({"format", "python (keras and weights are not yet available)", "FORMAT"});
  p.addOption({{"o", "output"}, "the file to write; - for stdout", "FILE"});
  p.addOption({"devices", "the number of simulated devices, as for run", "N"});
  if (const int code = parse(p, args, 1, "EXPERIMENT"); code >= 0) return code;
  if (!p.isSet("format")) throw InputError("--format", "is required; " + format_choices());
  if (!p.isSet("output") || p.value("output").isEmpty())
    throw InputError("--output", "is required: -o FILE, or -o - for stdout");
  const Format& format = find_format(p.value("format").toStdString());

  RunOverrides o;
  if (p.isSet("devices")) o.devices = int_option(p, "devices", 1, kMaxDeviceCount);
  const std::string file = p.positionalArguments()[0].toStdString();
  const std::string output = p.value("output").toStdString();
  if (output != "-") {
    check_outputs_apart(run_inputs(read_experiment(file), file),
                        {{output, "--output", "the exported file"}});
    check_writable_file(output);
  }
  PlanContext context;
  context.source = file;
  context.experiment_file = file;
  const RunPlan plan = plan_run(read_experiment(file), o, context);
  for (const PlanNotice& n : plan.notices)
    std::cerr << "fitbench-cli: " << (n.kind == PlanNotice::Kind::kWarning ? "warning: " : "note: ")
              << printable_message(n.text) << "\n";
  const std::string text = format.make(plan);
  if (output == "-") {
    std::cout << text;
  } else {
    json_io::write_file_atomically(output, text);
  }
  return 0;
}

}  // namespace fitbench::cli
