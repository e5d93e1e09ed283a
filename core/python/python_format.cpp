#include "core/python/python_format.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "core/python/python_repr.h"

namespace fitbench {
namespace {

struct Spec {
  char fill = ' ';
  bool fill_given = false;
  char align = 0;  // '<', '>', '^', '=' or 0 (numbers: '>')
  char sign = '-';
  bool zero = false;
  int width = 0;
  int precision = -1;
  char type = 0;
};

bool is_align(char c) { return c == '<' || c == '>' || c == '^' || c == '='; }

int read_digits(const std::string& s, size_t& i) {
  int n = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    n = n * 10 + (s[i] - '0');
    if (n > 1000) throw FormatError("a width or precision above 1000 is not formatted");
    ++i;
  }
  return n;
}

Spec parse_spec(const std::string& s) {
  Spec spec;
  size_t i = 0;
  if (s.size() >= 2 && is_align(s[1])) {
    spec.fill = s[0];
    spec.fill_given = true;
    spec.align = s[1];
    i = 2;
  } else if (!s.empty() && is_align(s[0])) {
    spec.align = s[0];
    i = 1;
  }
  if (i < s.size() && (s[i] == '+' || s[i] == '-' || s[i] == ' ')) spec.sign = s[i++];
  if (i < s.size() && (s[i] == 'z' || s[i] == '#'))
    throw FormatError(std::string("the '") + s[i] + "' option is not formatted by fitbench");
  if (i < s.size() && s[i] == '0') {
    spec.zero = true;
    ++i;
  }
  spec.width = read_digits(s, i);
  if (i < s.size() && (s[i] == ',' || s[i] == '_'))
    throw FormatError("digit grouping ('" + std::string(1, s[i]) +
                      "') is not formatted by fitbench");
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t digits_at = i;
    spec.precision = read_digits(s, i);
    if (i == digits_at) throw FormatError("Format specifier missing precision");
  }
  if (i < s.size()) spec.type = s[i++];
  if (i < s.size()) throw FormatError("Invalid format specifier '" + s + "'");
  if (spec.zero) {
    if (!spec.fill_given) spec.fill = '0';
    if (!spec.align) spec.align = '=';
  }
  if (!spec.align) spec.align = '>';
  return spec;
}

std::string printf_text(const char* format, int precision, double value) {
  char buffer[1100];
  std::snprintf(buffer, sizeof buffer, format, precision, value);
  return buffer;
}

void strip_trailing_zeros(std::string& digits) {
  const size_t dot = digits.find('.');
  if (dot == std::string::npos) return;
  size_t end = digits.size();
  while (end > dot + 1 && digits[end - 1] == '0') --end;
  if (end == dot + 1) --end;
  digits.resize(end);
}

// Python's 'g' (and, with add_dot_0, the general format of no type with a precision): p
// significant digits, exponent notation when the decimal exponent is below -4 or reaches p (p - 1
// with add_dot_0: CPython's format_float_short), insignificant zeros removed.
std::string general(double magnitude, int precision, bool add_dot_0) {
  const int p = std::max(precision, 1);
  std::string e = printf_text("%.*e", p - 1, magnitude);
  const size_t e_at = e.find('e');
  const int decpt = std::atoi(e.c_str() + e_at + 1) + 1;
  if (decpt <= -4 || decpt > (add_dot_0 ? p - 1 : p)) {
    std::string mantissa = e.substr(0, e_at);
    strip_trailing_zeros(mantissa);
    return mantissa + e.substr(e_at);
  }
  std::string fixed = printf_text("%.*f", p - decpt, magnitude);
  strip_trailing_zeros(fixed);
  if (add_dot_0 && fixed.find('.') == std::string::npos) fixed += ".0";
  return fixed;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string pad(const Spec& spec, bool negative, const std::string& body) {
  const std::string sign = negative ? "-" : spec.sign == '+' ? "+" : spec.sign == ' ' ? " " : "";
  const int length = static_cast<int>(sign.size() + body.size());
  if (spec.width <= length) return sign + body;
  const size_t n = static_cast<size_t>(spec.width - length);
  switch (spec.align) {
    case '<':
      return sign + body + std::string(n, spec.fill);
    case '^':
      return std::string(n / 2, spec.fill) + sign + body + std::string(n - n / 2, spec.fill);
    case '=':
      return sign + std::string(n, spec.fill) + body;
    default:
      return std::string(n, spec.fill) + sign + body;
  }
}

std::string format_float(double value, const Spec& spec) {
  const char t = spec.type;
  const bool negative = std::signbit(value) && !std::isnan(value);
  const double magnitude = std::fabs(value);
  const int p = spec.precision;
  std::string body;
  if (!std::isfinite(value)) {
    body = std::isnan(value) ? "nan" : "inf";
    if (t == 'F' || t == 'E' || t == 'G') body = upper(body);
    if (t == '%') body += '%';
    return pad(spec, negative, body);
  }
  switch (t) {
    case 'f':
    case 'F':
      body = printf_text("%.*f", p < 0 ? 6 : p, magnitude);
      break;
    case 'e':
    case 'E':
      body = printf_text("%.*e", p < 0 ? 6 : p, magnitude);
      break;
    case 'g':
    case 'G':
      body = general(magnitude, p < 0 ? 6 : p, false);
      break;
    case '%':
      body = printf_text("%.*f", p < 0 ? 6 : p, magnitude * 100.0) + "%";
      break;
    default:
      body = p < 0 ? python_repr(magnitude) : general(magnitude, p, true);
      break;
  }
  if (t == 'E' || t == 'G') body = upper(body);
  return pad(spec, negative, body);
}

void check_type(char type, const char* python_type) {
  static const std::string kFloatTypes = "eEfFgG%";
  if (type == 0 || kFloatTypes.find(type) != std::string::npos) return;
  if (type == 'd' && std::string(python_type) == "int") return;
  if (std::string("bcnoxX").find(type) != std::string::npos && std::string(python_type) == "int")
    throw FormatError(std::string("the '") + type + "' type is not formatted by fitbench");
  throw FormatError(std::string("Unknown format code '") + type + "' for object of type '" +
                    python_type + "'");
}

}  // namespace

FormatTemplate parse_format_template(const std::string& text) {
  FormatTemplate out;
  out.literals.emplace_back();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '}') {
      if (i + 1 < text.size() && text[i + 1] == '}') {
        out.literals.back() += '}';
        ++i;
        continue;
      }
      throw FormatError("Single '}' encountered in format string");
    }
    if (c != '{') {
      out.literals.back() += c;
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '{') {
      out.literals.back() += '{';
      ++i;
      continue;
    }
    const size_t close = text.find('}', i);
    if (close == std::string::npos) throw FormatError("Single '{' encountered in format string");
    const std::string field = text.substr(i + 1, close - i - 1);
    if (field.find('{') != std::string::npos)
      throw FormatError("a field inside a field's format spec is not formatted by fitbench");
    const size_t colon = field.find(':');
    FormatTemplate::Field f;
    f.name = field.substr(0, colon);
    if (colon != std::string::npos) f.spec = field.substr(colon + 1);
    if (f.name.find('!') != std::string::npos)
      throw FormatError("a conversion (\"{" + field + "}\") is not formatted by fitbench");
    if (f.name.find_first_of(".[") != std::string::npos)
      throw FormatError("an attribute or index (\"{" + field +
                        "}\") is not formatted by fitbench; name a value, e.g. {epoch}");
    const bool positional =
        f.name.empty() || f.name.find_first_not_of("0123456789") == std::string::npos;
    if (positional)
      throw FormatError("a positional field (\"{" + field +
                        "}\") has no value: the values are named, e.g. {epoch} or {val_loss}");
    parse_spec(f.spec);  // a malformed spec fails here, whatever the value
    out.fields.push_back(std::move(f));
    out.literals.emplace_back();
    i = close;
  }
  return out;
}

std::string python_format(int64_t value, const std::string& spec_text) {
  const Spec spec = parse_spec(spec_text);
  check_type(spec.type, "int");
  if (spec.type != 0 && spec.type != 'd') return format_float(static_cast<double>(value), spec);
  if (spec.precision >= 0) throw FormatError("Precision not allowed in integer format specifier");
  const uint64_t magnitude =
      value < 0 ? uint64_t{0} - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  return pad(spec, value < 0, std::to_string(magnitude));
}

std::string python_format(double value, const std::string& spec_text) {
  const Spec spec = parse_spec(spec_text);
  check_type(spec.type, "float");
  return format_float(value, spec);
}

}  // namespace fitbench
