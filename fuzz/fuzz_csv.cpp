// CSV files as `evaluate`/`predict` read them and as an experiment's data: refused with an
// InputError naming the place, or read. The first byte picks the delimiter.
#include "core/base/error.h"
#include "core/data/dataset.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  if (size < 1) return 0;
  const char delimiter = ",;\t|"[data[0] % 4];
  const auto file = fuzz::input_file("data.csv", data + 1, size - 1);
  try {
    (void)read_csv_table(file, delimiter);
  } catch (const InputError&) {
  }
  DataSpec spec;
  spec.generator.clear();
  spec.csv = file.string();
  spec.target = {"y"};
  spec.delimiter = delimiter;
  spec.standardize = true;
  try {
    (void)read_csv_dataset(spec, {});
  } catch (const InputError&) {
  }
  return 0;
}
