// Internal to the layout key parser (path_pattern_parser.cpp): reading a pattern as Python's
// tokenizer and escape rules do (Lib/re/_parser.py: Tokenizer, _class_escape), with Python's
// error messages and positions in code points. One reader per parse; not thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/python/path_pattern_ast.h"

namespace fitbench::pattern_ast {

constexpr char32_t kMaxCodePoint = 0x10FFFF;
constexpr uint64_t kMaxRepeat = 4294967295u;  // Python's _sre.MAXREPEAT

// Python's repr() of a str: 'name', "it's", with \\, \n, \x07, \udc80 escaped (non-printable
// characters beyond ASCII and Latin-1 are taken as printable).
std::string python_repr(const std::u32string& s);
inline bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
inline bool is_octal(char32_t c) { return c >= '0' && c <= '7'; }
inline bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
// str.isidentifier(), approximated: word characters (\w), the first not a decimal digit.
bool is_identifier(const std::u32string& name);
// int(text) as Python reads it: blanks around, a sign, decimal digits of any script with single
// underscores between them (counted up to 10^18); nullopt where Python raises ValueError.
std::optional<int64_t> python_int(const std::u32string& text);
// str(int(text)) for a text python_int reads, however many digits it has: ASCII digits without
// leading zeros or underscores ("19999999999999999999999999" from those digits in any script).
std::string python_int_digits(const std::u32string& text);
// Sorted, with overlapping and touching ranges merged.
std::vector<CodePointRange> normalized(std::vector<CodePointRange> r);
// Every code point not in the (normalized) ranges.
std::vector<CodePointRange> complement(std::span<const CodePointRange> r);

// A syntax error (Python's message with its position) or, with python_accepts, a construct
// fitbench does not run.
struct Failure {
  std::string message;
  bool python_accepts;
};

// What an escape stands for: one code point, or a class (\d \w \s and their negations).
struct ClassItem {
  bool is_set = false;
  char32_t ch = 0;
  std::vector<CodePointRange> set;
  bool named = false;  // \N{...}: a code point fitbench does not know
};

class PatternReader {
 public:
  explicit PatternReader(const std::u32string& pattern);

 protected:
  // Python's re.error: "what at position N", and " (line L, column C)" when the pattern has
  // a line break.
  [[noreturn]] void fail(const std::string& what, size_t at);
  // A construct Python accepts but an NFA cannot run: noted, and reported once the whole
  // pattern has parsed (a syntax error anywhere comes first, as Python would raise it).
  void unsupported(const std::string& what);

  bool at_end() const { return pos_ >= p_.size(); }
  char32_t peek() const { return at_end() ? 0 : p_[pos_]; }
  bool next_is(char32_t c) const { return !at_end() && p_[pos_] == c; }
  // Moves past one character of the pattern.
  void step();
  bool match(char32_t c);
  // The next token as text: one character, or "\" and one character.
  std::u32string get();

  // \d \D \s \S \w \W, or nothing.
  static std::optional<std::vector<CodePointRange>> category(char32_t c);
  // \a \b \f \n \r \t \v \\ as the code point they stand for; 0 for none of them.
  static char32_t simple_escape(char32_t c, bool in_class);
  // \xhh, \uhhhh, \Uhhhhhhhh after their letter; the escape starts at `at`.
  char32_t hex_escape(char32_t letter, size_t at);
  // \N{NAME} after its letter: Python looks the name up in its Unicode database, which
  // fitbench does not carry.
  void named_escape();
  // An escape inside [...], read as the token `tok` at `at`.
  ClassItem class_escape(const std::u32string& tok, size_t at);
  // Reads up to `terminator` for a name starting at pos_ (Python's getuntil).
  std::u32string name_until(char32_t terminator, const char* what);
  void check_name(const std::u32string& name, size_t at);

  const std::u32string& p_;
  size_t pos_ = 0;
  std::string unsupported_;

 private:
  void reached();

  size_t lone_ = std::u32string::npos;  // where a "\\" ends the pattern alone
};

}  // namespace fitbench::pattern_ast
