// Writing a History (what fit() returns) to a file: JSON ({"epoch", "history", "params"}, as
// Keras's History object holds it) or CSV (one row per epoch, "epoch" then the keys in
// alphabetical order, as CSVLogger writes). Written atomically. Free functions; thread-safe.
#pragma once

#include <filesystem>
#include <string>

#include "core/training/history.h"

namespace fitbench {

class StagedFiles;  // core/staged_files.h

// The text for `history`: CSV when `csv` is true, else JSON.
std::string history_text(const History& history, bool csv);
// Writes history_text to `file`; CSV when the name ends in ".csv". Throws InputError naming the
// file when it cannot be written. With `into`, the file is only staged there.
void write_history(const History& history, const std::filesystem::path& file,
                   StagedFiles* into = nullptr);

}  // namespace fitbench
