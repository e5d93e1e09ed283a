// Python's str.format() for the templates Keras fills with numbers: ModelCheckpoint's filepath
// ("ckpt-{epoch:02d}-{val_loss:.2f}.json" is filled by filepath.format(epoch=epoch + 1, **logs)).
// Fields are named ({epoch}, {val_loss}), with an optional format spec of Python's mini-language
// for numbers: [[fill]align][sign][0][width][.precision][type], type one of d (integers only),
// e E f F g G % or none; "{{" and "}}" are literal braces. What fitbench does not format
// (positional fields, attributes, indexing, conversions, nested specs, grouping, "#", "z", the
// b/o/x/c/n types) is refused with a sentence, never formatted differently from Python.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace fitbench {

// A template's text and its fields, in order: literals.size() == fields.size() + 1, and the
// template reads literals[0], fields[0], literals[1], ... (the literals with "{{" and "}}" already
// turned into single braces).
struct FormatTemplate {
  struct Field {
    std::string name;  // "epoch", "val_loss"
    std::string spec;  // what follows ':' ("02d", ".2f"), or ""
  };
  std::vector<std::string> literals;
  std::vector<Field> fields;
};

// Throws FormatError with Python's own wording where it has one ("Single '}' encountered in
// format string") and fitbench's otherwise.
class FormatError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

FormatTemplate parse_format_template(const std::string& text);

// format(value, spec) for a Python int and a Python float; throw FormatError for a spec Python
// refuses for that type ("Unknown format code 'd' for object of type 'float'") or that fitbench
// does not format.
std::string python_format(int64_t value, const std::string& spec);
std::string python_format(double value, const std::string& spec);

}  // namespace fitbench
