#include "core/distribution/executors/shard_exchange.h"

#include <algorithm>

namespace fitbench {

void ShardExchange::add_totals(ProcessGroup& group, std::span<StepTotals* const> local,
                               StepTotals& scratch, StepTotals& totals) {
  const size_t m = totals.metric_states.size(), per = 3 + m, k = local.size();
  totals_out_.resize(per * k);
  for (size_t d = 0; d < k; ++d) {
    const StepTotals& t = *local[d];
    double* o = totals_out_.data() + d * per;
    o[0] = t.loss_sum;
    o[1] = t.reg_weighted;
    o[2] = t.samples;
    std::copy(t.metric_states.begin(), t.metric_states.end(), o + 3);
  }
  const size_t shards = k * static_cast<size_t>(group.size());
  totals_in_.resize(per * shards);
  group.all_gather_bytes(totals_out_.data(), static_cast<int64_t>(per * k * sizeof(double)),
                         totals_in_.data());
  for (size_t s = 0; s < shards; ++s) {
    const double* in = totals_in_.data() + s * per;
    scratch.loss_sum = in[0];
    scratch.reg_weighted = in[1];
    scratch.samples = in[2];
    scratch.metric_states.assign(in + 3, in + per);
    totals.add(scratch);
  }
}

void ShardExchange::gather_rows(ProcessGroup& group, const BatchJob& job, int k, MatrixRef& out) {
  const int processes = group.size();
  const Index cols = out.cols();
  counts_.resize(static_cast<size_t>(processes));
  displs_.resize(static_cast<size_t>(processes));
  for (int q = 0; q < processes; ++q) {
    Index rows = 0;
    for (int d = 0; d < k; ++d) rows += job.sizes[static_cast<size_t>(q * k + d)];
    counts_[static_cast<size_t>(q)] = static_cast<int>(rows * cols);
    displs_[static_cast<size_t>(q)] =
        static_cast<int>(job.offsets[static_cast<size_t>(q * k)] * cols);
  }
  const Index mine = counts_[static_cast<size_t>(group.rank())] / std::max<Index>(cols, 1);
  const Index off = job.offsets[static_cast<size_t>(group.rank() * k)];
  rows_out_.resize(static_cast<size_t>(mine * cols));
  for (Index r = 0; r < mine; ++r)
    for (Index c = 0; c < cols; ++c) rows_out_[static_cast<size_t>(r * cols + c)] = out(off + r, c);
  rows_in_.resize(static_cast<size_t>(out.rows() * cols));
  group.all_gather(rows_out_.data(), rows_in_.data(), counts_.data(), displs_.data());
  for (Index r = 0; r < out.rows(); ++r)
    for (Index c = 0; c < cols; ++c) out(r, c) = rows_in_[static_cast<size_t>(r * cols + c)];
}

}  // namespace fitbench
