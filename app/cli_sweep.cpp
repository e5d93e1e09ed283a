// fitbench-cli sweep EXPERIMENT: every trial of the experiment's sweep section, run concurrently
// (core/run/sweep.h), progress on stderr, the table of trials on stdout, files in --out.
#include <QCommandLineParser>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <thread>

#include "app/cli_commands.h"
#include "app/cli_options.h"
#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/run/sweep.h"

namespace fitbench::cli {
namespace {

SweepControl* g_sweep_control = nullptr;

extern "C" void on_interrupt(int) {
  // The first Ctrl+C stops the sweep cleanly; a second one ends the process as usual.
  if (g_sweep_control) g_sweep_control->request_stop();
  std::signal(SIGINT, SIG_DFL);
}

std::string fixed4(double v) {
  if (!std::isfinite(v)) return v != v ? "-" : v > 0 ? "inf" : "-inf";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

std::string short_value(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    char text[64];
    std::snprintf(text, sizeof text, "%.4g", v.get<double>());
    return text;
  }
  return v.dump();
}

std::string seconds_text(double s) {
  char text[64];
  if (s < 1)
    std::snprintf(text, sizeof text, "%.0f ms", s * 1000);
  else if (s < 60)
    std::snprintf(text, sizeof text, "%.1f s", s);
  else
    std::snprintf(text, sizeof text, "%dm%02ds", static_cast<int>(s) / 60,
                  static_cast<int>(s) % 60);
  return text;
}

// Progress on stderr: a line per trial that ends, with the best so far and the time left.
class Progress : public SweepListener {
 public:
  Progress(const SweepPlan& plan, int jobs) : plan_(plan), jobs_(jobs) {
    start_ = std::chrono::steady_clock::now();
  }

  void on_trial_end(const SweepTrial& trial, const TrialResult& r) override {
    std::lock_guard lock(mutex_);
    ++done_;
    const bool counts =
        r.status == TrialResult::Status::kCompleted || r.status == TrialResult::Status::kPruned;
    if (counts && std::isfinite(r.objective) &&
        (best_trial_ < 0 ||
         (plan_.spec.objective.maximize ? r.objective > best_ : r.objective < best_))) {
      best_ = r.objective;
      best_trial_ = r.number;
    }
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const size_t total = plan_.trials.size();
    std::string line = "fitbench-cli: trial " + std::to_string(done_) + "/" +
                       std::to_string(total) + ": #" + std::to_string(trial.number) + " " +
                       status_name(r.status);
    if (r.status == TrialResult::Status::kFailed) line += " (" + r.error + ")";
    if (r.has_objective()) line += ", " + plan_.spec.objective.name + " " + fixed4(r.objective);
    if (best_trial_ >= 0)
      line += "; best " + fixed4(best_) + " (#" + std::to_string(best_trial_) + ")";
    if (done_ < total)
      line +=
          "; about " +
          seconds_text(elapsed / static_cast<double>(done_) * static_cast<double>(total - done_)) +
          " left";
    std::cerr << printable_message(line) << "\n";
  }

 private:
  const SweepPlan& plan_;
  int jobs_;
  std::mutex mutex_;
  std::chrono::steady_clock::time_point start_;
  size_t done_ = 0;
  double best_ = 0;
  int best_trial_ = -1;
};

// The trials, best first, as a table on stdout.
void print_table(const SweepPlan& plan, const SweepResult& result) {
  std::vector<std::string> header = {"Trial", "Status"};
  for (const SweepParameter& p : plan.spec.parameters) header.push_back(parameter_label(p.path));
  const bool repeats = plan.spec.executions_per_trial > 1;
  header.push_back(plan.spec.objective.name + (repeats ? " (mean ± sd)" : ""));
  header.push_back("Best epoch");
  header.push_back("Time");
  std::vector<std::vector<std::string>> rows;
  for (int t : result.ranking()) {
    const TrialResult& r = result.trials[static_cast<size_t>(t)];
    std::vector<std::string> row = {std::to_string(r.number), status_name(r.status)};
    for (const auto& v : plan.trials[static_cast<size_t>(t)].values) row.push_back(short_value(v));
    row.push_back(fixed4(r.objective) +
                  (repeats && r.objectives.size() > 1 ? " ± " + fixed4(r.spread) : std::string()));
    row.push_back(r.best_epoch >= 0 ? std::to_string(r.best_epoch + 1) : "-");
    row.push_back(r.seconds > 0 ? seconds_text(r.seconds) : "-");
    rows.push_back(std::move(row));
  }
  std::vector<size_t> width(header.size());
  const auto chars = [](const std::string& s) {
    size_t n = 0;
    for (unsigned char c : s) n += (c & 0xC0) != 0x80;
    return n;
  };
  for (size_t c = 0; c < header.size(); ++c) {
    width[c] = chars(header[c]);
    for (const auto& row : rows) width[c] = std::max(width[c], chars(row[c]));
  }
  const auto print_row = [&](const std::vector<std::string>& row) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += row[c] + std::string(width[c] - chars(row[c]) + (c + 1 < row.size() ? 2 : 0), ' ');
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::cout << printable_message(line, 100000) << "\n";
  };
  print_row(header);
  for (const auto& row : rows) print_row(row);
}

}  // namespace

int sweep_command(const QStringList& args) {
  QCommandLineParser p;
  p.setApplicationDescription(
      "Runs every trial of an experiment's sweep section (Keras Tuner's hyperparameters), several "
      "at once, and prints them sorted by the objective.");
  p.addPositionalArgument("EXPERIMENT", "The experiment file (JSON) with a sweep section.");
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  p.addOption({"jobs",
               "Cores the trials share (default: this machine's, " + QString::number(cores) +
                   "); a trial of D devices takes D of them.",
               "N"});
  p.addOption({"oversubscribe",
               "Count every trial as one core, whatever its device count (more threads than "
               "cores: slower steps, more trials at once)."});
  p.addOption({"out",
               "Folder for each trial's experiment and History and trials.csv / trials.json "
               "(default: EXPERIMENT's name with -sweep, in the working folder).",
               "DIR"});
  p.addOption({"overwrite", "Replace the results of an earlier sweep in the --out folder."});
  if (int code = parse(p, args, 1, "one EXPERIMENT file"); code >= 0) return code;

  std::vector<PlanProblem> problems;
  SweepOptions options;
  options.jobs = cores;
  if (p.isSet("jobs")) {
    try {
      options.jobs = int_option(p, "jobs", 1, 1024);
    } catch (const InputError& e) {
      problems.push_back({e.place(), e.message()});
    }
  }
  options.oversubscribe = p.isSet("oversubscribe");
  const std::string file = p.positionalArguments()[0].toStdString();
  const std::filesystem::path out =
      p.isSet("out")
          ? std::filesystem::path(p.value("out").toStdString())
          : std::filesystem::path(std::filesystem::path(file).stem().string() + "-sweep");
  if (p.isSet("out") && p.value("out").isEmpty()) problems.push_back({"--out", "needs a folder"});
  std::error_code ec;
  if (std::filesystem::exists(out / "trials.json", ec) && !p.isSet("overwrite"))
    problems.push_back({out.string(),
                        "holds an earlier sweep's results (trials.json); choose "
                        "another folder with --out, or replace them with "
                        "--overwrite"});
  else if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec))
    problems.push_back({out.string(), "is a file, not a folder; choose a folder with --out"});
  if (!problems.empty()) throw PlanError(problems);

  PlanContext context;
  context.source = file;
  context.base_dir = std::filesystem::absolute(file).parent_path();
  const SweepPlan plan = plan_sweep(read_experiment(file), context);
  for (const PlanNotice& n : plan.notices)
    std::cerr << "fitbench-cli: note: " << printable_message(n.text) << "\n";
  if (p.isSet("overwrite") && std::filesystem::is_directory(out, ec)) {
    // Only what a sweep writes: trial folders and the tables.
    for (const auto& entry : std::filesystem::directory_iterator(out, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("trial_", 0) == 0 || name == "trials.csv" || name == "trials.json")
        std::filesystem::remove_all(entry.path(), ec);
    }
  }
  options.out_dir = out;
  std::cerr << "fitbench-cli: " << plan.trials.size() << " trials (" << plan.spec.method << "), "
            << options.jobs << (options.jobs == 1 ? " job" : " jobs") << ", objective "
            << plan.spec.objective.name << " (" << (plan.spec.objective.maximize ? "max" : "min")
            << ")\n";

  SweepControl control;
  g_sweep_control = &control;
  auto previous = std::signal(SIGINT, on_interrupt);
  Progress progress(plan, options.jobs);
  SweepResult result;
  try {
    result = run_sweep(plan, options, &progress, &control);
  } catch (...) {
    std::signal(SIGINT, previous);
    g_sweep_control = nullptr;
    throw;
  }
  std::signal(SIGINT, previous);
  g_sweep_control = nullptr;

  print_table(plan, result);
  const std::vector<int> order = result.ranking();
  const TrialResult& best = result.trials[static_cast<size_t>(order.front())];
  if (best.status == TrialResult::Status::kCompleted && best.has_objective())
    std::cout << "Best trial: " << best.number << " ("
              << printable_message(describe_values(plan.spec, plan.trials[order.front()])) << "), "
              << plan.spec.objective.name << " " << fixed4(best.objective) << " at epoch "
              << best.best_epoch + 1 << "\n";
  std::cout.flush();
  std::cerr << "fitbench-cli: results in " << printable_message((out / "trials.csv").string())
            << " and trials.json, each trial's experiment and History in "
            << printable_message((out / "trial_NNN").string()) << "/\n";
  if (result.stopped) {
    size_t finished = 0;
    for (const TrialResult& r : result.trials)
      finished +=
          r.status == TrialResult::Status::kCompleted || r.status == TrialResult::Status::kPruned;
    std::cerr << "fitbench-cli: stopped (Ctrl+C): " << finished << " of " << result.trials.size()
              << " trials finished and are kept\n";
    return 130;
  }
  const size_t failed = static_cast<size_t>(
      std::count_if(result.trials.begin(), result.trials.end(),
                    [](const TrialResult& r) { return r.status == TrialResult::Status::kFailed; }));
  if (failed) {
    std::cerr << "fitbench-cli: " << counted(static_cast<long long>(failed), "trial")
              << " failed; trials.csv says why\n";
    return 1;
  }
  return 0;
}

}  // namespace fitbench::cli
