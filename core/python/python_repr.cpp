#include "core/python/python_repr.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "core/base/unicode.h"
#include "core/python/path_pattern_reader.h"

namespace fitbench {

std::string python_repr(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // The shortest round-trip digits, as "d.ddde+XX" (to_chars' shortest form in scientific).
  char buf[64];
  const auto end = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific).ptr;
  std::string text(buf, end);
  std::string sign;
  if (text[0] == '-') {
    sign = "-";
    text.erase(0, 1);
  }
  const size_t e = text.find('e');
  const int exponent = std::atoi(text.c_str() + e + 1);
  std::string digits = text.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1);  // drop the '.'
  // Python's float_repr_style "short": fixed while -4 <= exponent < 16 (repr mode 'r').
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1) mantissa += "." + digits.substr(1);
    const int magnitude = std::abs(exponent);
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") +
           std::to_string(magnitude);
  }
  const int point = exponent + 1;  // digits before the decimal point
  const int count = static_cast<int>(digits.size());
  if (point <= 0) return sign + "0." + std::string(static_cast<size_t>(-point), '0') + digits;
  if (point >= count)
    return sign + digits + std::string(static_cast<size_t>(point - count), '0') + ".0";
  return sign + digits.substr(0, static_cast<size_t>(point)) + "." +
         digits.substr(static_cast<size_t>(point));
}

std::string python_str_repr(const std::string& text) {
  return pattern_ast::python_repr(decode_utf8_lenient(text));
}

}  // namespace fitbench
