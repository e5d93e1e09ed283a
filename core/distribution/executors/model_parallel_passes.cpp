// The forward and backward passes of ModelParallelExecutor (model_parallel_executor.h): each
// Dense layer on a device's slice of its variables (every other layer on all of its own), with the
// collectives of the device's mesh row that give every device of the row full activations and input
// gradients.
#include "core/distribution/executors/batch_reducer.h"
#include "core/distribution/executors/model_parallel_device.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/nn/conv.h"
#include "core/nn/dense.h"

namespace fitbench {
namespace {

using Split = ModelParallelPlan::Split;

// The first n floats of v.
std::span<float> first(std::vector<float>& v, Index n) {
  return {v.data(), static_cast<size_t>(n)};
}

}  // namespace

ModelParallelExecutor::Clock::time_point ModelParallelExecutor::gather_blocks(
    Device& dev, size_t l, SpanKind open, Clock::time_point t, Index rows, Index width,
    MatrixRef out) {
  DeviceTimeline& timeline = timelines_[dev.index];
  const int model = plan_.model;
  t = timeline.end_span(open, t);
  t = rows_[static_cast<size_t>(dev.row)]->all_gather(dev.row_rank, timeline, t,
                                                      first(dev.piece[l], rows * width),
                                                      first(dev.gathered[l], rows * width * model));
  errors_.guarded(dev.index, [&] {
    for (int j = 0; j < model; ++j)
      out.middleCols(width * j, width) =
          Eigen::Map<const Matrix>(dev.gathered[l].data() + j * rows * width, rows, width);
  });
  return t;
}

bool ModelParallelExecutor::sharded_conv(size_t l) const {
  const Network& net = *ctx_.graph.network;
  return dynamic_cast<const Conv2D*>(net.layers()[l].get()) &&
         plan_.variables[net.first_variable(l)] == Split::kColumns;
}

// The layer's kernel columns (its filters [c * m, c * (m + 1))) and their bias give the device's
// channels of every output pixel, activation applied (an element-wise function of each channel);
// the row all-gathers them, each pixel's channels in device order. Viewed as (rows * pixels,
// channels) matrices, that is gather_blocks' column blocks.
ModelParallelExecutor::Clock::time_point ModelParallelExecutor::conv_forward(
    Device& dev, size_t l, ConstMatrixRef input, Index rows, const ForwardContext& ctx,
    Clock::time_point t) {
  const Network& net = *ctx_.graph.network;
  const auto& conv = static_cast<const Conv2D&>(*net.layers()[l]);
  const size_t k = net.first_variable(l);
  const Index c = dev.values[k].cols(), pixels = conv.pixels_out();
  const bool has_bias = net.variable_count(l) > 1;
  const bool own_bias = has_bias && plan_.variables[k + 1] == Split::kReplicated;
  const Matrix* params[2] = {&dev.values[k], own_bias   ? &dev.conv_bias[l]
                                             : has_bias ? &dev.values[k + 1]
                                                        : nullptr};
  Eigen::Map<Matrix> mine(dev.piece[l].data(), rows, pixels * c);
  ForwardContext lctx = ctx;
  lctx.scratch = dev.scratch[l];
  errors_.guarded(dev.index, [&] {
    if (own_bias) dev.conv_bias[l].row(0) = dev.values[k + 1].row(0).segment(c * dev.m, c);
    conv.forward(std::span<const Matrix* const>(params, has_bias ? 2 : 1), input, mine,
                 dev.cache[l].topRows(rows), lctx);
  });
  auto out = dev.a[l].topRows(rows);
  return gather_blocks(dev, l, SpanKind::kForward, t, rows * pixels, c,
                       Eigen::Map<Matrix>(out.data(), rows * pixels, c * plan_.model));
}

// The device's channels of dL/d(out) through the layer on its kernel columns: their kernel and
// bias gradients, and a partial input gradient the row all-reduces. A replicated bias's gradient
// is the row's channels all-gathered.
ModelParallelExecutor::Clock::time_point ModelParallelExecutor::conv_backward(Device& dev, size_t l,
                                                                              ConstMatrixRef input,
                                                                              Index rows,
                                                                              Clock::time_point t) {
  const Network& net = *ctx_.graph.network;
  const auto& conv = static_cast<const Conv2D&>(*net.layers()[l]);
  DeviceTimeline& timeline = timelines_[dev.index];
  CollectiveGroup& row = *rows_[static_cast<size_t>(dev.row)];
  const size_t k = net.first_variable(l);
  const Index c = dev.values[k].cols(), pixels = conv.pixels_out(), filters = c * plan_.model;
  const bool has_bias = net.variable_count(l) > 1;
  const bool own_bias = has_bias && plan_.variables[k + 1] == Split::kReplicated;
  Matrix* bias_grad = has_bias ? dev.grad_ptrs[k + 1] : nullptr;
  const Matrix* params[2] = {&dev.values[k], own_bias   ? &dev.conv_bias[l]
                                             : has_bias ? &dev.values[k + 1]
                                                        : nullptr};
  Matrix* grads[2] = {dev.grad_ptrs[k], own_bias && bias_grad ? &dev.conv_bias_grad[l] : bias_grad};
  const bool want_dx = l > 0;
  // The device's channels of dL/d(out), in the gathered buffer (free until the next forward).
  Eigen::Map<Matrix> dy(dev.gathered[l].data(), rows, pixels * c);
  const Eigen::Map<const Matrix> mine(dev.piece[l].data(), rows, pixels * c);
  ForwardContext lctx{.training = true};
  lctx.scratch = dev.scratch[l];
  errors_.guarded(dev.index, [&] {
    const auto full = dev.da[l].topRows(rows);
    Eigen::Map<Matrix>(dy.data(), rows * pixels, c) =
        Eigen::Map<const Matrix>(full.data(), rows * pixels, filters).middleCols(c * dev.m, c);
    conv.backward(std::span<const Matrix* const>(params, has_bias ? 2 : 1), input, mine,
                  dev.cache[l].topRows(rows), dy, want_dx,
                  want_dx ? MatrixRef(dev.da[l - 1].topRows(rows)) : MatrixRef(dy.topRows(0)),
                  std::span<Matrix* const>(grads, has_bias ? 2 : 1), lctx);
  });
  if (own_bias && bias_grad) {
    t = timeline.end_span(SpanKind::kBackward, t);
    t = row.all_gather(dev.row_rank, timeline, t,
                       std::span<const float>(dev.conv_bias_grad[l].data(), static_cast<size_t>(c)),
                       std::span<float>(bias_grad->data(), static_cast<size_t>(filters)));
  }
  if (want_dx) {
    auto dx = dev.da[l - 1].topRows(rows);
    t = timeline.end_span(SpanKind::kBackward, t);
    t = row.all_reduce(dev.row_rank, timeline, t,
                       std::span<float>(dx.data(), static_cast<size_t>(rows * dx.cols())));
  }
  return t;
}

// Collectives are called outside errors_.guarded(): every device of a group makes every call, even
// after an error, so that none waits forever.
ModelParallelExecutor::Clock::time_point ModelParallelExecutor::forward(Device& dev,
                                                                        ConstMatrixRef x,
                                                                        Index offset, Index rows,
                                                                        Clock::time_point t) {
  const Network& net = *ctx_.graph.network;
  const int model = plan_.model;
  CollectiveGroup& row = *rows_[static_cast<size_t>(dev.row)];
  DeviceTimeline& timeline = timelines_[dev.index];
  const ForwardContext fctx{.training = job_.training(),
                            .step = job_.step,
                            .row_offset = offset,
                            .seed = ctx_.dropout_seed};
  for (size_t l = 0; l < net.layers().size(); ++l) {
    const Layer& layer = *net.layers()[l];
    const ConstMatrixRef input = l == 0 ? x : ConstMatrixRef(dev.a[l - 1].topRows(rows));
    auto out = dev.a[l].topRows(rows);
    const auto* dense = dynamic_cast<const Dense*>(&layer);
    if (sharded_conv(l)) {
      t = conv_forward(dev, l, input, rows, fctx, t);
      continue;
    }
    if (!dense) {
      // Every other layer's variables (a Conv2D's unless split) are replicated along the model
      // axis. A
      // BatchNormalization sums its statistics over the batch axis (a column of the mesh).
      const auto params = std::span<const Matrix* const>(dev.const_params)
                              .subspan(net.first_variable(l), net.variable_count(l));
      GroupBatchReducer reducer(*columns_[static_cast<size_t>(dev.col)], dev.col_rank, timeline,
                                dev.batch_sums, SpanKind::kForward, t);
      ForwardContext lctx = fctx;
      lctx.scratch = dev.scratch[l];
      if (plan_.batch > 1) lctx.batch = &reducer;
      errors_.guarded(dev.index,
                      [&] { layer.forward(params, input, out, dev.cache[l].topRows(rows), lctx); });
      if (lctx.batch && lctx.training && errors_.failed()) {
        dev.sum_sizes.clear();
        layer.batch_sums(false, false, dev.sum_sizes);
        reducer.finish(dev.sum_sizes);
      }
      t = reducer.time();
      continue;
    }
    const size_t k = net.first_variable(l);
    const Matrix& kernel = dev.values[k];
    const Split split = plan_.variables[k];
    const Matrix* bias = net.variable_count(l) > 1 ? &dev.values[k + 1] : nullptr;
    const bool bias_sharded = bias && plan_.variables[k + 1] == Split::kColumns;
    const Index units = net.layer_units(l), c = units / model;
    auto z = dev.z[l].topRows(rows);
    if (split == Split::kColumns) {
      // Each device computes its columns of x @ kernel + bias; the row all-gathers them.
      Eigen::Map<Matrix> mine(dev.piece[l].data(), rows, c);
      errors_.guarded(dev.index, [&] {
        mine.noalias() = input * kernel;
        if (bias_sharded)
          mine.rowwise() += bias->row(0);
        else if (bias)
          mine.rowwise() += bias->row(0).segment(c * dev.m, c);
      });
      t = gather_blocks(dev, l, SpanKind::kForward, t, rows, c, z);
    } else if (split == Split::kRows) {
      // Each device multiplies its input columns by its kernel rows and adds its part of the
      // bias (all of a replicated bias on model device 0); the row all-reduces the partial sums.
      const Index r = kernel.rows();
      errors_.guarded(dev.index, [&] {
        z.noalias() = input.middleCols(r * dev.m, r) * kernel;
        if (bias_sharded)
          z.middleCols(c * dev.m, c).rowwise() += bias->row(0);
        else if (bias && dev.m == 0)
          z.rowwise() += bias->row(0);
      });
      t = timeline.end_span(SpanKind::kForward, t);
      t = row.all_reduce(dev.row_rank, timeline, t, std::span<float>(z.data(), rows * units));
    } else {
      errors_.guarded(dev.index, [&] {
        z.noalias() = input * kernel;
        if (bias && !bias_sharded) z.rowwise() += bias->row(0);
      });
      if (bias_sharded) {
        // A replicated kernel with a sharded bias: the row all-gathers the bias.
        t = timeline.end_span(SpanKind::kForward, t);
        t = row.all_gather(dev.row_rank, timeline, t, std::span<const float>(bias->data(), c),
                           first(dev.full_bias[l], units));
        errors_.guarded(dev.index, [&] {
          z.rowwise() += Eigen::Map<const Eigen::RowVectorXf>(dev.full_bias[l].data(), units);
        });
      }
    }
    errors_.guarded(dev.index, [&] { activation_forward(dense->activation(), z, out); });
  }
  return t;
}

ModelParallelExecutor::Clock::time_point ModelParallelExecutor::backward(Device& dev,
                                                                         ConstMatrixRef x,
                                                                         Index rows,
                                                                         Clock::time_point t) {
  const Network& net = *ctx_.graph.network;
  CollectiveGroup& row = *rows_[static_cast<size_t>(dev.row)];
  DeviceTimeline& timeline = timelines_[dev.index];
  for (size_t l = net.layers().size(); l-- > 0;) {
    const Layer& layer = *net.layers()[l];
    const ConstMatrixRef input = l == 0 ? x : ConstMatrixRef(dev.a[l - 1].topRows(rows));
    const bool want_dx = l > 0;
    auto dy = dev.da[l].topRows(rows);
    const auto* dense = dynamic_cast<const Dense*>(&layer);
    if (sharded_conv(l)) {
      t = conv_backward(dev, l, input, rows, t);
      continue;
    }
    if (!dense) {
      const size_t k = net.first_variable(l), count = net.variable_count(l);
      GroupBatchReducer reducer(*columns_[static_cast<size_t>(dev.col)], dev.col_rank, timeline,
                                dev.batch_sums, SpanKind::kBackward, t);
      ForwardContext lctx{.training = true, .batch = plan_.batch > 1 ? &reducer : nullptr};
      lctx.scratch = dev.scratch[l];
      if (want_dx || count > 0)
        errors_.guarded(dev.index, [&] {
          layer.backward(
              std::span<const Matrix* const>(dev.const_params).subspan(k, count), input,
              dev.a[l].topRows(rows), dev.cache[l].topRows(rows), dy, want_dx,
              want_dx ? MatrixRef(dev.da[l - 1].topRows(rows)) : MatrixRef(dy.topRows(0)),
              std::span<Matrix* const>(dev.grad_ptrs).subspan(k, count), lctx);
        });
      if (lctx.batch && errors_.failed()) {
        dev.sum_sizes.clear();
        layer.batch_sums(true, want_dx, dev.sum_sizes);
        reducer.finish(dev.sum_sizes);
      }
      t = reducer.time();
      continue;
    }
    const size_t k = net.first_variable(l);
    const Matrix& kernel = dev.values[k];
    const Split split = plan_.variables[k];
    const bool has_bias = net.variable_count(l) > 1;
    // dz restricted to this device's kernel columns (all of it unless column-sharded).
    const Index c = split == Split::kColumns ? kernel.cols() : 0;
    errors_.guarded(dev.index, [&] {
      activation_backward(dense->activation(), dev.z[l].topRows(rows), dev.a[l].topRows(rows), dy);
      if (Matrix* g = dev.grad_ptrs[k]) {
        if (split == Split::kReplicated)
          g->noalias() = input.transpose() * dy;
        else if (split == Split::kColumns)
          g->noalias() = input.transpose() * dy.middleCols(c * dev.m, c);
        else
          g->noalias() = input.middleCols(kernel.rows() * dev.m, kernel.rows()).transpose() * dy;
      }
      if (Matrix* g = has_bias ? dev.grad_ptrs[k + 1] : nullptr) {
        const Index bc = g->cols();
        if (plan_.variables[k + 1] == Split::kColumns)
          g->row(0).noalias() = dy.middleCols(bc * dev.m, bc).colwise().sum();
        else
          g->row(0).noalias() = dy.colwise().sum();
      }
    });
    if (!want_dx) continue;
    auto dx = dev.da[l - 1].topRows(rows);
    const Index in = dx.cols();
    if (split == Split::kReplicated) {
      errors_.guarded(dev.index, [&] { dx.noalias() = dy * kernel.transpose(); });
    } else if (split == Split::kColumns) {
      // Each device's columns give a partial input gradient; the row all-reduces them.
      errors_.guarded(dev.index,
                      [&] { dx.noalias() = dy.middleCols(c * dev.m, c) * kernel.transpose(); });
      t = timeline.end_span(SpanKind::kBackward, t);
      t = row.all_reduce(dev.row_rank, timeline, t, std::span<float>(dx.data(), rows * in));
    } else {
      // Each device has the input gradient of its kernel rows; the row all-gathers them.
      const Index r = kernel.rows();
      Eigen::Map<Matrix> mine(dev.piece[l].data(), rows, r);
      errors_.guarded(dev.index, [&] { mine.noalias() = dy * kernel.transpose(); });
      t = gather_blocks(dev, l, SpanKind::kBackward, t, rows, r, dx);
    }
  }
  return t;
}

}  // namespace fitbench
