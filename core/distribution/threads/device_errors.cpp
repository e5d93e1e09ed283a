#include "core/distribution/threads/device_errors.h"

namespace fitbench {

void DeviceErrors::rethrow_first() {
  std::exception_ptr first;
  for (auto& e : errors_) {
    if (e && !first) first = e;
    e = nullptr;
  }
  if (first) std::rethrow_exception(first);
}

}  // namespace fitbench
