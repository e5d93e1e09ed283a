// A run's event stream (`fitbench-cli run --events`, JSON lines) as a reader such as the window
// reads it from another process: line by line, each read as an event or refused with an
// InputError naming the line and the field, and nothing after a refused line (the window ends a
// job whose stream it cannot read). One refusal per input at most: when every line of a mutated
// input was read and refused, unwinding those exceptions took 40% of the target's time.
#include "core/base/error.h"
#include "core/run/run_events.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fitbench;
  const std::string text(reinterpret_cast<const char*>(data), size);
  size_t start = 0;
  for (int line = 1; start <= text.size(); ++line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    try {
      (void)parse_run_event(text.substr(start, end - start), "events:" + std::to_string(line));
    } catch (const InputError&) {
      break;
    }
    start = end + 1;
  }
  return 0;
}
