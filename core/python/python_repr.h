// Python's repr() of a float, which Keras's text uses for numbers it prints or writes as they are
// (CSVLogger's cells, ReduceLROnPlateau's message): the shortest digits that read back to the
// same double, in fixed notation from 1e-4 up to 1e16 with ".0" on whole numbers ("1.0",
// "0.0001", "1234567.0"), otherwise in exponent notation with at least two exponent digits
// ("1e-05", "1.5e+16"); "nan", "inf", "-inf". Also Python's repr() of a str, for the literals of
// generated scripts. Free functions; thread-safe.
#pragma once

#include <string>

namespace fitbench {

std::string python_repr(double value);

// Python's repr() of the str that UTF-8 `text` decodes to: 'name', "it's", with \\, \n and
// unprintable characters escaped, so that it reads back as the same string in a Python source.
std::string python_str_repr(const std::string& text);

}  // namespace fitbench
