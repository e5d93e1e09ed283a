// What the processes of a run exchange after each batch so that every process ends a step with
// what the one-process run computes: the step totals and the prediction rows of the batch's
// shards. Process q computed shards q*k .. q*k + k - 1 of every batch (k per process: a
// DataParallel device each, or a ModelParallel mesh row each), or the shards an owner list
// gives it (a ModelParallel mesh row is reported by the process of its model device 0). Reuses its
// buffers (no allocation once sized); used by one thread, the one that calls the ProcessGroup.
#pragma once

#include <span>
#include <vector>

#include "core/distribution/layout/batch_shards.h"
#include "core/distribution/processes/process_group.h"
#include "core/training/replica.h"

namespace fitbench {

class ShardExchange {
 public:
  // Adds every shard's totals to `totals` in shard order, as one process adds them. `local`
  // holds this process's k shards' totals, in order; `scratch` (one of them may be it) is
  // overwritten.
  void add_totals(ProcessGroup& group, std::span<StepTotals* const> local, StepTotals& scratch,
                  StepTotals& totals);
  // The same where process owner[s] computed shard s (owner ascending with s; a process may
  // compute none): `local` holds this process's shards' totals in order.
  void add_totals(ProcessGroup& group, std::span<const int> owner,
                  std::span<StepTotals* const> local, StepTotals& scratch, StepTotals& totals);
  // Rows [job.offsets[s], job.offsets[s] + job.sizes[s]) of `out` for every shard s, from the
  // process that computed them (this process's own rows are already in place).
  void gather_rows(ProcessGroup& group, const BatchJob& job, int k, MatrixRef& out);
  // The same where process owner[s] computed shard s (owner ascending with s).
  void gather_rows(ProcessGroup& group, const BatchJob& job, std::span<const int> owner,
                   MatrixRef& out);

 private:
  std::vector<int> owner_;  // shard s's process, for the calls with k shards per process
  std::vector<double> totals_out_, totals_in_;
  std::vector<float> rows_out_, rows_in_;
  std::vector<int> counts_, displs_;
};

}  // namespace fitbench
