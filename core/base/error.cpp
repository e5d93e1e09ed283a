#include "core/base/error.h"

#include <cstdio>

#include "core/base/unicode.h"

namespace fitbench {

namespace {

void append_escaped_byte(std::string& out, unsigned char c) {
  char code[8];
  std::snprintf(code, sizeof code, "\\x%02x", c);
  out += code;
}

// The bidirectional embeddings, overrides and isolates (the marks U+200E and U+200F, which
// only give a direction to the characters beside them, are kept for right-to-left text).
bool is_bidi_override(unsigned cp) {
  return (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

}  // namespace

std::string printable_message(const std::string& text, size_t max_bytes) {
  std::string out;
  size_t i = 0;
  while (i < text.size()) {
    // Cut only between characters.
    if (out.size() >= max_bytes) break;
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_length(text, i);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (n == 0 || is_control_character(static_cast<char>(c))) {
      append_escaped_byte(out, c);  // a control character, or a byte that is not UTF-8 text
    } else if (const unsigned cp = n == 3 ? utf8_code_point(text, i, 3) : 0; is_bidi_override(cp)) {
      // U+202A to U+202E and U+2066 to U+2069 reorder the text after them on a terminal, so
      // that a file name could show other characters than it holds.
      char code[10];
      std::snprintf(code, sizeof code, "\\u%04x", cp);
      out += code;
    } else if (n == 2 && c == 0xC2 && static_cast<unsigned char>(text[i + 1]) < 0xA0) {
      // U+0080 to U+009F, the C1 controls (U+009B starts an escape sequence on some terminals).
      append_escaped_byte(out, c);
      append_escaped_byte(out, static_cast<unsigned char>(text[i + 1]));
    } else {
      out.append(text, i, n);
    }
    i += n == 0 ? 1 : n;
  }
  if (i < text.size()) out += "... (" + std::to_string(text.size() - i) + " more bytes)";
  return out;
}

}  // namespace fitbench
