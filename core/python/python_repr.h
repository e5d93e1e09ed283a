// Python's repr() of a float, which Keras's text uses for numbers it prints or writes as they are
// (CSVLogger's cells, ReduceLROnPlateau's message): the shortest digits that read back to the
// same double, in fixed notation from 1e-4 up to 1e16 with ".0" on whole numbers ("1.0",
// "0.0001", "1234567.0"), otherwise in exponent notation with at least two exponent digits
// ("1e-05", "1.5e+16"); "nan", "inf", "-inf".
#pragma once

#include <string>

namespace fitbench {

std::string python_repr(double value);

}  // namespace fitbench
