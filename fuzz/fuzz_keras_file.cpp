// Keras files: a .keras archive (libzip, config.json, the HDF5 weights inside) or, for the xor
// example's model, a .weights.h5 file (HDF5): refused with an InputError or read. The first byte
// picks which.
//
// fitbench reads HDF5 first in a program of its own, fitbench-hdf5-check (core/base/child_check.h).
// Under libFuzzer the read runs here without it, so that libFuzzer sees its coverage and the
// sanitizers its memory errors; scripts/fuzz.sh runs this target with -fork and -ignore_crashes,
// and sorts what crashes inside HDF5 from what would crash fitbench, rerunning each crash with the
// check (FITBENCH_FUZZ_CHILD_CHECK=1). As a corpus test (run_corpus.cpp) it reads as fitbench does.
#include <cstdlib>

#include "core/base/child_check.h"
#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/io/model_file.h"
#include "core/training/sequential.h"
#include "fuzz/fuzz_util.h"

#ifdef FITBENCH_LIBFUZZER
[[maybe_unused]] static const bool child_checks = [] {
  const bool on = std::getenv("FITBENCH_FUZZ_CHILD_CHECK") != nullptr;
  fitbench::set_child_checks(on);
  return on;
}();
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  if (size < 1) return 0;
  static const ModelFile like = [] {
    const ExperimentSpec spec = read_experiment(fuzz::example("xor.json"));
    Sequential model(spec.model);
    model.compile(spec.compile);
    model.build(2);  // x and y
    return model.model_file();
  }();
  try {
    if (data[0] % 2 == 0)
      (void)read_model_file(fuzz::input_file("model.keras", data + 1, size - 1));
    else
      (void)read_weights_file(fuzz::input_file("model.weights.h5", data + 1, size - 1), like);
  } catch (const InputError&) {
  }
  return 0;
}
