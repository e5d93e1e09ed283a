// The batch split view's numbers and sentences: shards, mesh placement, variable slices.

#include "ui/batch_split_plan.h"

#include <QCoreApplication>
#include <QStringList>
#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/distribution/data_parallel_executor.h"

namespace fitbench::batchsplit {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("BatchSplitView", text); }

bool modelParallel(const BatchSplitPlan& plan) { return plan.strategy == "ModelParallel"; }

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

std::vector<int64_t> shardRows(int64_t rows, int devices) {
  const int n = std::max(devices, 1);
  std::vector<Index> offsets(static_cast<size_t>(n)), sizes(static_cast<size_t>(n));
  DataParallelExecutor::shard_rows(static_cast<Index>(std::max<int64_t>(rows, 0)), n, offsets,
                                   sizes);
  return std::vector<int64_t>(sizes.begin(), sizes.end());
}

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
  MeshPlacement mesh;
  const auto& shape = plan.meshShape;
  const auto& names = plan.axisNames;
  if (shape.empty() || names.size() != shape.size()) {
    mesh.device = {0};
    return mesh;
  }
  const std::string batchAxis = plan.batchDimName.empty() ? names.front() : plan.batchDimName;
  const size_t batchIndex = batchAxis == names.front() || shape.size() < 2 ? 0 : 1;
  mesh.batch = std::max(shape[batchIndex], 1);
  mesh.model = shape.size() == 2 ? std::max(shape[1 - batchIndex], 1) : 1;
  mesh.batchAxis = QString::fromStdString(names[batchIndex]);
  if (shape.size() == 2) mesh.modelAxis = QString::fromStdString(names[1 - batchIndex]);
  mesh.device.resize(static_cast<size_t>(mesh.batch * mesh.model));
  for (int b = 0; b < mesh.batch; ++b)
    for (int m = 0; m < mesh.model; ++m)
      mesh.device[static_cast<size_t>(b * mesh.model + m)] =
          batchIndex == 0 ? b * mesh.model + m : m * mesh.batch + b;
  return mesh;
}

std::vector<VariableSlice> variableSlices(const BatchSplitPlan& plan, const MeshPlacement& mesh) {
  std::vector<VariableSlice> out;
  std::vector<int> everyone(mesh.device);
  std::sort(everyone.begin(), everyone.end());
  for (size_t i = 0; i < plan.variables.size(); ++i) {
    const VariableLayout& v = plan.variables[i];
    int dim = -1;
    for (size_t d = 0; d < v.axes.size() && d < v.shape.size(); ++d)
      if (!v.axes[d].empty() && mesh.model > 1) dim = static_cast<int>(d);
    if (dim < 0) {
      VariableSlice whole;
      whole.variable = static_cast<int>(i);
      whole.devices = everyone;
      whole.label = everyone.size() > 1 ? tr("replicated on all devices")
                                        : tr("%1 holds it whole").arg(deviceName(plan, 0));
      out.push_back(std::move(whole));
      continue;
    }
    const int64_t piece = v.shape[static_cast<size_t>(dim)] / mesh.model;
    for (int m = 0; m < mesh.model; ++m) {
      VariableSlice s;
      s.variable = static_cast<int>(i);
      s.dim = dim;
      s.begin = piece * m;
      s.end = piece * (m + 1);
      for (int b = 0; b < mesh.batch; ++b) s.devices.push_back(mesh.at(b, m));
      std::sort(s.devices.begin(), s.devices.end());
      QStringList names;
      for (int d : s.devices) names << deviceName(plan, d);
      s.label = (s.devices.size() == 1 ? tr("%1 holds %2") : tr("%1 hold %2"))
                    .arg(names.join(QStringLiteral(", ")), sliceText(v, dim, s.begin, s.end));
      out.push_back(std::move(s));
    }
  }
  return out;
}

int64_t trainingSamples(int64_t samples, double validationSplit) {
  // Keras's split point (validation_split_at) without its errors: the view draws any setting, and
  // the Data tab says what is wrong with one that empties a side.
  if (!(validationSplit > 0.0 && validationSplit < 1.0)) return samples;
  return static_cast<int64_t>(std::floor(static_cast<double>(samples) * (1.0 - validationSplit)));
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
    return BatchSplit{title, rows, shardRows(rows, parts), rows < bs};
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
  out.partial = out.rows < plan.batchSize;
  return out;
}

QString plannedCaption(const BatchSplitPlan& plan) {
  const int64_t bs = std::max<int64_t>(plan.batchSize, 1);
  const int64_t n = plan.trainingSamples;
  if (n <= 0) return tr("Each batch has %1.").arg(rowsText(bs));
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
  if (rows < plan.batchSize)
    text +=
        total > 0 && step.batch + 1 == total ? tr(": last partial batch") : tr(": partial batch");
  return text;
}

QString rowsText(int64_t rows) { return rows == 1 ? tr("1 row") : tr("%1 rows").arg(rows); }

QString rowRange(int64_t first, int64_t count) {
  if (count <= 0) return tr("no rows");
  if (count == 1) return tr("row %1").arg(first);
  return tr("rows %1–%2").arg(first).arg(first + count - 1);
}

}  // namespace fitbench::batchsplit
