// Layout-map keys (Python regular expressions, run on an NFA): compiled or refused with a
// sentence; a compiled key is matched against variable paths in bounded time.
#include "core/python/path_pattern.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  const std::string key(reinterpret_cast<const char*>(data), size);
  PathPattern::Error error;
  const auto pattern = PathPattern::compile(key, &error);
  if (!pattern) return 0;
  for (const char* path : {"sequential/dense/kernel", "sequential/dense_1/bias", "", "a",
                           "model/hidden_1/kernel/extra/ünïcödé"})
    (void)pattern->search(path);
  return 0;
}
