#include "core/distribution/layout/batch_shards.h"

#include <algorithm>

namespace fitbench {

void shard_rows(Index rows, int shards, std::vector<Index>& offsets, std::vector<Index>& sizes) {
  const Index base = rows / shards, extra = rows % shards;
  Index at = 0;
  for (int s = 0; s < shards; ++s) {
    offsets[static_cast<size_t>(s)] = at;
    sizes[static_cast<size_t>(s)] = base + (s < extra ? 1 : 0);
    at += sizes[static_cast<size_t>(s)];
  }
}

void BatchJob::start(Phase p, const ConstMatrixRef& batch_x, const ConstMatrixRef* batch_y,
                     MatrixRef* predictions, int shards, std::span<const int64_t> rows_of) {
  phase = p;
  x = &batch_x;
  y = batch_y;
  out = predictions;
  index = rows_of;
  scale = 1.0f / static_cast<float>(std::max<Index>(rows(), 1));
  offsets.resize(static_cast<size_t>(shards));
  sizes.resize(static_cast<size_t>(shards));
  shard_rows(rows(), shards, offsets, sizes);
}

namespace {

// Makes m at least rows x cols without shrinking.
void ensure_size(Matrix& m, Index rows, Index cols) {
  if (m.cols() != cols || m.rows() < rows) m.resize(rows, cols);
}

}  // namespace

void ShardBuffers::reserve(Index rows, Index features) {
  capacity = std::max(capacity, rows);
  ensure_size(x, capacity, features);
}

void ShardBuffers::copy(const BatchJob& job, Index offset, Index rows) {
  const ConstMatrixRef& batch_x = *job.x;
  capacity = std::max(capacity, rows);
  ensure_size(x, capacity, batch_x.cols());
  if (job.y) ensure_size(y, capacity, job.y->cols());
  if (job.index.empty()) {
    x.topRows(rows) = batch_x.middleRows(offset, rows);
    if (job.y) y.topRows(rows) = job.y->middleRows(offset, rows);
    return;
  }
  for (Index r = 0; r < rows; ++r) {
    const Index from = job.index[static_cast<size_t>(offset + r)];
    x.row(r) = batch_x.row(from);
    if (job.y) y.row(r) = job.y->row(from);
  }
}

void add_shard_totals(const ComputeGraph& graph, ConstMatrixRef y_pred, ConstMatrixRef y,
                      double loss_sum, StepTotals& totals) {
  totals.loss_sum += loss_sum;
  totals.samples += static_cast<double>(y_pred.rows());
  double* state = totals.metric_states.data();
  for (const Metric* m : graph.metrics) {
    m->accumulate(y_pred, y, state);
    state += m->state_size();
  }
}

std::vector<std::span<float>> gradient_pieces(std::span<Matrix* const> grads) {
  std::vector<std::span<float>> pieces;
  for (Matrix* g : grads)
    if (g) pieces.emplace_back(g->data(), static_cast<size_t>(g->size()));
  return pieces;
}

int64_t total_size(std::span<const std::span<float>> pieces) {
  int64_t n = 0;
  for (const auto& p : pieces) n += static_cast<int64_t>(p.size());
  return n;
}

}  // namespace fitbench
