// fitbench-cli: the engine without a window. Subcommands run, evaluate, predict, summary,
// devices, export, sweep and plan; argument parsing and wiring only, the work is in core/.
#include <QCommandLineParser>
#include <QCoreApplication>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>

#include "app/cli_commands.h"
#include "app/cli_processes.h"
#include "app/command_line.h"
#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/distribution/processes/process_group.h"
#include "core/run/capacity.h"
#include "core/run/run_plan.h"
#include "imageio/qt_image_decoder.h"

namespace {

const char* kUsage =
    "Usage: fitbench-cli <command> [options]\n"
    "\n"
    "Commands:\n"
    "  run EXPERIMENT        train an experiment file with fit() and print Keras's progress\n"
    "  evaluate MODEL        loss and metrics of a model file on a CSV file\n"
    "  predict MODEL         a model file's predictions for a CSV file, as CSV on stdout\n"
    "  summary FILE          the Keras summary of an experiment or model file\n"
    "  devices               the simulated devices (keras.distribution.list_devices)\n"
    "  export EXPERIMENT     the experiment as a runnable Keras 3 script (--format python)\n"
    "  sweep EXPERIMENT      every trial of the experiment's sweep section, several at once\n"
    "  plan EXPERIMENT       memory per device, collectives and predicted step time on a target\n"
    "\n"
    "Run 'fitbench-cli <command> --help' for a command's options.\n";

int run_command_line(const QString& command, const QStringList& sub);

}  // namespace

int main(int argc, char** argv) {
  // stderr line-buffered, one write per line: under mpirun every rank's lines reach one
  // terminal, and a line written in pieces could be cut by another rank's (every message ends
  // with a newline, so none waits).
  static char err_buffer[1 << 16];
  std::setvbuf(stderr, err_buffer, _IOLBF, sizeof err_buffer);
  std::cerr.unsetf(std::ios_base::unitbuf);
  if (const std::string error = fitbench::non_utf8_argument_error(argc, argv); !error.empty()) {
    std::cerr << "fitbench-cli: " << error << "\n";  // a usage error: exit 2
    return 2;
  }
  QCoreApplication app(argc, argv);
  fitbench::install_qt_image_decoder();  // data.directory: folders of images
  QCoreApplication::setApplicationName("fitbench-cli");
  QCoreApplication::setApplicationVersion(FITBENCH_VERSION);
  QStringList args = QCoreApplication::arguments();
  if (args.size() < 2) {
    std::cerr << kUsage;  // a usage error: exit 2, on stderr
    return 2;
  }
  if (args[1] == "--help" || args[1] == "-h" || args[1] == "help" || args[1] == "--help-all") {
    std::cout << kUsage;
    return 0;
  }
  if (args[1] == "--version") {
    std::cout << "fitbench-cli " << FITBENCH_VERSION << "\n";
    return 0;
  }
  const QString command = args[1];
  QStringList sub = args.mid(2);
  sub.prepend("fitbench-cli " + command);
  int code = run_command_line(command, sub);
  // What is still buffered is written now, where a failure can be said (a full disk, a closed
  // pipe): at exit it would be lost without a word and the exit code would say success.
  errno = 0;
  std::cout.flush();
  if (std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout) {
    const int error = errno;
    std::cerr << "fitbench-cli: cannot write the output to standard output"
              << (error ? std::string(": ") + std::strerror(error) : std::string()) << "\n";
    if (code == 0) code = 1;
  }
  // Under mpirun every rank meets here once all it had to say is written: a rank that left
  // earlier would make mpirun end the job before rank 0 said why.
  fitbench::cli::finish_processes();
  return code;
}

namespace {

int run_command_line(const QString& command, const QStringList& sub) {
  try {
    // Only run spreads itself over processes; the others would do the same work in every one
    // (and write the same files at once).
    if (command != "run") {
      const fitbench::ProcessLayout layout = fitbench::detect_process_layout(std::getenv);
      if (layout.multi()) {
        // Rank 0 says it and fails the job. The others end quietly with 0: a second failure
        // would make mpirun kill rank 0, sometimes before its sentence got out.
        if (layout.rank != 0) return 0;
        std::cerr << "fitbench-cli: " << command.toStdString()
                  << " runs in one process; start it without mpirun (only run spreads over "
                     "processes)\n";
        return 2;
      }
    }
    if (command == "run") return fitbench::cli::run_command(sub);
    if (command == "evaluate") return fitbench::cli::evaluate_command(sub);
    if (command == "predict") return fitbench::cli::predict_command(sub);
    if (command == "summary") return fitbench::cli::summary_command(sub);
    if (command == "devices") return fitbench::cli::devices_command(sub);
    if (command == "export") return fitbench::cli::export_command(sub);
    if (command == "sweep") return fitbench::cli::sweep_command(sub);
    if (command == "plan") return fitbench::cli::plan_command(sub);
    std::cerr << "fitbench-cli: unknown command \""
              << fitbench::printable_message(command.toStdString())
              << "\"; expected run, evaluate, predict, summary, devices, export, sweep or plan\n";
    return 2;
  } catch (const fitbench::PlanError& e) {
    // Every problem of a run plan, one line each.
    for (const fitbench::PlanProblem& problem : e.problems())
      std::cerr << "fitbench-cli: " << fitbench::printable_message(problem.text()) << "\n";
    return 2;
  } catch (const fitbench::InputError& e) {
    std::cerr << "fitbench-cli: " << fitbench::printable_message(e.what()) << "\n";
    return 2;
  } catch (const std::bad_alloc&) {
    // What the plan's estimate did not foresee (or a command without one): said, not a crash.
    const fitbench::MemoryLimit limit = fitbench::process_memory_limit();
    std::cerr << "fitbench-cli: out of memory while building " << fitbench::cli::building()
              << "; the process may take " << fitbench::bytes_text(limit.bytes) << " more ("
              << limit.source << "); use fewer devices, a smaller batch or narrower layers\n";
    return 2;
  } catch (const fitbench::TrainingError& e) {
    std::cerr << "fitbench-cli: " << fitbench::printable_message(e.what()) << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "fitbench-cli: " << fitbench::printable_message(e.what()) << "\n";
    return 1;
  }
}

}  // namespace
