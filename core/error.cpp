#include "core/error.h"

#include <cstdio>

namespace fitbench {

std::string printable_message(const std::string& text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  for (; i < text.size(); ++i) {
    // Cut only at a character's start (not inside a UTF-8 sequence's continuation bytes).
    const auto c = static_cast<unsigned char>(text[i]);
    if (out.size() >= max_bytes && (c & 0xC0) != 0x80) break;
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (is_control_character(static_cast<char>(c))) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      out += code;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
  return out;
}

}  // namespace fitbench
