// Reading JSON files with errors that name the file, line and column, and writing text files
// atomically (a temporary file in the same folder, then a rename), for the experiment and model
// files. Free functions; no shared state.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

namespace fitbench::json_io {

// Parses a file keeping key order. Throws InputError("<file>", "cannot be read: ..."), as
// check_regular_file does for a folder, FIFO or device, or
// InputError("<file>: line L, column C", "is not valid JSON: ...").
nlohmann::ordered_json read_json_file(const std::filesystem::path& file);

// Parses text; `source` names it in errors as read_json_file does.
nlohmann::ordered_json parse_json_text(const std::string& text, const std::string& source);

// The document with 2-space indentation, arrays of numbers/strings on one line, and a final
// newline.
std::string dump_document(const nlohmann::ordered_json& doc);

// Writes `text` to a temporary file next to `file`, then renames it over `file`, so readers see
// the old or the new content, never a partial one. A symbolic link is written through (the file
// it names is replaced, the link kept); a folder, FIFO, socket or device is refused
// (write_target). Throws InputError("<file>", ...) on failure.
void write_file_atomically(const std::filesystem::path& file, const std::string& text);

}  // namespace fitbench::json_io
