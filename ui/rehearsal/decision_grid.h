// The decision-boundary grid: a fit() callback that, on the training thread, evaluates the model
// over a fixed grid of the input plane (2 features) or line (1 feature) at each epoch's end (and
// every N batches if asked) and hands a value copy to a sink. Owned by the training worker for one
// fit(); its hooks and the sink run on the training thread. The result and points are values.
#pragma once

#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <vector>

#include "core/data/dataset.h"
#include "core/losses/loss_spec.h"
#include "core/nn/network.h"
#include "core/training/callback.h"

namespace fitbench {

// What the plot shows: P(class 1) of a binary classifier, the most likely class of a multiclass
// one (with its probability as confidence), or a regression's prediction; kNone when no plot
// applies (the reason says why).
enum class DecisionKind { kNone, kBinary, kMulticlass, kRegression };

// The plot a model gets from its input width, output units and loss.
struct DecisionPlan {
  DecisionKind kind = DecisionKind::kNone;
  QString reason;           // kNone: one sentence for the user
  bool fromLogits = false;  // the outputs are logits: sigmoid / softmax them first
  bool classifier = false;  // a crossentropy loss: the view is a decision boundary, not a curve
};
DecisionPlan planDecisionGrid(int64_t features, int64_t outputs, const LossSpec& loss);

// The points drawn over the grid: a copy of (at most kMaxPoints evenly spaced rows of) the data
// the model sees, its first two feature columns only.
struct DecisionPoints {
  static constexpr Index kMaxPoints = 2000;
  Matrix x;                   // (n, 1 or 2)
  Matrix y;                   // (n, targets): labels, one-hot rows or values
  Index validationStart = 0;  // rows from here on are validation rows (drawn hollow)
  QStringList featureNames;   // one per column of x ("x1", "x2" when the data has none)
  QString targetName;         // the first target's name ("y" when the data has none)
};
std::shared_ptr<const DecisionPoints> makeDecisionPoints(
    const Matrix& x, const Matrix& y, Index validationStart,
    const std::vector<std::string>& featureNames, const std::string& targetName = {});

// One evaluation of the model over the grid, in the model's input space (standardized data
// stays standardized: the plot's axes are the values the model is given).
struct DecisionGridResult {
  DecisionKind kind = DecisionKind::kNone;
  QString reason;    // kNone: why there is no plot
  int features = 0;  // 2: a heatmap over (x, y); 1: a curve over x
  int classes = 0;   // multiclass: the output units; binary: 2; regression: 0
  double xMin = 0.0, xMax = 1.0, yMin = 0.0, yMax = 1.0;  // the grid's extent (y: 2 features)
  int cols = 0, rows = 0;                                 // resolution; rows is 1 for one feature
  // rows * cols values, row 0 at yMax (the top of the picture), column 0 at xMin; each at its
  // cell's centre. Binary: P(class 1); multiclass: the class index; regression: the prediction.
  std::vector<float> values;
  std::vector<float> confidence;  // multiclass: the chosen class's probability; else empty
  int epoch = -1;                 // 0-based epoch of the weights (-1: no grid yet)
  int batch = -1;                 // 0-based batch for a grid inside an epoch; -1 at its end
  std::shared_ptr<const DecisionPoints> points;  // the same copy for every result of a run

  double xAt(int col) const { return xMin + (col + 0.5) * (xMax - xMin) / cols; }
  double yAt(int row) const { return yMax - (row + 0.5) * (yMax - yMin) / rows; }
};

struct DecisionGridOptions {
  int resolution = 64;         // cells per side of the 2-feature grid
  int curvePoints = 200;       // x values of the 1-feature curve
  double margin = 0.1;         // added to each side of the data's bounding box, times its span
  int everyBatches = 0;        // also a grid every N batches inside an epoch; 0: epoch ends only
  double maxPerSecond = 20.0;  // at most this many grids per second of training
  double maxShare = 0.1;       // and grids take at most this share of the time (big models)
  // Blocks of the grid forwarded at once on oneTBB's threads (bit for bit the serial result:
  // the same blocks, each with its own workspace); false: one after another (bench_gui compares).
  bool parallel = true;
  std::function<double()> clock;  // seconds; null: the steady clock (tests inject one)
};

class DecisionGrid : public Callback {
 public:
  using Sink = std::function<void(const DecisionGridResult&)>;

  // `data` is what fit() is given (the model's input space); rows from trainRows on are the
  // validation rows. The bounds and the points are taken here, once.
  DecisionGrid(const Dataset& data, Index trainRows, DecisionGridOptions options = {});
  ~DecisionGrid() override;

  // Called on the training thread with each result (the sink copies what it keeps).
  void setSink(Sink sink) { m_sink = std::move(sink); }
  int gridsSent() const { return m_sent; }
  std::shared_ptr<const DecisionPoints> points() const { return m_points; }

  void on_train_begin(const Logs& logs) override;
  void on_epoch_begin(int epoch, const Logs& logs) override;
  void on_train_batch_end(int batch, const Logs& logs) override;
  void on_epoch_end(int epoch, Logs& logs) override;
  void on_train_end(const Logs& logs) override;

 private:
  double now() const;
  bool due() const;
  void send(int epoch, int batch);
  void evaluate();
  void evaluateBlock(Index block);

  DecisionGridOptions m_options;
  std::shared_ptr<const DecisionPoints> m_points;
  double m_bounds[4] = {0.0, 1.0, 0.0, 1.0};  // xMin, xMax, yMin, yMax with the margin
  DecisionPlan m_plan;
  DecisionGridResult m_result;          // reused: its buffers are sized once
  Matrix m_input;                       // the grid's points, (rows * cols, features)
  std::vector<Workspace> m_workspaces;  // one per block of rows, sized once
  std::vector<const Matrix*> m_params;
  int m_epoch = 0;
  bool m_dirty = false;  // trained since the last grid
  double m_nextAllowed = 0.0;
  int m_sent = 0;
  Sink m_sink;
};

}  // namespace fitbench
