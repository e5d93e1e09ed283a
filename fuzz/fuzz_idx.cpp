// IDX files as the Fashion-MNIST reader takes them (core/data/idx_file.h): plain or gzip bytes,
// inflated (here with a 16 MiB limit, so a bomb costs the fuzzer no memory) and parsed; refused
// with an InputError naming the place, or read into an array whose size its dimensions give.
#include <cstdlib>

#include "core/base/error.h"
#include "core/data/idx_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  try {
    const IdxArray a = parse_idx(gunzip_if_gzip({data, size}, "f.gz", int64_t{1} << 24), "f.gz");
    int64_t n = 1;
    for (int64_t d : a.dims) n *= d;
    if (n != static_cast<int64_t>(a.values.size()) || a.items() * a.item_size() != n) std::abort();
  } catch (const InputError&) {
  }
  return 0;
}
