// Option parsing the fitbench-cli subcommands share (cli_commands.cpp, cli_export.cpp).
#pragma once

#include <QCommandLineParser>
#include <QStringList>

namespace fitbench::cli {

// Parses `args`; prints help (exit 0) or a usage error (exit 2) and returns that code, or -1 to
// go on. `positionals` is how many positional arguments the command takes, `positional_name`
// what they are called in the error ("EXPERIMENT").
int parse(QCommandLineParser& parser, const QStringList& args, int positionals,
          const char* positional_name);

// The integer option `name` in [min, max]; throws InputError("--<name>", ...) otherwise.
int int_option(const QCommandLineParser& p, const QString& name, int min, int max);

}  // namespace fitbench::cli
