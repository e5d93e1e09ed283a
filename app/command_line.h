#pragma once
// The command line as both programs take it. Qt reads each argument as UTF-8 and turns a byte
// that is not UTF-8 text into U+FFFD, so a file named in another encoding (Latin-1
// "caf\xe9.keras") would be looked for under a name that does not exist and reported missing.
// Both programs refuse such an argument before Qt reads it, naming it.
#include <string>

#include "core/base/error.h"
#include "core/base/unicode.h"

namespace fitbench {

// "argument 2 ("caf\xe9.keras") is not UTF-8 text; ...", or empty when every argument is UTF-8.
// The argument is shown escaped and at most 200 bytes of it, so the sentence is never cut.
inline std::string non_utf8_argument_error(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string argument = argv[i];
    if (is_utf8(argument)) continue;
    return "argument " + std::to_string(i) + " (\"" + printable_message(argument, 200) +
           "\") is not UTF-8 text; fitbench takes file names and options in UTF-8, so a file "
           "named in another encoding must be renamed first (convmv converts names)";
  }
  return {};
}

}  // namespace fitbench
