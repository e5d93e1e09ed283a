// The InputError a call throws, for the tests of readers: none when it succeeds; any other
// exception passes through.
#pragma once

#include <functional>
#include <optional>

#include "core/base/error.h"

namespace fitbench::test {

inline std::optional<InputError> error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e;
  }
  return std::nullopt;
}

}  // namespace fitbench::test
