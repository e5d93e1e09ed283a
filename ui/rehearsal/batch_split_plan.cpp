// The batch split view's numbers and sentences: shards, mesh placement, variable slices.

#include "ui/rehearsal/batch_split_plan.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/distribution/spec/strategies.h"

namespace fitbench::batchsplit {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("BatchSplitView", text); }

bool modelParallel(const BatchSplitPlan& plan) { return plan.strategy == kModelParallel; }

// The last component of a variable path: "sequential/dense/kernel" -> "kernel".
QString shortName(const std::string& path) {
  const QString p = QString::fromStdString(path);
  return p.mid(p.lastIndexOf(QLatin1Char('/')) + 1);
}

// "kernel[:, 4:8]": the range along dim, every other dimension whole.
QString sliceText(const VariableLayout& v, int dim, int64_t begin, int64_t end) {
  QStringList dims;
  for (size_t d = 0; d < v.shape.size(); ++d)
    dims << (static_cast<int>(d) == dim ? QStringLiteral("%1:%2").arg(begin).arg(end)
                                        : QStringLiteral(":"));
  return shortName(v.path) + QLatin1Char('[') + dims.join(QStringLiteral(", ")) + QLatin1Char(']');
}

}  // namespace

std::vector<int64_t> shardRows(int64_t rows, int devices) { return batch_parts(rows, devices); }

int deviceCount(const BatchSplitPlan& plan) {
  if (plan.strategy.empty()) return 1;
  return std::max(static_cast<int>(plan.devices.size()), 1);
}

QString deviceName(const BatchSplitPlan& plan, int d) {
  if (d >= 0 && static_cast<size_t>(d) < plan.devices.size())
    return QString::fromStdString(plan.devices[static_cast<size_t>(d)]);
  return QStringLiteral("cpu:%1").arg(d);
}

MeshPlacement meshPlacement(const BatchSplitPlan& plan) {
  DistributionSpec spec;
  spec.class_name = plan.strategy;
  spec.mesh_shape = plan.meshShape;
  spec.axis_names = plan.axisNames;
  spec.batch_dim_name = plan.batchDimName;
  return mesh_placement(spec);
}

std::vector<VariableSlice> variableSlices(const BatchSplitPlan& plan, const MeshPlacement& mesh) {
  std::vector<VariableSlice> out;
  for (const VariablePiece& piece : variable_pieces(plan.variables, mesh)) {
    VariableSlice s{piece, {}};
    const VariableLayout& v = plan.variables[static_cast<size_t>(piece.variable)];
    if (piece.dim < 0) {
      s.label = piece.devices.size() > 1 ? tr("replicated on all devices")
                                         : tr("%1 holds it whole").arg(deviceName(plan, 0));
    } else {
      QStringList names;
      for (int d : piece.devices) names << deviceName(plan, d);
      s.label = (piece.devices.size() == 1 ? tr("%1 holds %2") : tr("%1 hold %2"))
                    .arg(names.join(QStringLiteral(", ")),
                         sliceText(v, piece.dim, piece.begin, piece.end));
    }
    out.push_back(std::move(s));
  }
  return out;
}

int64_t trainingSamples(int64_t samples, double validationSplit) {
  return training_rows(samples, validationSplit);
}

int64_t largestBatch(const BatchSplitPlan& plan) {
  const int64_t bs = std::max<int64_t>(plan.batchSize, 1);
  return plan.trainingSamples > 0 ? std::min(bs, plan.trainingSamples) : bs;
}

int64_t batchesPerEpoch(const BatchSplitPlan& plan) {
  const int64_t bs = std::max<int64_t>(plan.batchSize, 1);
  return plan.trainingSamples > 0 ? (plan.trainingSamples + bs - 1) / bs : 0;
}

std::vector<BatchSplit> plannedBatches(const BatchSplitPlan& plan) {
  const int parts = modelParallel(plan) ? meshPlacement(plan).batch : deviceCount(plan);
  const int64_t bs = std::max<int64_t>(plan.batchSize, 1);
  const int64_t n = plan.trainingSamples;
  const auto make = [&](const QString& title, int64_t rows) {
    return BatchSplit{title, rows, shardRows(rows, parts), rows < largestBatch(plan)};
  };
  if (n > 0 && n < bs) return {make(tr("The only batch"), n)};
  std::vector<BatchSplit> out{make(tr("Full batch"), bs)};
  if (n > 0 && n % bs != 0) out.push_back(make(tr("Last batch"), n % bs));
  return out;
}

BatchSplit liveBatch(const BatchSplitPlan& plan, const StepTrace& step) {
  BatchSplit out;
  out.title = tr("Latest step");
  out.parts = step.shard_rows;
  if (modelParallel(plan)) {
    // The devices of a mesh row train on the same rows: one part per mesh row.
    const MeshPlacement mesh = meshPlacement(plan);
    if (step.shard_rows.size() == mesh.device.size()) {
      out.parts.clear();
      for (int b = 0; b < mesh.batch; ++b)
        out.parts.push_back(step.shard_rows[static_cast<size_t>(mesh.at(b, 0))]);
    }
  }
  out.rows = std::accumulate(out.parts.begin(), out.parts.end(), int64_t{0});
  out.partial = out.rows < largestBatch(plan);
  return out;
}

QString plannedCaption(const BatchSplitPlan& plan) {
  const int64_t bs = std::max<int64_t>(plan.batchSize, 1);
  const int64_t n = plan.trainingSamples;
  if (n <= 0)
    return tr("Each batch has up to %1 (the data's row count is not known yet).").arg(rowsText(bs));
  const QString head = tr("%1 training samples, batch size %2: ").arg(n).arg(bs);
  if (n < bs) return head + tr("one batch of %1 per epoch.").arg(rowsText(n));
  if (n % bs == 0) return head + tr("%1 full batches per epoch.").arg(n / bs);
  return head + tr("%1 batches per epoch, the last one of %2.")
                    .arg(batchesPerEpoch(plan))
                    .arg(rowsText(n % bs));
}

QString liveCaption(const BatchSplitPlan& plan, const StepTrace& step, int64_t rows) {
  const int64_t total = batchesPerEpoch(plan);
  QString text =
      total > 0 ? tr("Epoch %1, batch %2 of %3").arg(step.epoch + 1).arg(step.batch + 1).arg(total)
                : tr("Epoch %1, batch %2").arg(step.epoch + 1).arg(step.batch + 1);
  text += QStringLiteral(" · ") + rowsText(rows);
  if (rows < largestBatch(plan))
    text +=
        total > 0 && step.batch + 1 == total ? tr(": last partial batch") : tr(": partial batch");
  return text;
}

QString statisticsNote(const BatchSplitPlan& plan) {
  if (plan.batchNormLayers == 0 || deviceCount(plan) < 2) return {};
  const QString layers = plan.batchNormLayers == 1
                             ? tr("BatchNormalization")
                             : tr("The %1 BatchNormalization layers").arg(plan.batchNormLayers);
  if (plan.strategy == kModelParallel)
    return plan.perDeviceStatistics
               ? tr("Statistics per device are DataParallel's contrast: under ModelParallel the "
                    "run refuses them (choose Global batch on the Devices tab).")
               : tr("%1: the whole batch's statistics, each column of the mesh summing its "
                    "rows' (as Keras).")
                     .arg(layers);
  if (plan.perDeviceStatistics)
    return tr("%1: each device normalizes its shard by that shard's own statistics (per device, "
              "as PyTorch's DistributedDataParallel without SyncBatchNorm); every replica keeps "
              "%2's moving statistics.")
        .arg(layers, deviceName(plan, 0));
  return tr("%1: every shard is normalized by the whole batch's statistics, each device's sums "
            "all-reduced (as Keras).")
      .arg(layers);
}

QString rowsText(int64_t rows) { return rows == 1 ? tr("1 row") : tr("%1 rows").arg(rows); }

QString rowRange(int64_t first, int64_t count) {
  if (count <= 0) return tr("no rows");
  if (count == 1) return tr("row %1").arg(first);
  return tr("rows %1–%2").arg(first).arg(first + count - 1);
}

}  // namespace fitbench::batchsplit
