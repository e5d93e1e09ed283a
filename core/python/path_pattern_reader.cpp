// PatternReader and the helpers of the layout key parser (path_pattern_reader.h).
#include "core/python/path_pattern_reader.h"

#include <algorithm>
#include <cstdio>

namespace fitbench::pattern_ast {
namespace {

#include "core/python/path_pattern_classes.inc"

bool is_hex(char32_t c) { return is_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int hex_value(char32_t c) {
  if (is_digit(c)) return static_cast<int>(c - '0');
  return static_cast<int>((c | 0x20) - 'a' + 10);
}

constexpr int64_t kHuge = 1000000000000000000;  // where python_int stops counting

}  // namespace

std::string python_repr(const std::u32string& s) {
  const bool use_double =
      s.find('\'') != std::u32string::npos && s.find('"') == std::u32string::npos;
  const char quote = use_double ? '"' : '\'';
  // Not printable for str.isprintable(): controls, spaces but ' ', the format characters and
  // private use that names could hold (unassigned code points are not looked up).
  const auto printable = [](char32_t c) {
    if (c == ' ') return true;
    if (c < 0x20 || (c >= 0x7F && c <= 0x9F) || c == 0xAD) return false;
    if (in_ranges(space_ranges(), c)) return false;
    return !((c >= 0x200B && c <= 0x200F) || (c >= 0x202A && c <= 0x202E) ||
             (c >= 0x2060 && c <= 0x206F) || c == 0xFEFF || (c >= 0xFFF9 && c <= 0xFFFB) ||
             (c >= 0xD800 && c <= 0xF8FF));
  };
  std::string out(1, quote);
  for (char32_t c : s) {
    char hex[12];
    if (c == '\\' || c == static_cast<char32_t>(quote)) {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c == '\n' || c == '\r' || c == '\t') {
      out += c == '\n' ? "\\n" : c == '\r' ? "\\r" : "\\t";
    } else if (!printable(c)) {
      const char* format = c < 0x100 ? "\\x%02x" : c < 0x10000 ? "\\u%04x" : "\\U%08x";
      std::snprintf(hex, sizeof hex, format, static_cast<unsigned>(c));
      out += hex;
    } else {
      out += encode_utf8(std::u32string(1, c));
    }
  }
  return out + quote;
}

bool is_identifier(const std::u32string& name) {
  if (name.empty() || in_ranges(digit_ranges(), name[0])) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char32_t c) { return in_ranges(word_ranges(), c); });
}

std::optional<int64_t> python_int(const std::u32string& text) {
  size_t i = 0, end = text.size();
  while (i < end && in_ranges(space_ranges(), text[i])) ++i;
  while (end > i && in_ranges(space_ranges(), text[end - 1])) --end;
  bool negative = false;
  if (i < end && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  int64_t value = 0;
  bool digit_before = false;
  for (; i < end; ++i) {
    if (text[i] == '_' && digit_before && i + 1 < end && text[i + 1] != '_') {
      digit_before = false;
      continue;
    }
    const auto digits = digit_ranges();
    auto r = std::upper_bound(digits.begin(), digits.end(), text[i],
                              [](char32_t v, const CodePointRange& x) { return v < x.lo; });
    if (r == digits.begin() || text[i] > std::prev(r)->hi) return std::nullopt;
    // Unicode's decimal digits come in runs of ten from zero.
    const int64_t digit = (text[i] - std::prev(r)->lo) % 10;
    value = value > (kHuge - digit) / 10 ? kHuge : value * 10 + digit;
    digit_before = true;
  }
  if (!digit_before) return std::nullopt;
  return negative ? -value : value;
}

std::string python_int_digits(const std::u32string& text) {
  std::string out;
  bool negative = false;
  for (const char32_t c : text) {
    if (c == '-') negative = true;
    const auto digits = digit_ranges();
    auto r = std::upper_bound(digits.begin(), digits.end(), c,
                              [](char32_t v, const CodePointRange& x) { return v < x.lo; });
    if (r == digits.begin() || c > std::prev(r)->hi) continue;  // a blank, a sign, a '_'
    const char digit = static_cast<char>('0' + (c - std::prev(r)->lo) % 10);
    if (!(out.empty() && digit == '0')) out += digit;
  }
  if (out.empty()) return "0";
  return negative ? "-" + out : out;
}

std::vector<CodePointRange> normalized(std::vector<CodePointRange> r) {
  std::sort(r.begin(), r.end(),
            [](const CodePointRange& a, const CodePointRange& b) { return a.lo < b.lo; });
  std::vector<CodePointRange> out;
  for (const auto& x : r) {
    if (!out.empty() && x.lo <= out.back().hi + 1)
      out.back().hi = std::max(out.back().hi, x.hi);
    else
      out.push_back(x);
  }
  return out;
}

std::vector<CodePointRange> complement(std::span<const CodePointRange> r) {
  std::vector<CodePointRange> out;
  char32_t next = 0;
  for (const auto& x : r) {
    if (x.lo > next) out.push_back({next, x.lo - 1});
    next = x.hi + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

PatternReader::PatternReader(const std::u32string& pattern) : p_(pattern) {
  // Python's tokenizer reads "\" and the character after it as one token; a "\" left alone
  // at the end is an error as soon as the reading reaches it.
  for (size_t i = 0; i < p_.size(); i += p_[i] == '\\' ? 2 : 1)
    if (p_[i] == '\\' && i + 1 == p_.size()) lone_ = i;
  reached();
}

void PatternReader::fail(const std::string& what, size_t at) {
  std::string message = what + " at position " + std::to_string(at);
  if (p_.find('\n') != std::u32string::npos) {
    const size_t line = static_cast<size_t>(std::count(p_.begin(), p_.begin() + at, '\n')) + 1;
    const size_t before = at == 0 ? std::u32string::npos : p_.rfind('\n', at - 1);
    const size_t column = before == std::u32string::npos ? at + 1 : at - before;
    message += " (line " + std::to_string(line) + ", column " + std::to_string(column) + ")";
  }
  throw Failure{message, false};
}
void PatternReader::unsupported(const std::string& what) {
  if (unsupported_.empty()) unsupported_ = what;
}

void PatternReader::reached() {
  if (pos_ == lone_) fail("bad escape (end of pattern)", lone_);
}
void PatternReader::step() {
  ++pos_;
  reached();
}
bool PatternReader::match(char32_t c) {
  if (!next_is(c)) return false;
  step();
  return true;
}
std::u32string PatternReader::get() {
  const size_t n = p_[pos_] == '\\' ? 2 : 1;
  std::u32string t = p_.substr(pos_, n);
  pos_ += n;
  reached();
  return t;
}

std::optional<std::vector<CodePointRange>> PatternReader::category(char32_t c) {
  switch (c) {
    case 'd':
      return std::vector<CodePointRange>(digit_ranges().begin(), digit_ranges().end());
    case 'D':
      return complement(digit_ranges());
    case 's':
      return std::vector<CodePointRange>(space_ranges().begin(), space_ranges().end());
    case 'S':
      return complement(space_ranges());
    case 'w':
      return std::vector<CodePointRange>(word_ranges().begin(), word_ranges().end());
    case 'W':
      return complement(word_ranges());
    default:
      return std::nullopt;
  }
}

char32_t PatternReader::simple_escape(char32_t c, bool in_class) {
  switch (c) {
    case 'a':
      return 7;
    case 'b':
      return in_class ? 8 : 0;
    case 'f':
      return 12;
    case 'n':
      return 10;
    case 'r':
      return 13;
    case 't':
      return 9;
    case 'v':
      return 11;
    case '\\':
      return '\\';
    default:
      return 0;
  }
}

char32_t PatternReader::hex_escape(char32_t letter, size_t at) {
  const size_t digits = letter == 'x' ? 2 : letter == 'u' ? 4 : 8;
  uint64_t v = 0;
  size_t n = 0;
  while (n < digits && !at_end() && is_hex(p_[pos_])) {
    v = v * 16 + static_cast<uint64_t>(hex_value(p_[pos_]));
    step();
    ++n;
  }
  if (n != digits) fail("incomplete escape " + encode_utf8(p_.substr(at, 2 + n)), at);
  // chr(v) in Python: an OverflowError beyond a C int, a ValueError (a bad escape) beyond U+10FFFF.
  if (v > 0x7FFFFFFF) throw Failure{"Python int too large to convert to C int", false};
  if (v > kMaxCodePoint) fail("bad escape " + encode_utf8(p_.substr(at, 2 + n)), at);
  return static_cast<char32_t>(v);
}

void PatternReader::named_escape() {
  if (!match('{')) fail("missing {", pos_);
  name_until('}', "character name");
  unsupported(
      "named characters (\\N{...}) are not supported in layout keys; write the "
      "character itself or \\uXXXX");
}

ClassItem PatternReader::class_escape(const std::u32string& tok, size_t at) {
  const char32_t c = tok[1];
  if (const char32_t s = simple_escape(c, true)) return {false, s, {}};
  if (auto set = category(c)) return {true, 0, std::move(*set)};
  if (c == 'x' || c == 'u' || c == 'U') return {false, hex_escape(c, at), {}};
  if (c == 'N') {
    named_escape();
    return {false, 0, {}, true};
  }
  if (is_octal(c)) {
    uint32_t v = c - '0';
    size_t n = 1;
    while (n < 3 && !at_end() && is_octal(p_[pos_])) {
      v = v * 8 + (p_[pos_] - '0');
      step();
      ++n;
    }
    if (v > 0377)
      fail("octal escape value " + encode_utf8(p_.substr(at, n + 1)) + " outside of range 0-0o377",
           at);
    return {false, v, {}};
  }
  if (is_digit(c) || is_ascii_letter(c)) fail("bad escape " + encode_utf8(tok), at);
  return {false, c, {}};
}

std::u32string PatternReader::name_until(char32_t terminator, const char* what) {
  const size_t start = pos_;
  for (;;) {
    if (at_end()) {
      if (pos_ == start) fail(std::string("missing ") + what, pos_);
      fail(std::string("missing ") + static_cast<char>(terminator) + ", unterminated name", start);
    }
    const size_t at = pos_;
    const std::u32string t = get();
    if (t.size() == 1 && t[0] == terminator) {
      if (at == start) fail(std::string("missing ") + what, at);
      return p_.substr(start, at - start);
    }
  }
}

void PatternReader::check_name(const std::u32string& name, size_t at) {
  if (!is_identifier(name)) fail("bad character in group name " + python_repr(name), at);
}

std::span<const CodePointRange> word_ranges() { return kWordRanges; }
std::span<const CodePointRange> digit_ranges() { return kDigitRanges; }
std::span<const CodePointRange> space_ranges() { return kSpaceRanges; }

}  // namespace fitbench::pattern_ast
