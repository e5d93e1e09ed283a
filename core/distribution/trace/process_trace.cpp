#include "core/distribution/trace/process_trace.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "core/base/statistics.h"

namespace fitbench {
namespace {

struct Counts {
  int64_t steps = 0;
  int64_t devices = 0;
  int64_t spans = 0;
};

// When device 0's last collective of each of the first steps ended (-1: the step had none).
std::vector<double> collective_ends(const RunTrace& trace) {
  std::vector<double> ends(kClockAlignmentSteps, -1.0);
  for (const RunTrace::Span& s : trace.spans()) {
    if (s.device != 0 || s.step_index >= kClockAlignmentSteps ||
        s.span.kind != SpanKind::kCollective)
      continue;
    double& end = ends[s.step_index];
    end = std::max(end, s.span.end_us());
  }
  return ends;
}

}  // namespace

RunTrace gather_process_traces(ProcessGroup& group, const RunTrace& mine) {
  static_assert(std::is_trivially_copyable_v<RunTrace::Span>);
  const int processes = group.size();
  const auto p = static_cast<size_t>(processes);

  const Counts own{static_cast<int64_t>(mine.steps().size()), mine.devices(),
                   static_cast<int64_t>(mine.spans().size())};
  std::vector<Counts> counts(p);
  group.all_gather_bytes(&own, sizeof own, counts.data());
  int64_t widest = 0, fewest_steps = own.steps;
  for (const Counts& c : counts) {
    // Every process of a run hosts as many devices.
    if (c.devices != counts[0].devices)
      throw std::logic_error("the processes recorded " + std::to_string(counts[0].devices) +
                             " and " + std::to_string(c.devices) +
                             " devices; their traces cannot be put together");
    widest = std::max(widest, c.spans);
    fewest_steps = std::min(fewest_steps, c.steps);
  }
  // The steps every process recorded (a run stopped by a signal may end a step apart).
  const auto steps = static_cast<size_t>(fewest_steps);
  const int local = static_cast<int>(own.devices);
  // Nothing recorded (the same answer on every process, from the same counts).
  if (steps == 0 || local == 0 || widest == 0) return RunTrace();

  // Clock offsets from the collectives' ends.
  const std::vector<double> ends = collective_ends(mine);
  std::vector<double> all_ends(p * kClockAlignmentSteps);
  group.all_gather_bytes(ends.data(), static_cast<int64_t>(ends.size() * sizeof(double)),
                         all_ends.data());

  // Spans, each process's padded to the most any has.
  std::vector<RunTrace::Span> padded(static_cast<size_t>(widest));
  std::copy(mine.spans().begin(), mine.spans().end(), padded.begin());
  std::vector<RunTrace::Span> spans(p * static_cast<size_t>(widest));
  group.all_gather_bytes(
      padded.data(), static_cast<int64_t>(padded.size() * sizeof(RunTrace::Span)), spans.data());
  std::vector<int64_t> rows(steps * static_cast<size_t>(local));  // the common steps only
  for (size_t i = 0; i < steps; ++i)
    for (int d = 0; d < local; ++d)
      rows[i * static_cast<size_t>(local) + d] = mine.shard_rows(i, d);
  std::vector<int64_t> all_rows(p * rows.size());
  group.all_gather_bytes(rows.data(), static_cast<int64_t>(rows.size() * sizeof(int64_t)),
                         all_rows.data());

  RunTrace job;
  if (group.rank() != 0) return job;
  std::vector<double> offsets(p, 0.0);
  for (size_t r = 1; r < p; ++r) {
    std::vector<double> differences;
    for (size_t s = 0; s < kClockAlignmentSteps; ++s) {
      const double e0 = all_ends[s], er = all_ends[r * kClockAlignmentSteps + s];
      if (e0 >= 0.0 && er >= 0.0) differences.push_back(er - e0);
    }
    offsets[r] = median(std::move(differences));
  }
  // A process that started before rank 0 would have spans before the trace's zero: then every
  // span moves later by as much.
  double earliest = 0.0;
  for (size_t r = 0; r < p; ++r)
    for (size_t k = 0; k < static_cast<size_t>(counts[r].spans); ++k)
      if (spans[r * static_cast<size_t>(widest) + k].step_index < steps)
        earliest = std::min(earliest,
                            spans[r * static_cast<size_t>(widest) + k].span.begin_us - offsets[r]);
  for (double& o : offsets) o += earliest;

  job.reserve(steps);
  const int devices = local * processes;
  StepTrace step;
  step.spans.resize(static_cast<size_t>(devices));
  step.shard_rows.resize(static_cast<size_t>(devices));
  std::vector<size_t> next(p, 0);  // each process's next span (spans come in step order)
  for (size_t i = 0; i < steps; ++i) {
    step.step = mine.steps()[i].step;
    step.epoch = mine.steps()[i].epoch;
    step.batch = mine.steps()[i].batch;
    for (auto& s : step.spans) s.clear();
    for (size_t r = 0; r < p; ++r) {
      const RunTrace::Span* from = spans.data() + r * static_cast<size_t>(widest);
      const auto count = static_cast<size_t>(counts[r].spans);
      for (size_t& k = next[r]; k < count && from[k].step_index <= i; ++k) {
        TraceSpan span = from[k].span;
        span.begin_us -= offsets[r];
        step.spans[r * static_cast<size_t>(local) + static_cast<size_t>(from[k].device)].push_back(
            span);
      }
      for (int d = 0; d < local; ++d)
        step.shard_rows[r * static_cast<size_t>(local) + static_cast<size_t>(d)] =
            all_rows[r * rows.size() + i * static_cast<size_t>(local) + static_cast<size_t>(d)];
    }
    job.append(step);
  }
  return job;
}

}  // namespace fitbench
