#include "app/cli_commands.h"

#include <QCommandLineParser>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "app/cli_options.h"
#include "app/cli_processes.h"
#include "app/repeated_option.h"
#include "core/base/error.h"
#include "core/data/csv_reader.h"
#include "core/data/dataset.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/devices.h"
#include "core/file_checks.h"
#include "core/io/chrome_trace.h"
#include "core/io/experiment.h"
#include "core/io/history_file.h"
#include "core/io/json_file.h"
#include "core/io/keras_file.h"
#include "core/io/model_file.h"
#include "core/run/experiment_runner.h"
#include "core/run/model_on_csv.h"
#include "core/run/run.h"
#include "core/run/run_events.h"
#include "core/run/run_plan.h"
#include "core/training/progbar.h"

namespace fitbench::cli {

int parse(QCommandLineParser& parser, const QStringList& args, int positionals,
          const char* positional_name) {
  parser.addHelpOption();
  if (!parser.parse(args)) {
    std::cerr << args[0].toStdString() << ": "
              << printable_message(parser.errorText().toStdString()) << "\n";
    return 2;
  }
  if (parser.isSet("help") || parser.isSet("help-all")) {
    // QCommandLineParser names the executable's full path; show the command as typed.
    QString help = parser.helpText();
    const qsizetype eol = help.indexOf('\n');
    const QString usage = help.left(eol);
    help = "Usage: " + args[0] + usage.mid(usage.indexOf(" [options]")) + help.mid(eol);
    std::cout << help.toStdString();
    return 0;
  }
  if (const QString repeated = repeated_option_error(parser); !repeated.isEmpty()) {
    std::cerr << args[0].toStdString() << ": " << printable_message(repeated.toStdString()) << "\n";
    return 2;
  }
  if (parser.positionalArguments().size() != positionals) {
    std::cerr << args[0].toStdString() << ": expected " << positional_name << " (see --help)\n";
    return 2;
  }
  return -1;
}

void print_notices(const std::vector<PlanNotice>& notices) {
  for (const PlanNotice& n : notices)
    std::cerr << "fitbench-cli: " << (n.kind == PlanNotice::Kind::kWarning ? "warning: " : "note: ")
              << printable_message(n.text) << "\n";
}

int int_option(const QCommandLineParser& p, const QString& name, int min, int max) {
  bool ok = false;
  const int v = p.value(name).toInt(&ok);
  if (!ok || v < min || v > max)
    throw InputError("--" + name.toStdString(), "must be an integer from " + std::to_string(min) +
                                                    " to " + std::to_string(max) + ", got \"" +
                                                    p.value(name).toStdString() + "\"");
  return v;
}

namespace {

// How many shards a batch is split into: one per device (DataParallel), one per mesh row
// (ModelParallel), none without a distribution (every process trains the whole run).
int batch_shards(const ExperimentSpec& spec, int devices) {
  if (spec.distribution.class_name.empty()) return 0;
  if (spec.distribution.class_name == "ModelParallel")
    return mesh_placement(spec.distribution).batch;
  return devices;
}

// A number in [lo, hi]; with zero_or_from, also 0 below lo.
double number_option(const QCommandLineParser& p, const QString& name, const std::string& what,
                     double lo, double hi, bool zero_or_from = false) {
  bool ok = false;
  const double v = p.value(name).toDouble(&ok);
  if (!ok || !((v >= lo && v <= hi) || (zero_or_from && v == 0.0)))
    throw InputError("--" + name.toStdString(),
                     "must be " + what + ", got \"" + p.value(name).toStdString() + "\"");
  return v;
}

// "1,0.5" -> {1, 0.5}, each in [0.01, 1].
std::vector<double> speed_list(const QString& text) {
  std::vector<double> out;
  for (const QString& part : text.split(',')) {
    bool ok = false;
    const double v = part.trimmed().toDouble(&ok);
    if (!ok || !(v >= kMinDeviceSpeed && v <= 1.0))
      throw InputError("--device-speed",
                       "must list one relative speed per device, each from 0.01 to 1 (e.g. "
                       "1,0.5), got \"" +
                           text.toStdString() + "\"");
    out.push_back(v);
  }
  return out;
}

// --delimiter: one character, as an experiment's data.delimiter.
char delimiter_option(const QCommandLineParser& p) {
  const std::string d = p.value("delimiter").toStdString();
  if (d.size() != 1)
    throw InputError("--delimiter", "must be a single ASCII character, got \"" + d + "\"");
  return d[0];
}

// list_devices for the devices command's --type.
std::vector<std::string> list_devices_of_option(const std::string& type, int count) {
  try {
    return list_devices(type, count);
  } catch (const InputError& e) {
    if (e.place() == "devices.type") throw InputError("--type", e.message());
    throw;
  }
}

const char* g_building = "the command's input";

// Writes what it is given to two stream buffers: the Keras text to standard output and, as text
// events, to --events FILE.
class TeeBuffer : public std::streambuf {
 public:
  TeeBuffer(std::streambuf* a, std::streambuf* b) : a_(a), b_(b) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    a_->sputc(traits_type::to_char_type(c));
    b_->sputc(traits_type::to_char_type(c));
    return c;
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    a_->sputn(s, n);
    b_->sputn(s, n);
    return n;
  }
  int sync() override { return a_->pubsync() | b_->pubsync(); }

 private:
  std::streambuf* a_;
  std::streambuf* b_;
};

}  // namespace

const char* building() { return g_building; }

void set_building(const char* what) { g_building = what; }

std::array<int, 2> mesh_option(const QString& text) {
  const QStringList parts = text.toLower().split('x');
  bool ok0 = false, ok1 = false;
  const int r = parts.size() == 2 ? parts[0].toInt(&ok0) : 0;
  const int c = parts.size() == 2 ? parts[1].toInt(&ok1) : 0;
  if (!ok0 || !ok1 || r < 1 || c < 1 || r > kMaxDeviceCount || c > kMaxDeviceCount)
    throw InputError("--mesh", "must be RxC with two whole numbers from 1 to " +
                                   std::to_string(kMaxDeviceCount) + " (batch x model), got \"" +
                                   text.toStdString() + "\"");
  return {r, c};
}

int run_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription("Trains an experiment file with fit() and prints Keras's output.");
  p.addPositionalArgument("EXPERIMENT", "The experiment file (JSON).");
  p.addOption({"epochs", "Override fit.epochs.", "N"});
  p.addOption({"batch-size", "Override fit.batch_size.", "N"});
  p.addOption(
      {"verbose", "Override fit.verbose: 0 silent, 1 progress bar, 2 a line per epoch.", "0|1|2"});
  p.addOption({"seed", "Override the experiment's seed (keras.utils.set_random_seed).", "N"});
  p.addOption({"load-weights", "Start from the weights of this model file.", "MODEL"});
  p.addOption({"save-model", "Write the trained model to this model file.", "MODEL"});
  p.addOption({"history", "Write the History to FILE.json or FILE.csv.", "FILE"});
  p.addOption({"devices",
               "Number of simulated CPU devices (default: the experiment's devices.count, "
               "FITBENCH_CPU_DEVICES, XLA_FLAGS=--xla_force_host_platform_device_count=N, or 1).",
               "N"});
  p.addOption({"strategy",
               "Distribution: none, data_parallel or model_parallel (default: the experiment's "
               "distribution).",
               "none|data_parallel|model_parallel"});
  p.addOption({"mesh",
               "ModelParallel's device mesh, batch x model (e.g. 2x2; default 1xN). Without a "
               "layout map, every Dense kernel whose units divide by the model axis is split by "
               "its output units; the rest is replicated.",
               "RxC"});
  p.addOption({"allreduce",
               "The algorithm of every collective (DataParallel's gradient all-reduce; "
               "ModelParallel's all-gathers and all-reduces too): ring (reduce-scatter then "
               "all-gather in N chunks) or naive (device 0 sums and sends back) (default: the "
               "experiment's devices.allreduce, else ring).",
               "ring|naive"});
  p.addOption(
      {"device-speed",
       "Rehearsal: each device's relative speed, one per device (cpu:0, cpu:1, ...; "
       "ModelParallel's mesh row by row), from 0.01 to 1; a device at 0.5 takes twice as long "
       "for forward, backward and update (default: the experiment's devices.speed, else "
       "all 1).",
       "S0,S1,..."});
  p.addOption({"link-latency-us",
               "Rehearsal: microseconds added to every message of a collective (default: the "
               "experiment's devices.link_latency_us, else 0).",
               "X"});
  p.addOption({"link-gbps",
               "Rehearsal: link bandwidth in GB/s; a message of B bytes takes B / bandwidth on "
               "top of the latency (default: the experiment's devices.link_gbps, else 0 = "
               "unlimited).",
               "Y"});
  p.addOption({"batch-norm-statistics",
               "Rehearsal: whose statistics BatchNormalization normalizes by under "
               "DataParallel: global (the whole batch's, as Keras) or per_device (each "
               "device's shard, device 0's moving statistics: PyTorch's DistributedDataParallel "
               "without SyncBatchNorm) (default: the experiment's devices.batch_norm_statistics, "
               "else global).",
               "global|per_device"});
  p.addOption({"trace",
               "Write every step's per-device spans to FILE.json in the Chrome trace event "
               "format (open it in Perfetto or chrome://tracing). Needs a distribution.",
               "FILE.json"});
  p.addOption({"events",
               "Stream the run's events as JSON lines to FILE as they happen, or to standard "
               "output with - (the Keras text then goes into the stream as text events): "
               "begin, text, batch, epoch, step and end (docs/events.md).",
               "FILE|-"});
  p.addOption({"devices-per-process",
               "Under mpirun: the devices each process hosts, as threads (default: the "
               "experiment's devices.count or --devices divided by the processes, else 1). The "
               "run's devices are cpu:0 ... cpu:N-1 over every process, in rank order.",
               "K"});
  if (int code = parse(p, args, 1, "one EXPERIMENT file"); code >= 0) return code;

  // The options' own syntax; what they mean for the experiment is the plan's to check. Every
  // problem is said together, options first.
  OptionReader option(p);
  std::vector<PlanProblem>& problems = option.problems;
  RunOverrides o;
  option("epochs", [&] { o.epochs = int_option(p, "epochs", 1, kMaxFitCount); });
  option("batch-size", [&] { o.batch_size = int_option(p, "batch-size", 1, kMaxFitCount); });
  option("verbose", [&] { o.verbose = int_option(p, "verbose", 0, 2); });
  option("seed", [&] { o.seed = static_cast<uint64_t>(int_option(p, "seed", 0, INT32_MAX)); });
  option("load-weights", [&] { o.initial_weights = p.value("load-weights").toStdString(); });
  option("devices", [&] { o.devices = int_option(p, "devices", 1, kMaxDeviceCount); });
  std::optional<int> per_process;
  option("devices-per-process",
         [&] { per_process = int_option(p, "devices-per-process", 1, kMaxDeviceCount); });
  option("strategy", [&] { o.strategy = p.value("strategy").toStdString(); });
  option("mesh", [&] { o.mesh = mesh_option(p.value("mesh")); });
  option("allreduce", [&] { o.allreduce = p.value("allreduce").toStdString(); });
  option("device-speed", [&] { o.device_speed = speed_list(p.value("device-speed")); });
  option("link-latency-us", [&] {
    o.link_latency_us =
        number_option(p, "link-latency-us", "a number of microseconds from 0 to 100000 (100 ms)",
                      0.0, kMaxLinkLatencyUs);
  });
  option("link-gbps", [&] {
    o.link_gbps =
        number_option(p, "link-gbps", "0 (unlimited) or a bandwidth in GB/s from 0.01 to 10000",
                      kMinLinkGbps, kMaxLinkGbps, true);
  });
  option("batch-norm-statistics",
         [&] { o.batch_norm_statistics = p.value("batch-norm-statistics").toStdString(); });
  for (const char* flag : {"save-model", "history", "trace"})
    if (p.isSet(flag) && p.value(flag).isEmpty())
      problems.push_back({std::string("--") + flag, "needs a file name"});
  if (p.isSet("events") && p.value("events").isEmpty())
    problems.push_back({"--events", "needs a file name, or - for standard output"});
  o.events_file = p.value("events").toStdString();
  o.history_file = p.value("history").toStdString();
  o.trace_file = p.value("trace").toStdString();
  o.save_model_file = p.value("save-model").toStdString();

  const std::string file = p.positionalArguments()[0].toStdString();
  catch_stop_signal();
  // Under mpirun (or KERAS_DISTRIBUTION_*), every process runs this same command on its share of
  // the devices; rank 0 alone prints the Keras text and writes the files.
  ProcessRun processes(detect_process_layout(std::getenv));
  if (per_process && !processes.multi())
    problems.push_back({"--devices-per-process",
                        "needs several processes: " +
                            (have_mpi() ? std::string("start fitbench-cli with mpirun -np N")
                                        : install_mpi_hint())});
  if (processes.multi()) {
    try {
      processes.check_same(file, args);
    } catch (const InputError&) {
      if (!processes.owns_output()) return 2;  // rank 0 says it
      throw;
    }
  }
  PlanContext context;
  context.source = file;
  context.experiment_file = file;
  std::optional<RunPlan> planned;
  std::string plan_error;
  std::exception_ptr plan_exception;
  try {
    ExperimentSpec spec = read_experiment(file);
    // Without a distribution there is nothing to spread: every process trains the whole model.
    const bool distributed =
        o.strategy ? *o.strategy != "none" : !spec.distribution.class_name.empty();
    if (processes.multi() && !distributed && processes.owns_output())
      std::cerr << "fitbench-cli: note: the experiment has no distribution, so each of the "
                << processes.size()
                << " processes trains the whole model on one device (the same run; rank 0 "
                   "speaks); add --strategy data_parallel to spread the batches over them\n";
    if (processes.multi() && distributed) {
      try {
        o.devices = processes.device_count(per_process, o.devices, spec.devices.count);
      } catch (const InputError& e) {
        problems.push_back({e.place(), e.message()});
        o.devices = processes.size();  // said once, here
      }
    }
    g_building = "the run plan (the data set, the model and its optimizer)";
    planned.emplace(plan_run(std::move(spec), o, context, std::move(problems)));
  } catch (const std::exception& e) {
    plan_error = e.what();
    plan_exception = std::current_exception();
  }
  const ProcessRun::PlanOutcome outcome = processes.plan_outcome(plan_error);
  if (!outcome.all_planned) {
    if (outcome.say_mine && outcome.prefix.empty()) std::rethrow_exception(plan_exception);
    if (outcome.say_mine) {
      std::istringstream lines(plan_error);
      for (std::string line; std::getline(lines, line);)
        std::cerr << "fitbench-cli: " << outcome.prefix << printable_message(line) << "\n";
    }
    if (!outcome.others.empty()) std::cerr << "fitbench-cli: " << outcome.others << "\n";
    return 2;
  }
  RunPlan& plan = *planned;
  const bool speaks = processes.owns_output();
  if (speaks) print_notices(plan.notices);
  if (processes.multi() && speaks) {
    const std::string crowded = processes.crowding(plan.devices);
    if (!crowded.empty()) std::cerr << "fitbench-cli: " << crowded << "\n";
  }
  const bool model_parallel = plan.spec.distribution.class_name == "ModelParallel";
  const MeshPlacement mesh = mesh_placement(plan.spec.distribution);
  if (processes.multi() && p.isSet("verbose"))
    std::cerr << "fitbench-cli: " +
                     processes.placement(plan.devices, batch_shards(plan.spec, plan.devices),
                                         model_parallel ? &mesh : nullptr, plan.spec.fit.batch_size,
                                         plan.train_rows()) +
                     "\n";

  RunIO io;
  TrainingControl control;
  StopOnSignal stop_on_signal(processes, control);
  io.control = &control;
  io.callbacks.push_back(&stop_on_signal);
  std::ostream silent(nullptr);  // the other processes' Keras text goes nowhere
  io.interactive = speaks && stdout_is_terminal();
  if (!speaks) {
    io.out = &silent;
    io.warnings = &silent;
    io.write_files = false;
  }
  RunResult result;
  // --events: rank 0's view of the run, line by line. A file is written as the run goes (read
  // while it grows, like a log), not staged.
  std::ofstream events_file;
  std::optional<RunEventWriter> events;
  std::optional<TeeBuffer> tee;
  std::optional<std::ostream> tee_stream;
  if (speaks && !o.events_file.empty()) {
    const bool to_stdout = o.events_file == "-";
    if (!to_stdout) {
      errno = 0;
      events_file.open(o.events_file, std::ios::binary | std::ios::trunc);
      if (!events_file)
        throw InputError("--events",
                         o.events_file + ": cannot be written" +
                             (errno ? std::string(": ") + std::strerror(errno) : std::string()));
    }
    events.emplace(to_stdout ? std::cout : events_file, processes.size());
    if (to_stdout) {
      io.out = &events->text_stream();
      io.interactive = false;
    } else {
      tee.emplace(std::cout.rdbuf(), events->text_stream().rdbuf());
      tee_stream.emplace(&*tee);
      io.out = &*tee_stream;
    }
  }
  std::ostream& said = io.out ? *io.out : std::cout;  // the Keras text's stream
  // The end event, after the last line of text; false when the events could not be written.
  auto end_events = [&] {
    if (!events) return true;
    said.flush();
    events->write_end(result);
    if (events->good()) return true;
    std::cerr << "fitbench-cli: --events: "
              << (o.events_file == "-" ? std::string("standard output")
                                       : printable_message(o.events_file))
              << ": the run's events could not all be written (a full disk or a closed pipe)\n";
    return false;
  };

  g_building = "the devices' replicas and buffers for training";
  try {
    result = execute_run(plan, io, events ? &*events : nullptr);
  } catch (const std::exception& e) {
    if (!processes.multi()) throw;
    // The other processes wait for this one in their next exchange: end them all.
    std::cout.flush();
    std::cerr << "fitbench-cli: rank " + std::to_string(processes.rank()) + ": " +
                     printable_message(e.what()) + "\n";
    std::cerr.flush();
    processes.abort(dynamic_cast<const InputError*>(&e) ? 2 : 1);
  }
  std::cout.flush();
  processes.run_ended();
  processes.gather(result.usage);  // rank 0 says every device's share
  if (!speaks) return result.stop_reason == "invalid_loss" ? 1 : 0;
  for (const PlanNotice& n : result.notices)
    std::cerr << "fitbench-cli: " << (n.kind == PlanNotice::Kind::kWarning ? "" : "note: ")
              << printable_message(n.text) << "\n";
  // Where each device's time went, last (on stderr, so that stdout stays the Keras script's).
  auto print_usage = [&] {
    std::cout.flush();
    for (size_t d = 0; d < result.usage.size(); ++d)
      std::cerr << usage_line(plan.device_names[d], result.usage[d]) << "\n";
  };
  if (result.stop_reason == "invalid_loss") {
    std::cerr << "fitbench-cli: training stopped: the loss is not a finite number "
                 "(TerminateOnNaN); try a smaller learning rate\n";
    end_events();
    print_usage();
    return 1;
  }
  if (result.history.history.count("accuracy"))
    said << "Final accuracy: " << keras_number(result.history.last("accuracy")) << "\n";
  else if (result.history.history.count("loss"))
    said << "Final loss: " << keras_number(result.history.last("loss")) << "\n";
  const bool events_written = end_events();
  print_usage();
  if (!result.weights_finite) {
    // The History is written; the model file (if asked for) was not, a notice above said so.
    std::cerr << "fitbench-cli: training diverged: the weights are not finite numbers (NaN or "
                 "infinity); lower the learning rate (TerminateOnNaN stops a run at the first "
                 "NaN loss)\n";
    return 1;
  }
  return events_written ? 0 : 1;
}

// A model on a CSV file (core/run/model_on_csv.h), its errors placed at the options that chose
// what it read: --target, --delimiter, --batch-size.
template <class F>
auto naming_csv_options(F&& f) {
  try {
    return f();
  } catch (const InputError& e) {
    if (e.place() == "data.target") throw InputError("--target", e.message());
    if (e.place() == "data.delimiter") throw InputError("--delimiter", e.message());
    if (e.place() == "batch_size") throw InputError("--batch-size", e.message());
    throw;
  }
}

// What evaluate and predict read: --data, --target, --delimiter, --batch-size.
CsvInput csv_input(const QCommandLineParser& p, const std::string& model_path) {
  CsvInput in;
  in.csv = p.value("data").toStdString();
  in.target = p.isSet("target") ? p.value("target").toStdString() : std::string();
  in.delimiter = delimiter_option(p);
  in.model_name = model_path;
  in.batch_size = int_option(p, "batch-size", 1, kMaxFitCount);
  return in;
}

int evaluate_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription("Evaluates a model file on a CSV file and prints loss and metrics.");
  p.addPositionalArgument("MODEL",
                          "The model file (JSON or .keras) with weights and compile options.");
  p.addOption({"data", "The CSV file (with a header row).", "CSV"});
  p.addOption({"target", "The target column (default: the model file's targets).", "COL"});
  p.addOption({"batch-size", "Batch size (default 32).", "N", "32"});
  p.addOption({"delimiter", "The CSV delimiter (default ,).", "C", ","});
  p.addOption({"verbose", "0 silent, 1 progress line (default).", "0|1", "1"});
  if (int code = parse(p, args, 1, "one MODEL file"); code >= 0) return code;
  if (!p.isSet("data")) {
    std::cerr << "fitbench-cli evaluate: --data CSV is required\n";
    return 2;
  }
  const std::string model_path = p.positionalArguments()[0].toStdString();
  const ModelFile file = read_model_file(model_path);
  if (!file.compile)
    throw InputError(model_path, "has no \"compile\" section, so it has no loss to evaluate");
  if (!names_trained_columns(file) && !p.isSet("target")) {
    std::cerr << "fitbench-cli evaluate: --target COL is required: "
              << printable_message(model_path) << " does not name the columns it was trained on\n";
    return 2;
  }
  const CsvInput in = csv_input(p, model_path);
  const int verbose = int_option(p, "verbose", 0, 1);
  RunOptions options;
  options.interactive = stdout_is_terminal();
  const Logs logs =
      naming_csv_options([&] { return evaluate_on_csv(file, in, verbose, options).logs; });
  for (const auto& [k, v] : logs) std::cout << k << ": " << keras_number(v) << "\n";
  return 0;
}

int predict_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Prints a model file's predictions for the rows of a CSV file, as CSV on stdout.");
  p.addPositionalArgument("MODEL", "The model file (JSON or .keras) with weights.");
  p.addOption({"data", "The CSV file (with a header row) of features.", "CSV"});
  p.addOption({"target", "A column of the CSV to leave out of the features.", "COL"});
  p.addOption({"batch-size", "Batch size (default 32).", "N", "32"});
  p.addOption({"delimiter", "The CSV delimiter (default ,).", "C", ","});
  if (int code = parse(p, args, 1, "one MODEL file"); code >= 0) return code;
  if (!p.isSet("data")) {
    std::cerr << "fitbench-cli predict: --data CSV is required\n";
    return 2;
  }
  const std::string model_path = p.positionalArguments()[0].toStdString();
  const ModelFile file = read_model_file(model_path);
  const CsvInput in = csv_input(p, model_path);
  std::cout << naming_csv_options([&] { return predictions_csv(predict_on_csv(file, in), false); });
  return 0;
}

int summary_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription("Prints the Keras summary of an experiment file or a model file.");
  p.addPositionalArgument("FILE", "An experiment file or a model file (JSON or .keras).");
  if (int code = parse(p, args, 1, "one experiment or model FILE"); code >= 0) return code;
  const std::string path = p.positionalArguments()[0].toStdString();
  // The summary needs a model file's config, not its weights' values (a 50 MB file is read in
  // a fraction of the time).
  const bool keras = is_keras_archive(path) || is_keras_weights(path);
  std::optional<nlohmann::ordered_json> doc;
  if (!keras) doc = json_io::read_json_file(path, json_io::WeightValues::kSkip);
  if (keras || (doc->is_object() && doc->contains("format"))) {
    ModelFile file = keras ? read_model_file(path) : model_structure(*doc, path);
    Sequential model(file.config);
    if (!model.built() && !file.weights.empty() && file.weights[0].shape.size() == 2)
      model.build(file.weights[0].shape[0]);
    // The shapes (the values are not read from a JSON file), as set_weights would check them.
    if (model.built()) {
      for (NamedWeight& w : file.weights)
        if (w.values.empty()) {
          size_t n = 1;
          for (int64_t d : w.shape) n *= static_cast<size_t>(d);
          w.values.assign(n, 0.0f);
        }
      model.set_weights(file.weights, path);
    }
    // As Keras's summary of a loaded model, the optimizer's variables are counted when saved.
    if (model.built() && file.compile && file.optimizer) {
      model.compile(*file.compile);
      model.set_optimizer_state(*file.optimizer, path);
    }
    std::cout << model.summary();
  } else {
    const ExperimentSpec spec = read_experiment(path);
    try {
      // A model that declares its input (an InputLayer) needs no data to be summarized.
      Sequential model(spec.model);
      if (const auto input = model.network().declared_input_units()) {
        model.build(*input);
        std::cout << model.summary();
        return 0;
      }
      PreparedRun run = prepare_run(spec);
      std::cout << run.model->summary();
    } catch (const InputError& e) {
      if (e.place().rfind(path, 0) == 0) throw;
      throw e.within(path);
    }
  }
  return 0;
}

int devices_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Lists the simulated devices, as keras.distribution.list_devices() does. The count comes "
      "from --devices, FITBENCH_CPU_DEVICES or "
      "XLA_FLAGS=--xla_force_host_platform_device_count=N (default 1).");
  p.addOption({"devices", "The number of simulated CPU devices.", "N"});
  p.addOption({"type",
               "Device type: cpu (gpu and tpu list nothing: only CPU devices are "
               "simulated).",
               "TYPE", "cpu"});
  if (int code = parse(p, args, 0, "no positional arguments"); code >= 0) return code;
  std::optional<int> count;
  if (p.isSet("devices")) count = int_option(p, "devices", 1, kMaxDeviceCount);
  const auto devices = list_devices_of_option(p.value("type").toStdString(),
                                              resolve_device_count(count, std::nullopt));
  std::cout << device_list_repr(devices) << "\n";
  return 0;
}

}  // namespace fitbench::cli
