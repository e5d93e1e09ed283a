// The subcommands of fitbench-cli. Each takes its arguments (the first being "fitbench-cli
// <command>"), prints to stdout/stderr and returns the exit code: 0 success, 2 bad input or
// usage, 1 a failure during training. InputError escapes to main(), which prints it and exits 2.
#pragma once

#include <QStringList>

namespace fitbench::cli {

// What the running command is building (for main()'s sentence when memory runs out): "the run
// plan (the data set and the model)", "the devices' buffers and training", ...
const char* building();
void set_building(const char* what);

int run_command(const QStringList& args);
int evaluate_command(const QStringList& args);
int predict_command(const QStringList& args);
int summary_command(const QStringList& args);
int devices_command(const QStringList& args);
// export EXPERIMENT --format FORMAT -o FILE (cli_export.cpp).
int export_command(const QStringList& args);
// sweep EXPERIMENT [--jobs N] [--out DIR] (cli_sweep.cpp).
int sweep_command(const QStringList& args);
// plan EXPERIMENT: the capacity rehearsal (cli_plan.cpp).
int plan_command(const QStringList& args);

}  // namespace fitbench::cli
