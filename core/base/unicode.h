// UTF-8 and code point ranges, as messages (error.cpp), summary tables (summary_format.cpp) and
// layout keys (distribution/path_pattern*) read them. Free functions on values; thread-safe.
#pragma once

#include <cstddef>
#include <span>
#include <string>

namespace fitbench {

// An inclusive range of code points; tables of them are sorted and disjoint.
struct CodePointRange {
  char32_t lo, hi;
};

// Whether `c` lies in one of the sorted, disjoint `ranges`.
bool in_ranges(std::span<const CodePointRange> ranges, char32_t c);

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4), or 0 for a byte that starts
// none: a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, or cut short.
size_t utf8_length(const std::string& text, size_t i);

// Whether all of `text` is well-formed UTF-8 (utf8_length finds a sequence at every start).
bool is_utf8(const std::string& text);

// The code point of the well-formed sequence of `n` bytes at text[i] (n from utf8_length).
char32_t utf8_code_point(const std::string& text, size_t i, size_t n);

// The code points of UTF-8 text; a byte that does not start a well-formed sequence becomes
// U+DC80 + (byte - 0x80), as Python's surrogateescape decodes it.
std::u32string decode_utf8_lenient(const std::string& text);

// UTF-8 of code points; U+DC80-U+DCFF (a byte decode_utf8_lenient could not read) back to that
// byte.
std::string encode_utf8(const std::u32string& s);

}  // namespace fitbench
