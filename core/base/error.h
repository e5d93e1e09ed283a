// The typed error for bad user input and I/O: it carries the place (a file, a JSON path such as
// `model.config.layers[1].config.units`, a CSV line and column) and one sentence about what is
// wrong. Thrown inside core/, caught at the edges (CLI: exit 2; GUI: shown beside the field).
#pragma once

#include <stdexcept>
#include <string>

namespace fitbench {

class InputError : public std::runtime_error {
 public:
  InputError(std::string place, const std::string& message)
      : std::runtime_error(place.empty() ? message : place + ": " + message),
        place_(std::move(place)),
        message_(message) {}

  // Where the problem is, e.g. "seed.json: model.config.layers[1].config.units".
  const std::string& place() const { return place_; }
  // The sentence alone, without the place.
  const std::string& message() const { return message_; }

  // A copy whose place is prefixed, e.g. with the file name: "seed.json: " + place.
  InputError within(const std::string& outer) const {
    std::string p = place_.empty() ? outer : outer + (place_.front() == '[' ? "" : ": ") + place_;
    return InputError(p, message_);
  }

 private:
  std::string place_;
  std::string message_;
};

// "1 unit", "3 units": a count with its noun, for messages (`plural` when not just noun + "s").
inline std::string counted(long long n, const std::string& noun, const std::string& plural = {}) {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

// "there is 1 device", "there are 3 devices".
inline std::string there_are(long long n, const std::string& noun) {
  return n == 1 ? "there is 1 " + noun : "there are " + counted(n, noun);
}

// A tab, newline, escape or other ASCII control character (below 0x20, or DEL).
inline bool is_control_character(char c) {
  return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
}
inline bool has_control_character(const std::string& text) {
  for (char c : text)
    if (is_control_character(c)) return true;
  return false;
}

// A message as one terminal line: control characters (a tab, a newline or an escape sequence
// from a file's bytes, C1 controls too) written as \t, \n, \x1b, bytes that are not UTF-8 text
// as \xNN, the bidirectional overrides and isolates (U+202A-U+202E, U+2066-U+2069) as \u202e, and
// beyond `max_bytes` cut at a character's start with "... (N more bytes)", so a 50 MB CSV header
// cannot flood the terminal.
std::string printable_message(const std::string& text, size_t max_bytes = 2000);

// A failure while training (e.g. NaN loss under TerminateOnNaN): the CLI exits 1.
class TrainingError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace fitbench
