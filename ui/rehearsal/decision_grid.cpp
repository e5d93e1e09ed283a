// DecisionGrid: the model evaluated over a fixed grid during fit(), on the training thread.
//
// The grid runs the forward pass predict() runs (Network::forward in inference mode) on the
// model's own variables, with workspaces sized once (one per block of rows; the blocks run on
// oneTBB's threads). It does not call Sequential::predict():
// that builds a new executor per call (for DataParallel a new device pool with its threads, and
// with the rehearsal knobs an artificially slowed pass) and allocates its output. Every executor
// keeps the model's variables current after each train step (the local one and DataParallel's
// device 0 update them in place; ModelParallel writes every update back), so the grid sees the
// weights the next step starts from; tst_decision_view checks this against predict().

#include "ui/rehearsal/decision_grid.h"

#include <QCoreApplication>
#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/losses/loss_registry.h"
#include "core/training/sequential.h"

// oneTBB names a member `emit`, Qt's keyword macro.
#pragma push_macro("emit")
#undef emit
#include <oneapi/tbb/parallel_for.h>  // NOLINT(build/include_order)
#pragma pop_macro("emit")

namespace fitbench {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("DecisionGrid", text); }

// Rows forwarded at once (bounds the workspace for wide hidden layers).
constexpr Index kBlockRows = 1024;

}  // namespace

DecisionPlan planDecisionGrid(int64_t features, int64_t outputs, const LossSpec& loss) {
  DecisionPlan plan;
  plan.fromLogits = loss.from_logits;
  const LossInfo* info = find_loss(loss.name);
  const LossTargets targets = info != nullptr ? info->targets : LossTargets::kValues;
  const bool binary = targets == LossTargets::kBinary;
  const bool multiclass = targets == LossTargets::kOneHot || targets == LossTargets::kSparse;
  const bool classifier = binary || multiclass;
  plan.classifier = classifier;
  if (features < 1 || features > 2) {
    plan.reason =
        classifier
            ? tr("The model has %1 features; the decision boundary needs 2.").arg(features)
            : tr("The model has %1 features; the prediction plot needs 1 or 2.").arg(features);
    return plan;
  }
  if (binary) {
    if (outputs != 1) {
      plan.reason = tr("The model has %1 outputs; a binary_crossentropy decision boundary is "
                       "drawn for 1.")
                        .arg(outputs);
      return plan;
    }
    plan.kind = DecisionKind::kBinary;
  } else if (multiclass) {
    if (outputs < 2) {
      plan.reason = tr("The model has 1 output; %1 needs one unit per class.")
                        .arg(QString::fromStdString(loss.name));
      return plan;
    }
    if (features == 1) {
      plan.reason = tr("The model has 1 feature; a map of %1 classes needs 2.").arg(outputs);
      return plan;
    }
    plan.kind = DecisionKind::kMulticlass;
  } else {
    if (outputs != 1) {
      plan.reason =
          tr("The model has %1 outputs; the prediction plot is drawn for 1.").arg(outputs);
      return plan;
    }
    plan.kind = DecisionKind::kRegression;
  }
  return plan;
}

std::shared_ptr<const DecisionPoints> makeDecisionPoints(
    const Matrix& x, const Matrix& y, Index validationStart,
    const std::vector<std::string>& featureNames, const std::string& targetName) {
  auto points = std::make_shared<DecisionPoints>();
  const Index n = std::min(x.rows(), y.rows());
  const Index columns = std::min<Index>(x.cols(), 2);
  // Evenly spaced rows; the validation boundary moves to the first kept validation row.
  const Index stride =
      std::max<Index>(1, (n + DecisionPoints::kMaxPoints - 1) / DecisionPoints::kMaxPoints);
  const Index kept = (n + stride - 1) / stride;
  points->x.resize(kept, columns);
  points->y.resize(kept, y.cols());
  points->validationStart = kept;
  for (Index k = 0; k < kept; ++k) {
    const Index row = k * stride;
    points->x.row(k) = x.row(row).head(columns);
    points->y.row(k) = y.row(row);
    if (row >= validationStart && points->validationStart == kept) points->validationStart = k;
  }
  for (Index j = 0; j < columns; ++j) {
    const auto i = static_cast<size_t>(j);
    points->featureNames << (i < featureNames.size() && !featureNames[i].empty()
                                 ? QString::fromStdString(featureNames[i])
                                 : QStringLiteral("x%1").arg(j + 1));
  }
  points->targetName =
      targetName.empty() ? QStringLiteral("y") : QString::fromStdString(targetName);
  return points;
}

DecisionGrid::DecisionGrid(const Dataset& data, Index trainRows, DecisionGridOptions options)
    : m_options(std::move(options)),
      m_points(makeDecisionPoints(
          data.x, data.y, trainRows, data.feature_names,
          data.target_names.empty() ? std::string() : data.target_names.front())) {
  m_options.resolution = std::max(m_options.resolution, 2);
  m_options.curvePoints = std::max(m_options.curvePoints, 2);
  // The data's bounding box (every row, training and validation) with the margin on each side.
  for (Index j = 0; j < std::min<Index>(data.x.cols(), 2); ++j) {
    if (data.size() == 0) break;
    double lo = data.x.col(j).minCoeff();
    double hi = data.x.col(j).maxCoeff();
    const double span = hi - lo;
    const double pad = span > 0.0 ? span * m_options.margin : 1.0;
    m_bounds[2 * j] = lo - pad;
    m_bounds[2 * j + 1] = hi + pad;
  }
}

DecisionGrid::~DecisionGrid() = default;

double DecisionGrid::now() const {
  if (m_options.clock) return m_options.clock();
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

bool DecisionGrid::due() const { return now() >= m_nextAllowed; }

void DecisionGrid::on_train_begin(const Logs&) {
  m_sent = 0;
  m_dirty = false;
  m_nextAllowed = 0.0;
  m_result = DecisionGridResult{};
  m_result.points = m_points;
  const Network& net = model_->network();
  const int64_t features = net.input_units();
  m_plan = planDecisionGrid(features, net.output_units(), model_->compile_options().loss);
  if (m_plan.kind == DecisionKind::kNone) {
    m_result.reason = m_plan.reason;
    if (m_sink) m_sink(m_result);
    return;
  }
  m_result.kind = m_plan.kind;
  m_result.features = static_cast<int>(features);
  m_result.classes = m_plan.kind == DecisionKind::kMulticlass ? static_cast<int>(net.output_units())
                     : m_plan.kind == DecisionKind::kBinary   ? 2
                                                              : 0;
  m_result.xMin = m_bounds[0];
  m_result.xMax = m_bounds[1];
  m_result.cols = features == 2 ? m_options.resolution : m_options.curvePoints;
  m_result.rows = features == 2 ? m_options.resolution : 1;
  if (features == 2) {
    m_result.yMin = m_bounds[2];
    m_result.yMax = m_bounds[3];
  }
  // Every buffer is sized here, once per fit().
  const Index n = Index(m_result.cols) * m_result.rows;
  m_input.resize(n, features);
  for (int r = 0; r < m_result.rows; ++r) {
    for (int c = 0; c < m_result.cols; ++c) {
      const Index i = Index(r) * m_result.cols + c;
      m_input(i, 0) = static_cast<float>(m_result.xAt(c));
      if (features == 2) m_input(i, 1) = static_cast<float>(m_result.yAt(r));
    }
  }
  m_result.values.assign(static_cast<size_t>(n), 0.0f);
  if (m_plan.kind == DecisionKind::kMulticlass) m_result.confidence.assign(size_t(n), 0.0f);
  m_workspaces.resize(static_cast<size_t>((n + kBlockRows - 1) / kBlockRows));
  for (Workspace& w : m_workspaces) net.reserve(w, std::min(n, kBlockRows));
  m_params.reserve(model_->variables().size());
}

void DecisionGrid::on_epoch_begin(int epoch, const Logs&) { m_epoch = epoch; }

void DecisionGrid::on_train_batch_end(int batch, const Logs&) {
  m_dirty = true;
  const int every = m_options.everyBatches;
  if (every <= 0 || (batch + 1) % every != 0 || batch + 1 >= params_.steps) return;
  if (due()) send(m_epoch, batch);
}

void DecisionGrid::on_epoch_end(int epoch, Logs&) {
  // The last epoch (or one after which training stops) always gets its grid.
  if (due() || epoch + 1 >= params_.epochs || model_->stop_training) send(epoch, -1);
}

void DecisionGrid::on_train_end(const Logs&) {
  // After EarlyStopping's callbacks (they come first): restored weights are those of an earlier
  // epoch's end, and the boundary shows them as that epoch's.
  if (model_->restored_epoch) {
    send(*model_->restored_epoch, -1);
  } else if (m_dirty) {
    send(m_epoch, -1);
  }
}

void DecisionGrid::send(int epoch, int batch) {
  if (m_plan.kind == DecisionKind::kNone) return;
  const double start = now();
  evaluate();
  m_result.epoch = epoch;
  m_result.batch = batch;
  if (m_sink) m_sink(m_result);
  ++m_sent;
  m_dirty = false;
  // At most maxPerSecond grids a second, and at most maxShare of the time for a costly grid.
  const double took = std::max(0.0, now() - start);
  m_nextAllowed = start + std::max(1.0 / std::max(m_options.maxPerSecond, 1e-9),
                                   took / std::max(m_options.maxShare, 1e-9));
}

void DecisionGrid::evaluate() {
  // The values' addresses, taken again each time (no allocation: the capacity is reserved).
  m_params.clear();
  for (const Variable& v : model_->variables()) m_params.push_back(&v.value);
  const auto blocks = static_cast<Index>(m_workspaces.size());
  if (m_options.parallel && blocks > 1) {
    // Blocks read the model's variables and write their own rows of the result.
    tbb::parallel_for(Index{0}, blocks, [this](Index b) { evaluateBlock(b); });
  } else {
    for (Index b = 0; b < blocks; ++b) evaluateBlock(b);
  }
}

void DecisionGrid::evaluateBlock(Index block) {
  const Network& net = model_->network();
  Workspace& workspace = m_workspaces[static_cast<size_t>(block)];
  const Index start = block * kBlockRows;
  const Index rows = std::min(kBlockRows, m_input.rows() - start);
  const bool logits = m_plan.fromLogits;
  net.forward(m_params, m_input.middleRows(start, rows), workspace, ForwardContext{});
  const ConstMatrixRef out = net.output(workspace, rows);
  for (Index r = 0; r < rows; ++r) {
    const auto i = static_cast<size_t>(start + r);
    switch (m_plan.kind) {
      case DecisionKind::kBinary: {
        const float o = out(r, 0);
        m_result.values[i] = logits ? 1.0f / (1.0f + std::exp(-o)) : o;
        break;
      }
      case DecisionKind::kMulticlass: {
        Index best = 0;
        const float top = out.row(r).maxCoeff(&best);
        float confidence = top;
        // softmax's largest entry: 1 / sum_j exp(o_j - max) (keras/src/activations).
        if (logits) confidence = 1.0f / (out.row(r).array() - top).exp().sum();
        m_result.values[i] = static_cast<float>(best);
        m_result.confidence[i] = std::clamp(confidence, 0.0f, 1.0f);
        break;
      }
      case DecisionKind::kRegression:
        m_result.values[i] = out(r, 0);
        break;
      case DecisionKind::kNone:
        break;
    }
  }
}

}  // namespace fitbench
