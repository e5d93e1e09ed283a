// The decision-boundary grid on oneTBB's threads against one block after another: the spiral
// example's fit() with a grid at every epoch's end (resolution 64 and 128, no throttling), minus
// the same fit() without a grid, per grid. Medians of alternating repeats; the ratio is the
// speed-up of the parallel blocks (the grids are bit for bit the same: tst_decision_view).
//   bench_gui_grid [--repeats N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "bench/bench_util.h"
#include "core/io/experiment.h"
#include "core/run/run.h"
#include "ui/rehearsal/decision_grid.h"

using namespace fitbench;

namespace {

// Seconds of fit() with a grid of `resolution` (0: none), `parallel` or not.
double fit_seconds(int resolution, bool parallel, int* grids) {
  ExperimentSpec spec = read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/spiral.json");
  spec.fit.epochs = 40;
  RunOverrides o;
  o.verbose = 0;
  RunPlan plan = plan_run(spec, o, PlanContext{});
  DecisionGridOptions options;
  options.resolution = resolution;
  options.parallel = parallel;
  options.maxPerSecond = 1e9;
  options.maxShare = 1.0;
  DecisionGrid grid(plan.data, plan.train_rows(), options);
  std::ostringstream sink;
  RunIO io;
  io.out = &sink;
  if (resolution > 0) io.callbacks.push_back(&grid);
  const RunResult result = execute_run(plan, io);
  if (grids) *grids = grid.gridsSent();
  return result.seconds;
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 7;
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--repeats") == 0) repeats = std::max(1, std::atoi(argv[i + 1]));
  std::printf("host: %s\nload before: %s\n", bench::host_cpu().c_str(),
              bench::load_average().c_str());
  for (int resolution : {64, 128}) {
    std::vector<double> none, serial, parallel;
    int grids = 0;
    for (int r = 0; r < repeats; ++r) {
      none.push_back(fit_seconds(0, false, nullptr));
      serial.push_back(fit_seconds(resolution, false, &grids));
      parallel.push_back(fit_seconds(resolution, true, &grids));
    }
    const double base = bench::median(none);
    const double s = (bench::median(serial) - base) / grids;
    const double p = (bench::median(parallel) - base) / grids;
    std::printf(
        "grid %dx%d (%d grids): one block after another %.3f ms, oneTBB %.3f ms per grid, "
        "speed-up %.2fx\n",
        resolution, resolution, grids, s * 1e3, p * 1e3, s / p);
    std::printf("SUMMARY grid%d serial_ms=%.4f tbb_ms=%.4f speedup=%.3f\n", resolution, s * 1e3,
                p * 1e3, s / p);
  }
  std::printf("load after: %s\n", bench::load_average().c_str());
  return 0;
}
