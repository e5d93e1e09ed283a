// Reading JSON files with errors that name the file, line and column, and writing text files
// atomically (a temporary file in the same folder, then a rename), for the experiment and model
// files. Free functions; no shared state.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace fitbench {
class StagedFiles;
}

namespace fitbench::json_io {

// Whether a model file's weights[i].values are kept (kSkip: parsed as JSON but dropped, for
// readers that need a model's structure only; several times faster on a large model).
enum class WeightValues { kRead, kSkip };

// Parses a file keeping key order. Throws InputError("<file>", "cannot be read: ..."), as
// check_regular_file does for a folder, FIFO or device, or
// InputError("<file>: line L, column C", "is not valid JSON: ...").
nlohmann::ordered_json read_json_file(const std::filesystem::path& file,
                                      WeightValues weight_values = WeightValues::kRead);

// Parses text; `source` names it in errors as read_json_file does.
nlohmann::ordered_json parse_json_text(const std::string& text, const std::string& source,
                                       WeightValues weight_values = WeightValues::kRead);

// The document with 2-space indentation, arrays of numbers/strings on one line, and a final
// newline.
std::string dump_document(const nlohmann::ordered_json& doc);

// Writes `text` to an unnamed temporary file next to `file`, then renames it over `file`, so
// readers see the old or the new content, never a partial one, and a kill leaves no temporary
// behind (StagedFiles). A symbolic link is written through (the file it names is replaced, the
// link kept); a folder, FIFO, socket or device is refused (write_target). With `into`, the file
// is only staged there, to be put in place with the other files of its set by into->commit().
// Throws InputError("<file>", ...) on failure.
void write_file_atomically(const std::filesystem::path& file, const std::string& text,
                           StagedFiles* into = nullptr);

}  // namespace fitbench::json_io
