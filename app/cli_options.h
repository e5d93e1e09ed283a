// Option parsing the fitbench-cli subcommands share (cli_commands.cpp, cli_export.cpp).
#pragma once

#include <QCommandLineParser>
#include <QStringList>
#include <array>
#include <vector>

#include "core/base/error.h"
#include "core/run/run_plan.h"

namespace fitbench::cli {

// Reads a command's options, each in its own attempt: its InputError becomes a problem, so that
// every wrong option is said together (plan_run takes them as its first problems).
class OptionReader {
 public:
  explicit OptionReader(const QCommandLineParser& p) : p_(p) {}
  // Calls read() when the option `name` is given.
  template <class F>
  void operator()(const char* name, F&& read) {
    if (!p_.isSet(name)) return;
    try {
      read();
    } catch (const InputError& e) {
      problems.push_back({e.place(), e.message()});
    }
  }
  std::vector<PlanProblem> problems;

 private:
  const QCommandLineParser& p_;
};

// Parses `args`; prints help (exit 0) or a usage error (exit 2) and returns that code, or -1 to
// go on. `positionals` is how many positional arguments the command takes, `positional_name`
// what they are called in the error ("EXPERIMENT").
int parse(QCommandLineParser& parser, const QStringList& args, int positionals,
          const char* positional_name);

// --mesh RxC: two whole numbers from 1 to kMaxDeviceCount (the batch and model axes' sizes);
// throws InputError("--mesh", ...) otherwise.
std::array<int, 2> mesh_option(const QString& text);

// The integer option `name` in [min, max]; throws InputError("--<name>", ...) otherwise.
int int_option(const QCommandLineParser& p, const QString& name, int min, int max);

// What a plan says before training, on stderr: "fitbench-cli: warning: ..." / "note: ...".
void print_notices(const std::vector<PlanNotice>& notices);

}  // namespace fitbench::cli
