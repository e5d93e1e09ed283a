// One trace for a whole multi-process run: every process recorded the spans of its own devices
// against its own clock (zero when its executor started); rank 0 gathers them all, numbers the
// devices as the job does (process r's first device is r x its device count), and moves each
// process's spans onto rank 0's clock. Clocks are aligned on the collectives: a step's last
// collective ends at the same moment on every device of the job (none can leave it before all
// have sent their part), so the offset of process r is the median, over the first steps, of the
// end of its first device's last collective less rank 0's. Free function; every process calls it.
#pragma once

#include "core/distribution/processes/process_group.h"
#include "core/distribution/trace/trace.h"

namespace fitbench {

// The steps at the start of a run whose collectives set the clock offsets.
inline constexpr size_t kClockAlignmentSteps = 16;

// Every process calls it with its own trace, in the same order as the run's other exchanges;
// rank 0 gets the job's trace (every device of every process), the others an empty one. Every
// process must have recorded the same steps. A trace without collectives keeps its clock
// (offset 0).
RunTrace gather_process_traces(ProcessGroup& group, const RunTrace& mine);

}  // namespace fitbench
