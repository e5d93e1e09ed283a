#include "core/distribution/executors/shard_exchange.h"

#include <algorithm>
#include <cassert>

namespace fitbench {

namespace {

// owner[s] = s / k for every shard of `processes` processes with k each.
void fill_owner(std::vector<int>& owner, int processes, int k) {
  owner.resize(static_cast<size_t>(processes * k));
  for (size_t s = 0; s < owner.size(); ++s) owner[s] = static_cast<int>(s) / k;
}

}  // namespace

void ShardExchange::add_totals(ProcessGroup& group, std::span<StepTotals* const> local,
                               StepTotals& scratch, StepTotals& totals) {
  fill_owner(owner_, group.size(), static_cast<int>(local.size()));
  add_totals(group, owner_, local, scratch, totals);
}

void ShardExchange::add_totals(ProcessGroup& group, std::span<const int> owner,
                               std::span<StepTotals* const> local, StepTotals& scratch,
                               StepTotals& totals) {
  const size_t m = totals.metric_states.size(), per = 3 + m;
  const int processes = group.size();
  // Every process sends as many shards as the most any computes (the rest zero).
  counts_.assign(static_cast<size_t>(processes), 0);
  for (int q : owner) ++counts_[static_cast<size_t>(q)];
  const size_t most = static_cast<size_t>(*std::max_element(counts_.begin(), counts_.end()));
  assert(local.size() == static_cast<size_t>(counts_[static_cast<size_t>(group.rank())]));
  totals_out_.assign(per * most, 0.0);
  for (size_t d = 0; d < local.size(); ++d) {
    const StepTotals& t = *local[d];
    double* o = totals_out_.data() + d * per;
    o[0] = t.loss_sum;
    o[1] = t.reg_weighted;
    o[2] = t.samples;
    std::copy(t.metric_states.begin(), t.metric_states.end(), o + 3);
  }
  totals_in_.resize(per * most * static_cast<size_t>(processes));
  group.all_gather_bytes(totals_out_.data(), static_cast<int64_t>(per * most * sizeof(double)),
                         totals_in_.data());
  // Shard s is the next of its owner's, in shard order.
  displs_.assign(static_cast<size_t>(processes), 0);
  for (const int q : owner) {
    int& next = displs_[static_cast<size_t>(q)];
    const double* in = totals_in_.data() + (static_cast<size_t>(q) * most + next++) * per;
    scratch.loss_sum = in[0];
    scratch.reg_weighted = in[1];
    scratch.samples = in[2];
    scratch.metric_states.assign(in + 3, in + per);
    totals.add(scratch);
  }
}

void ShardExchange::gather_rows(ProcessGroup& group, const BatchJob& job, int k, MatrixRef& out) {
  fill_owner(owner_, group.size(), k);
  gather_rows(group, job, owner_, out);
}

void ShardExchange::gather_rows(ProcessGroup& group, const BatchJob& job,
                                std::span<const int> owner, MatrixRef& out) {
  const int processes = group.size();
  const Index cols = out.cols();
  counts_.assign(static_cast<size_t>(processes), 0);
  displs_.assign(static_cast<size_t>(processes), 0);
  // Each process's shards are consecutive: its rows are one block.
  for (size_t s = owner.size(); s-- > 0;) {
    const size_t q = static_cast<size_t>(owner[s]);
    counts_[q] += static_cast<int>(job.sizes[s] * cols);
    displs_[q] = static_cast<int>(job.offsets[s] * cols);
  }
  const size_t me = static_cast<size_t>(group.rank());
  const Index mine = counts_[me] / std::max<Index>(cols, 1);
  const Index off = displs_[me] / std::max<Index>(cols, 1);
  rows_out_.resize(static_cast<size_t>(mine * cols));
  for (Index r = 0; r < mine; ++r)
    for (Index c = 0; c < cols; ++c) rows_out_[static_cast<size_t>(r * cols + c)] = out(off + r, c);
  rows_in_.resize(static_cast<size_t>(out.rows() * cols));
  group.all_gather(rows_out_.data(), rows_in_.data(), counts_.data(), displs_.data());
  for (Index r = 0; r < out.rows(); ++r)
    for (Index c = 0; c < cols; ++c) out(r, c) = rows_in_[static_cast<size_t>(r * cols + c)];
}

}  // namespace fitbench
