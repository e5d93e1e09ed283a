// Calibration: measures what this machine's simulated devices sustain (FLOP/s of a device's
// matrix products at a plan's shapes, and the thread collectives' latency and bandwidth), makes
// the "this-machine" target from it, and measures a plan's real mean step for comparison.
// Each call takes a fraction of a second to a few seconds; run by one thread at a time.
#pragma once

#include "core/run/capacity.h"
#include "core/run/target.h"

namespace fitbench {

struct RunPlan;

struct Calibration {
  double flops = 0.0;  // FLOP/s one device thread sustains on its share of the plan's step
  double cores = 1.0;  // how many such threads the machine runs at once now (1 to its cores)
  LinkModel link;      // the thread collectives: latency per message and bandwidth
};

// Measures on this machine, for `in`: one device's forward, backward and update at its rows of
// the batch (the FLOP/s it sustains), the same on every core at once (the cores it gives), and
// all-reduces of one and of 4M floats over two threads (latency and bandwidth).
Calibration calibrate(const CapacityInput& in);
// this_machine() with the measured FLOP/s and link.
Target calibrated_target(const Calibration& c);

// The median wall time of one training step of `plan` (its model, data and strategy), over
// `steps` steps after one warm-up step; trains the plan's model.
double measure_step_seconds(RunPlan& plan, int steps);

}  // namespace fitbench
