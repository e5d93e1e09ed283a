// Experiment files: any bytes are refused with an InputError or read; what is read writes back
// to a document that reads to the same document (experiment_to_json is a fixed point).
#include <cstdlib>

#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/io/json_file.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  ExperimentSpec spec;
  try {
    spec = parse_experiment(json_io::parse_json_text(text, "fuzz.json"), "fuzz.json",
                            "/fitbench-fuzz");
  } catch (const InputError&) {
    return 0;
  }
  const nlohmann::ordered_json written = experiment_to_json(spec);
  try {
    const ExperimentSpec again = parse_experiment(written, "written", "/fitbench-fuzz");
    if (experiment_to_json(again) != written) std::abort();  // not a fixed point
  } catch (const InputError&) {
    std::abort();  // fitbench wrote what it cannot read
  }
  return 0;
}
