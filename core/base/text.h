// Small text helpers that messages, tables and CSV files share. Free functions on values.
#pragma once

#include <charconv>
#include <sstream>
#include <string>

namespace fitbench {

// `piece` written `times` times ("━" for a rule of a table).
inline std::string repeat(const char* piece, int times) {
  std::string s;
  for (int i = 0; i < times; ++i) s += piece;
  return s;
}

// The shortest text that reads back as `value` (std::to_chars): 0.1, 1e+20.
inline std::string format_number(double value) {
  char buf[32];
  const auto result = std::to_chars(buf, buf + sizeof buf, value);
  return std::string(buf, result.ptr);
}

// `value` as a stream writes it by default (six significant digits): 0.001, 1e-07.
inline std::string format_general(double value) {
  std::ostringstream s;
  s << value;
  return s.str();
}

// One CSV field: quoted (quotes doubled) when it holds a separator, a quote or a line break.
inline std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace fitbench
