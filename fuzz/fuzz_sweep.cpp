// Sweep sections on the xor example: every trial made, or a PlanError listing the problems.
#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/io/json_file.h"
#include "core/run/sweep.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  static const ExperimentSpec base = read_experiment(fuzz::example("xor.json"));
  const std::string text(reinterpret_cast<const char*>(data), size);
  ExperimentSpec spec = base;
  try {
    spec.sweep = json_io::parse_json_text(text, "sweep.json");
    (void)plan_sweep(spec, PlanContext{});
  } catch (const InputError&) {
  }
  return 0;
}
