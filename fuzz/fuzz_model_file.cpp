// fitbench's JSON model files: refused with an InputError or read.
#include "core/base/error.h"
#include "core/io/model_file.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  try {
    (void)read_model_file(fuzz::input_file("model.json", data, size));
  } catch (const InputError&) {
  }
  return 0;
}
