// The decision-boundary grid and view: the plot kind follows the loss and output units; grids of
// hand-set models equal the formulas (computed here in double) and predict() on the same points;
// inside a real fit() (one device and DataParallel on 2) the grid sees the weights predict()
// sees, mid-epoch and at the last epoch; grids are throttled; the view draws at odd sizes, puts
// the heatmap's colours where the model says, and trains readable pictures of xor, blobs, sine
// (saved as PNGs when FITBENCH_SCREENSHOTS names a directory).
#include <QCheckBox>
#include <QDir>
#include <QImage>
#include <QTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "core/data/dataset.h"
#include "core/distribution/executors/distribution.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "ui/rehearsal/decision_grid.h"
#include "ui/rehearsal/decision_view.h"

using namespace fitbench;

namespace {

LayerSpec dense(int64_t units, const std::string& activation) {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.activation = activation;
  return l;
}

std::unique_ptr<Sequential> makeModel(int64_t features, std::vector<LayerSpec> layers,
                                      const std::string& loss, bool fromLogits = false,
                                      double learningRate = 0.05) {
  ModelSpec spec;
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {features};
  spec.layers = {in};
  for (auto& l : layers) spec.layers.push_back(l);
  auto model = std::make_unique<Sequential>(spec);
  CompileOptions c;
  c.optimizer.class_name = "Adam";
  c.optimizer.learning_rate = learningRate;
  c.loss.name = loss;
  c.loss.from_logits = fromLogits;
  model->compile(c);
  return model;
}

// The four corners of [-1, 1]^2 with labels x > y: bounds [-1.2, 1.2] on both axes.
Dataset corners() {
  Dataset d;
  d.x.resize(4, 2);
  d.x << -1, -1, 1, 1, -1, 1, 1, -1;
  d.y.resize(4, 1);
  d.y << 0, 0, 0, 1;
  d.feature_names = {"a", "b"};
  return d;
}

// Runs the grid's hooks as fit() would for one epoch and returns what the sink got.
std::vector<DecisionGridResult> gridOnce(Sequential& model, const Dataset& data,
                                         DecisionGridOptions options = {}) {
  DecisionGrid grid(data, data.size(), std::move(options));
  std::vector<DecisionGridResult> got;
  grid.setSink([&](const DecisionGridResult& r) { got.push_back(r); });
  grid.set_model(&model);
  grid.set_params(CallbackParams{1, 1, 0});
  Logs logs;
  grid.on_train_begin(logs);
  grid.on_epoch_begin(0, logs);
  grid.on_epoch_end(0, logs);
  grid.on_train_end(logs);
  return got;
}

// The grid's cell centres as rows of a matrix (for predict()).
Matrix gridPoints(const DecisionGridResult& g) {
  Matrix x(Index(g.rows) * g.cols, g.features);
  for (int r = 0; r < g.rows; ++r) {
    for (int c = 0; c < g.cols; ++c) {
      x(Index(r) * g.cols + c, 0) = float(g.xAt(c));
      if (g.features == 2) x(Index(r) * g.cols + c, 1) = float(g.yAt(r));
    }
  }
  return x;
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// A pixel's distance to a colour (largest channel difference).
int colourDistance(QRgb a, const QColor& b) {
  return std::max({std::abs(qRed(a) - b.red()), std::abs(qGreen(a) - b.green()),
                   std::abs(qBlue(a) - b.blue())});
}

// Saves the view when FITBENCH_SCREENSHOTS names a directory.
void screenshot(QWidget& view, const QString& name) {
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
  if (!dir.isEmpty()) QVERIFY(view.grab().save(QDir(dir).filePath(name)));
}

// The grid of Dense(1, linear) with w = 2 and bias b over 3 points at x = 0, 0.5, 1 whose
// targets are b - 0.1, b + 1.1, b + 1.9: 200 points on 2x + b over [-0.1, 1.1].
DecisionGridResult lineGrid(float b) {
  Dataset d;
  d.x.resize(3, 1);
  d.x << 0.0f, 0.5f, 1.0f;
  d.y.resize(3, 1);
  d.y << b - 0.1f, b + 1.1f, b + 1.9f;
  auto model = makeModel(1, {dense(1, "linear")}, "mean_squared_error");
  model->variables()[0].value << 2.0f;
  model->variables()[1].value << b;
  return gridOnce(*model, d).front();
}

}  // namespace

class TestDecisionView : public QObject {
  Q_OBJECT
 private slots:
  void planKinds_data();
  void planKinds();
  void binaryGridMatchesFormulaAndPredict();
  void parallelBlocksEqualSerial();
  void logitsAndMulticlass();
  void regressionCurve();
  void tooManyFeaturesSaysWhy();
  void pointsThinnedAndSplit();
  void throttledToMaxPerSecond();
  void restoredWeightsGetTheirEpochsGrid();
  void everyBatchesInsideAnEpoch();
  void fitGridEqualsPredict_data();
  void fitGridEqualsPredict();
  void viewDrawsAtOddSizes();
  void viewHeatmapColours();
  void viewMessagesAndValidation();
  void viewNaNPredictions();
  void trainedPictures();

 private:
  std::vector<DecisionGridResult> m_oneDevice;  // fitGridEqualsPredict's one-device grids
};

void TestDecisionView::planKinds_data() {
  QTest::addColumn<int>("features");
  QTest::addColumn<int>("outputs");
  QTest::addColumn<QString>("loss");
  QTest::addColumn<int>("kind");
  QTest::addColumn<QString>("reason");
  const int none = int(DecisionKind::kNone), bin = int(DecisionKind::kBinary),
            multi = int(DecisionKind::kMulticlass), reg = int(DecisionKind::kRegression);
  QTest::newRow("bce 2x1") << 2 << 1 << "binary_crossentropy" << bin << "";
  QTest::newRow("bce 1x1 (curve)") << 1 << 1 << "binary_crossentropy" << bin << "";
  QTest::newRow("sparse 2x3") << 2 << 3 << "sparse_categorical_crossentropy" << multi << "";
  QTest::newRow("categorical 2x4") << 2 << 4 << "categorical_crossentropy" << multi << "";
  QTest::newRow("mse 1x1") << 1 << 1 << "mean_squared_error" << reg << "";
  QTest::newRow("huber 2x1") << 2 << 1 << "huber" << reg << "";
  QTest::newRow("bce 4 features") << 4 << 1 << "binary_crossentropy" << none
                                  << "The model has 4 features; the decision boundary needs 2.";
  QTest::newRow("mae 3 features") << 3 << 1 << "mean_absolute_error" << none
                                  << "The model has 3 features; the prediction plot needs 1 or 2.";
  QTest::newRow("sparse 1 feature") << 1 << 3 << "sparse_categorical_crossentropy" << none
                                    << "The model has 1 feature; a map of 3 classes needs 2.";
  QTest::newRow("bce 2 outputs") << 2 << 2 << "binary_crossentropy" << none
                                 << "The model has 2 outputs; a binary_crossentropy decision "
                                    "boundary is drawn for 1.";
  QTest::newRow("mse 2 outputs") << 2 << 2 << "mean_squared_error" << none
                                 << "The model has 2 outputs; the prediction plot is drawn for 1.";
}

void TestDecisionView::planKinds() {
  QFETCH(int, features);
  QFETCH(int, outputs);
  QFETCH(QString, loss);
  QFETCH(int, kind);
  QFETCH(QString, reason);
  LossSpec spec;
  spec.name = loss.toStdString();
  const DecisionPlan plan = planDecisionGrid(features, outputs, spec);
  QCOMPARE(int(plan.kind), kind);
  QCOMPARE(plan.reason, reason);
}

void TestDecisionView::binaryGridMatchesFormulaAndPredict() {
  // Dense(1, sigmoid) with w = (1, -1), b = 0: P = sigmoid(x - y), 0.5 on the diagonal.
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  model->variables()[0].value << 1.0f, -1.0f;
  model->variables()[1].value << 0.0f;
  const auto got = gridOnce(*model, corners());
  QCOMPARE(got.size(), size_t(1));
  const DecisionGridResult& g = got.front();
  QCOMPARE(int(g.kind), int(DecisionKind::kBinary));
  QCOMPARE(g.cols, 64);
  QCOMPARE(g.rows, 64);
  QCOMPARE(g.classes, 2);
  QCOMPARE(g.epoch, 0);
  QCOMPARE(g.batch, -1);
  // [-1, 1] plus 10% of the span (0.2) on each side; cell centres 2.4 / 128 from the edges.
  QCOMPARE(g.xMin, -1.2);
  QCOMPARE(g.xMax, 1.2);
  QCOMPARE(g.yMax, 1.2);
  QVERIFY(std::abs(g.xAt(0) - (-1.2 + 2.4 / 128)) < 1e-12);
  QVERIFY(std::abs(g.yAt(0) - (1.2 - 2.4 / 128)) < 1e-12);
  QCOMPARE(g.points->featureNames, QStringList({"a", "b"}));
  for (int r = 0; r < 64; ++r) {
    for (int c = 0; c < 64; ++c) {
      const double expected = sigmoid(g.xAt(c) - g.yAt(r));
      QVERIFY2(std::abs(g.values[size_t(r * 64 + c)] - expected) < 1e-6,
               qPrintable(QStringLiteral("cell %1,%2").arg(r).arg(c)));
    }
    QVERIFY(std::abs(g.values[size_t(r * 64 + (63 - r))] - 0.5) < 1e-6);  // the diagonal
  }
  // The top-left corner is class 0's side, the bottom-right class 1's: sigmoid(-/+2.3625).
  QVERIFY(std::abs(g.values.front() - 0.0860) < 1e-3);
  QVERIFY(std::abs(g.values.back() - 0.9140) < 1e-3);
  const Matrix predicted = model->predict(gridPoints(g), 256);
  for (Index i = 0; i < predicted.rows(); ++i)
    QVERIFY(std::abs(predicted(i, 0) - g.values[size_t(i)]) < 1e-6);
}

// The grid's blocks on oneTBB's threads give the serial grid bit for bit (10 blocks of rows,
// a multiclass model: values and confidences).
void TestDecisionView::parallelBlocksEqualSerial() {
  set_random_seed(5);
  auto model =
      makeModel(2, {dense(16, "tanh"), dense(3, "softmax")}, "sparse_categorical_crossentropy");
  Dataset d = corners();
  d.y << 0, 1, 2, 1;
  const auto serial = gridOnce(*model, d, {.resolution = 100, .parallel = false}).front();
  const auto parallel = gridOnce(*model, d, {.resolution = 100, .parallel = true}).front();
  QCOMPARE(serial.values.size(), size_t(10000));
  QVERIFY(serial.values == parallel.values);
  QVERIFY(serial.confidence == parallel.confidence);
  QVERIFY(std::find(serial.values.begin(), serial.values.end(), 2.0f) != serial.values.end() ||
          std::find(serial.values.begin(), serial.values.end(), 1.0f) != serial.values.end());
}

void TestDecisionView::logitsAndMulticlass() {
  // Logits with from_logits: the grid shows the sigmoid of the output, like the sigmoid model.
  auto logits = makeModel(2, {dense(1, "linear")}, "binary_crossentropy", true);
  logits->variables()[0].value << 1.0f, -1.0f;
  logits->variables()[1].value << 0.0f;
  const DecisionGridResult b = gridOnce(*logits, corners()).front();
  QCOMPARE(int(b.kind), int(DecisionKind::kBinary));
  for (int r = 0; r < b.rows; r += 7)
    for (int c = 0; c < b.cols; c += 5)
      QVERIFY(std::abs(b.values[size_t(r * b.cols + c)] - sigmoid(b.xAt(c) - b.yAt(r))) < 1e-6);

  // Three classes, outputs (x, y, -x - y) as logits and through softmax: the argmax and the
  // softmax's largest entry, computed here in double.
  for (const bool fromLogits : {true, false}) {
    auto model = makeModel(2, {dense(3, fromLogits ? "linear" : "softmax")},
                           "sparse_categorical_crossentropy", fromLogits);
    model->variables()[0].value << 1, 0, -1, 0, 1, -1;
    model->variables()[1].value.setZero();
    const DecisionGridResult g = gridOnce(*model, corners()).front();
    QCOMPARE(int(g.kind), int(DecisionKind::kMulticlass));
    QCOMPARE(g.classes, 3);
    QCOMPARE(g.confidence.size(), g.values.size());
    for (int r = 0; r < g.rows; ++r) {
      for (int c = 0; c < g.cols; ++c) {
        const double o[3] = {g.xAt(c), g.yAt(r), -g.xAt(c) - g.yAt(r)};
        const int best = int(std::max_element(o, o + 3) - o);
        double second = -1e300;
        for (int k = 0; k < 3; ++k)
          if (k != best) second = std::max(second, o[k]);
        const double sum = std::exp(o[0]) + std::exp(o[1]) + std::exp(o[2]);
        const size_t i = size_t(r * g.cols + c);
        if (o[best] - second > 1e-4) QCOMPARE(int(g.values[i]), best);  // not a tie
        QVERIFY(std::abs(g.confidence[i] - std::exp(o[best]) / sum) < 1e-5);
      }
    }
  }
}

void TestDecisionView::regressionCurve() {
  // Dense(1) with w = 2, b = 0.5 over x in [0, 1]: 200 points on 2x + 0.5 over [-0.1, 1.1].
  const DecisionGridResult g = lineGrid(0.5f);
  QCOMPARE(int(g.kind), int(DecisionKind::kRegression));
  QCOMPARE(g.features, 1);
  QCOMPARE(g.cols, 200);
  QCOMPARE(g.rows, 1);
  QVERIFY(std::abs(g.xMin + 0.1) < 1e-6 && std::abs(g.xMax - 1.1) < 1e-6);
  QVERIFY(g.confidence.empty());
  for (int c = 0; c < g.cols; ++c)
    QVERIFY(std::abs(g.values[size_t(c)] - (2.0 * g.xAt(c) + 0.5)) < 1e-5);
  QCOMPARE(g.points->targetName, QStringLiteral("y"));
}

void TestDecisionView::tooManyFeaturesSaysWhy() {
  Dataset d;
  d.x = Matrix::Random(10, 4);
  d.y = Matrix::Zero(10, 1);
  auto model = makeModel(4, {dense(1, "sigmoid")}, "binary_crossentropy");
  DecisionGrid grid(d, d.size());
  std::vector<DecisionGridResult> got;
  grid.setSink([&](const DecisionGridResult& r) { got.push_back(r); });
  model->fit(d.x, d.y, FitOptions{.epochs = 3, .batch_size = 5, .verbose = 0},
             RunOptions{.callbacks = {&grid}});
  QCOMPARE(got.size(), size_t(1));  // the reason once, no grids
  QCOMPARE(int(got[0].kind), int(DecisionKind::kNone));
  QCOMPARE(got[0].reason,
           QStringLiteral("The model has 4 features; the decision boundary needs 2."));
  QCOMPARE(grid.gridsSent(), 0);
  DecisionView view;
  view.setGrid(got[0]);
  QCOMPARE(view.message(), got[0].reason);
  QCOMPARE(view.caption(), QString());
  QVERIFY(view.plotRect().isEmpty());
}

void TestDecisionView::pointsThinnedAndSplit() {
  // 5000 rows, the last 1000 for validation: every 3rd row kept (1667), validation from row 4002
  // (kept index 1334) on.
  Matrix x(5000, 3), y(5000, 1);
  for (Index i = 0; i < 5000; ++i) {
    x.row(i) << float(i), float(-i), 7.0f;
    y(i, 0) = float(i % 2);
  }
  const auto p = makeDecisionPoints(x, y, 4000, {"u"});
  QCOMPARE(p->x.rows(), Index(1667));
  QCOMPARE(p->x.cols(), Index(2));
  QCOMPARE(p->validationStart, Index(1334));
  QCOMPARE(p->x(1334, 0), 4002.0f);
  QCOMPARE(p->x(1333, 1), -3999.0f);
  QCOMPARE(p->featureNames, QStringList({"u", "x2"}));
}

void TestDecisionView::restoredWeightsGetTheirEpochsGrid() {
  // EarlyStopping's restore_best_weights (it runs before the grid at the end of training) put
  // back epoch 2's weights: the last grid is drawn from them and says epoch 2, not the last.
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  DecisionGrid grid(corners(), 4);
  std::vector<int> epochs;
  grid.setSink([&](const DecisionGridResult& r) { epochs.push_back(r.epoch); });
  grid.set_model(model.get());
  grid.set_params(CallbackParams{5, 1, 0});
  Logs logs;
  grid.on_train_begin(logs);
  for (int e = 0; e < 5; ++e) {
    grid.on_epoch_begin(e, logs);
    grid.on_epoch_end(e, logs);
  }
  QCOMPARE(epochs.back(), 4);
  model->restored_epoch = 2;
  grid.on_train_end(logs);
  QCOMPARE(epochs.back(), 2);
}

void TestDecisionView::throttledToMaxPerSecond() {
  // 128 epochs 1/64 s apart with at most 16 grids a second: epochs 0, 4, 8, ..., 124 (32) and
  // the last one (127), which always gets its grid.
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  double t = 0.0;
  DecisionGrid grid(corners(), 4,
                    DecisionGridOptions{.maxPerSecond = 16.0, .clock = [&t] { return t; }});
  std::vector<int> epochs;
  grid.setSink([&](const DecisionGridResult& r) { epochs.push_back(r.epoch); });
  grid.set_model(model.get());
  grid.set_params(CallbackParams{128, 1, 0});
  Logs logs;
  grid.on_train_begin(logs);
  for (int e = 0; e < 128; ++e) {
    t = e / 64.0;
    grid.on_epoch_begin(e, logs);
    grid.on_train_batch_end(0, logs);
    grid.on_epoch_end(e, logs);
  }
  grid.on_train_end(logs);
  QCOMPARE(epochs.size(), size_t(33));
  for (int i = 0; i < 32; ++i) QCOMPARE(epochs[size_t(i)], 4 * i);
  QCOMPARE(epochs.back(), 127);

  // A costly grid: each clock reading is 0.25 s later, so a grid (two readings) takes 0.25 s
  // and the next may start 0.25 / 0.1 = 2.5 s after it. Each epoch reads the clock once when it
  // sends nothing; counting readings by hand gives grids at epochs 0, 9, 18, 27, 36 and the last.
  double ticks = 0.0;
  DecisionGrid costly(corners(), 4, DecisionGridOptions{.clock = [&ticks] {
                        ticks += 0.25;
                        return ticks;
                      }});
  epochs.clear();
  costly.setSink([&](const DecisionGridResult& r) { epochs.push_back(r.epoch); });
  costly.set_model(model.get());
  costly.set_params(CallbackParams{40, 1, 0});
  costly.on_train_begin(logs);
  for (int e = 0; e < 40; ++e) {
    costly.on_epoch_begin(e, logs);
    costly.on_train_batch_end(0, logs);
    costly.on_epoch_end(e, logs);
  }
  costly.on_train_end(logs);
  QCOMPARE(epochs, std::vector<int>({0, 9, 18, 27, 36, 39}));

  // A real fit of a microsecond-step model: no more than 20 grids a second, plus the last.
  Dataset d = corners();
  auto fast = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  DecisionGrid real(d, 4);
  const auto start = std::chrono::steady_clock::now();
  fast->fit(d.x, d.y, FitOptions{.epochs = 3000, .batch_size = 4, .verbose = 0},
            RunOptions{.callbacks = {&real}});
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  QVERIFY2(real.gridsSent() <= int(20 * seconds) + 2,
           qPrintable(QStringLiteral("%1 grids in %2 s").arg(real.gridsSent()).arg(seconds)));
  QVERIFY(real.gridsSent() >= 1);
}

void TestDecisionView::everyBatchesInsideAnEpoch() {
  // 10 batches an epoch, a grid every 3: after batches 3, 6, 9 and at the epoch's end.
  Dataset d;
  d.x = Matrix::Random(40, 2);
  d.y = (d.x.col(0).array() > 0).cast<float>().matrix();
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  double t = 0.0;
  DecisionGrid grid(d, 40, DecisionGridOptions{.everyBatches = 3, .maxShare = 1e9, .clock = [&t] {
                                                 t += 1.0;  // always due
                                                 return t;
                                               }});
  QStringList got;
  grid.setSink([&](const DecisionGridResult& r) {
    got << QStringLiteral("%1/%2").arg(r.epoch).arg(r.batch);
  });
  model->fit(d.x, d.y, FitOptions{.epochs = 2, .batch_size = 4, .shuffle = false, .verbose = 0},
             RunOptions{.callbacks = {&grid}});
  QCOMPARE(got, QStringList({"0/2", "0/5", "0/8", "0/-1", "1/2", "1/5", "1/8", "1/-1"}));
}

void TestDecisionView::fitGridEqualsPredict_data() {
  QTest::addColumn<int>("devices");
  QTest::newRow("default executor") << 0;
  QTest::newRow("DataParallel on 2 devices") << 2;
}

void TestDecisionView::fitGridEqualsPredict() {
  // xor-like data, a small MLP, 4 epochs of 12 batches (the last one partial). The grid taken
  // mid-epoch (epoch 2, after batch 5) must equal predict() called by another callback at the
  // same moment (predict() inside fit() works with either executor), and the last epoch's grid
  // predict() after fit().
  QFETCH(int, devices);
  set_random_seed(3);
  Rng rng(9);
  Dataset d;
  d.x.resize(100, 2);
  d.y.resize(100, 1);
  for (Index i = 0; i < 100; ++i) {
    d.x(i, 0) = float(rng.uniform(-1.0, 1.0));
    d.x(i, 1) = float(rng.uniform(-1.0, 1.0));
    d.y(i, 0) = d.x(i, 0) * d.x(i, 1) >= 0 ? 1.0f : 0.0f;
  }
  auto model = makeModel(2, {dense(8, "tanh"), dense(1, "sigmoid")}, "binary_crossentropy");
  if (devices > 0) use_data_parallel(*model, devices);
  DecisionGrid grid(d, 80,
                    DecisionGridOptions{
                        .resolution = 24, .everyBatches = 6, .maxPerSecond = 1e9, .maxShare = 1e9});
  std::vector<DecisionGridResult> got;
  grid.setSink([&](const DecisionGridResult& r) { got.push_back(r); });

  // Calls predict() on the grid's points after batch 5 of epoch 2 (it runs after the grid).
  struct Probe : Callback {
    Matrix points, predicted;
    int epoch = 0;
    void on_epoch_begin(int e, const Logs&) override { epoch = e; }
    void on_train_batch_end(int batch, const Logs&) override {
      if (epoch == 2 && batch == 5) predicted = model_->predict(points, 64);
    }
  } probe;
  DecisionGridResult layout = gridOnce(*model, d, {.resolution = 24}).front();
  probe.points = gridPoints(layout);

  const auto before = gridOnce(*model, d, {.resolution = 24}).front().values;
  model->fit(d.x, d.y,
             FitOptions{.epochs = 4, .batch_size = 7, .validation_split = 0.2, .verbose = 0},
             RunOptions{.callbacks = {&grid, &probe}});
  // 12 batches an epoch (80 rows / 7): after batches 6 and 12 (the last: its end) each epoch.
  QCOMPARE(got.size(), size_t(8));
  const auto mid = std::find_if(got.begin(), got.end(), [](const DecisionGridResult& r) {
    return r.epoch == 2 && r.batch == 5;
  });
  QVERIFY(mid != got.end());
  QCOMPARE(probe.predicted.rows(), Index(24 * 24));
  double worst = 0.0, moved = 0.0;
  for (size_t i = 0; i < mid->values.size(); ++i)
    worst = std::max(worst, double(std::abs(probe.predicted(Index(i), 0) - mid->values[i])));
  QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));

  const DecisionGridResult& last = got.back();
  QCOMPARE(last.epoch, 3);
  QCOMPARE(last.batch, -1);
  const Matrix after = model->predict(gridPoints(last), 100);
  worst = 0.0;
  for (size_t i = 0; i < last.values.size(); ++i) {
    worst = std::max(worst, double(std::abs(after(Index(i), 0) - last.values[i])));
    moved = std::max(moved, double(std::abs(before[i] - last.values[i])));
  }
  QVERIFY2(worst < 1e-6, qPrintable(QString::number(worst)));
  QVERIFY2(moved > 1e-3, "training changed the grid");  // the grid is not the initial weights'

  // DataParallel trains as one device does (to float32 rounding), so every grid, mid-epoch ones
  // included, equals the one-device run's (the first row): stale weights would not.
  if (devices == 0) {
    m_oneDevice = got;
  } else {
    QCOMPARE(m_oneDevice.size(), got.size());
    for (size_t k = 0; k < got.size(); ++k) {
      QCOMPARE(got[k].batch, m_oneDevice[k].batch);
      worst = 0.0;
      for (size_t i = 0; i < got[k].values.size(); ++i)
        worst = std::max(worst, double(std::abs(got[k].values[i] - m_oneDevice[k].values[i])));
      QVERIFY2(worst < 1e-4, qPrintable(QStringLiteral("grid %1: %2").arg(k).arg(worst)));
    }
  }
}

void TestDecisionView::viewDrawsAtOddSizes() {
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  const DecisionGridResult g = gridOnce(*model, corners()).front();
  // Inside a parent without a layout the view takes any size (a window keeps its layout's
  // minimum).
  QWidget parent;
  parent.resize(600, 600);
  auto* view = new DecisionView(&parent);
  for (const QSize size : {QSize(0, 0), QSize(50, 50), QSize(1, 400), QSize(400, 1)}) {
    view->setGeometry(QRect(QPoint(0, 0), size));
    QCOMPARE(view->size(), size);
    view->clear();
    view->grab();  // the empty state
    view->setGrid(g);
    QCOMPARE(view->grab().size(), size);
    QVERIFY(view->plotRect().isEmpty());  // no room for a plot at any of these sizes
  }
  view->setGeometry(0, 0, 300, 300);
  view->grab();
  QVERIFY(!view->plotRect().isEmpty());
}

void TestDecisionView::viewHeatmapColours() {
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  model->variables()[0].value << 1.0f, -1.0f;
  model->variables()[1].value << 0.0f;
  const DecisionGridResult g = gridOnce(*model, corners()).front();
  DecisionView view;
  view.resize(500, 500);
  view.setGrid(g);
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1"));
  const QImage image = view.grab().toImage();
  const QRect area = view.plotRect();
  QVERIFY(area.width() > 300 && area.height() > 300);
  QCOMPARE(area.width(), area.height());  // a square plane for equal ranges
  // The documented ramp: white blended toward orange (0xf59322) / blue (0x0877bd) by
  // 0.8 * |2p - 1|, with p the corner cells' sigmoid(-/+2.3625) = 0.0860 / 0.9140.
  const auto expected = [](QColor end, double p) {
    const double f = 0.8 * std::abs(2 * p - 1);
    return QColor(int(std::lround(255 + (end.red() - 255) * f)),
                  int(std::lround(255 + (end.green() - 255) * f)),
                  int(std::lround(255 + (end.blue() - 255) * f)));
  };
  const QRgb topLeft = image.pixel(area.left() + 3, area.top() + 3);
  const QRgb bottomRight = image.pixel(area.right() - 3, area.bottom() - 3);
  const QRgb centre = image.pixel(area.center());
  QVERIFY2(colourDistance(topLeft, expected(QColor(0xf5, 0x93, 0x22), g.values.front())) <= 6,
           qPrintable(QColor(topLeft).name()));
  QVERIFY2(colourDistance(bottomRight, expected(QColor(0x08, 0x77, 0xbd), g.values.back())) <= 6,
           qPrintable(QColor(bottomRight).name()));
  QVERIFY2(colourDistance(centre, QColor(Qt::white)) <= 12, qPrintable(QColor(centre).name()));
  // The label-1 point (1, -1) sits in the bottom-right, drawn in class 1's blue.
  const double x = area.left() + (1.0 + 1.2) / 2.4 * area.width();
  const double y = area.top() + (1.2 + 1.0) / 2.4 * area.height();
  QVERIFY(colourDistance(image.pixel(QPoint(int(x), int(y))), DecisionView::classColor(1)) <= 30);
}

void TestDecisionView::viewMessagesAndValidation() {
  DecisionView view;
  view.resize(400, 400);
  QVERIFY(view.message().startsWith("Run the experiment"));
  Dataset d = corners();
  view.setData(d.x, d.y, 3);
  QVERIFY(view.message().contains("after its first epoch"));
  QCOMPARE(view.visiblePointCount(), 0);  // no grid yet
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  DecisionGridResult g = gridOnce(*model, d).front();
  g.points.reset();  // keep the view's own points (3 training rows, 1 validation row)
  g.epoch = 2;
  g.batch = 4;
  view.setGrid(g);
  QCOMPARE(view.message(), QString());
  QCOMPARE(view.caption(), QStringLiteral("Epoch 3 · batch 5"));
  QVERIFY(!view.showValidation());
  QCOMPARE(view.visiblePointCount(), 3);
  view.findChild<QCheckBox*>("showValidation")->click();
  QVERIFY(view.showValidation());
  QCOMPARE(view.visiblePointCount(), 4);
  view.clear();
  QVERIFY(view.message().startsWith("Run the experiment"));
  // Data without validation rows: the option is off (its setting kept) and says why.
  auto* box = view.findChild<QCheckBox*>("showValidation");
  QVERIFY(box->isEnabled());
  view.setData(d.x, d.y, d.x.rows());
  QVERIFY(!box->isEnabled());
  QVERIFY(box->isChecked());
  QVERIFY(box->toolTip().contains("no validation rows"));
  view.setData(d.x, d.y, 3);
  QVERIFY(box->isEnabled());
}

void TestDecisionView::viewNaNPredictions() {
  // A diverged model: its NaN cells are grey (not the 0.5 white of an unsure model), and the
  // caption says so.
  auto model = makeModel(2, {dense(1, "sigmoid")}, "binary_crossentropy");
  model->variables()[0].value << 1.0f, -1.0f;
  model->variables()[1].value << 0.0f;
  DecisionGridResult g = gridOnce(*model, corners()).front();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const size_t n = g.values.size();
  for (size_t i = 0; i < n / 4; ++i) g.values[i] = nan;  // the top quarter of the plane
  DecisionView view;
  view.resize(500, 500);
  view.setGrid(g);
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1 · NaN in 25% (grey)"));
  QImage image = view.grab().toImage();
  const QRect area = view.plotRect();
  const QRgb grey = image.pixel(area.center().x(), area.top() + 3);
  QVERIFY2(colourDistance(grey, QColor(0xb4, 0xb4, 0xb4)) <= 8, qPrintable(QColor(grey).name()));
  QVERIFY(colourDistance(image.pixel(area.center()), QColor(Qt::white)) <= 12);
  // Almost all NaN is not called all of it.
  std::fill(g.values.begin(), g.values.end() - 1, nan);
  view.setGrid(g);
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1 · NaN in >99% (grey)"));
  std::fill(g.values.begin(), g.values.end(), nan);
  view.setGrid(g);
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1 · every prediction is NaN"));
  image = view.grab().toImage();
  QVERIFY(colourDistance(image.pixel(view.plotRect().center()), QColor(0xb4, 0xb4, 0xb4)) <= 8);
  // A 1-feature regression curve with a NaN stretch breaks there instead of dropping to 0; its
  // axis follows the finite values.
  DecisionGridResult curve = lineGrid(10.5f);  // targets 10.4, 11.6, 12.4
  for (int c = 80; c < 120; ++c) curve.values[size_t(c)] = nan;
  DecisionView curveView;
  curveView.resize(500, 400);
  curveView.setGrid(curve);
  QCOMPARE(curveView.caption(), QStringLiteral("Epoch 1 · NaN in 20% (grey)"));
  image = curveView.grab().toImage();
  const QRect plot = curveView.plotRect();
  // Under the NaN stretch (x near 0.5) no curve is drawn anywhere in the column; the y range
  // holds 10..13, so a curve dropped to 0 would be off the plot, but the path must not join the
  // two finite ends either: the column at x = 0.5 stays free of the curve's ink.
  const int column = plot.left() + plot.width() / 2;
  int ink = 0;
  for (int y = plot.top() + 2; y < plot.bottom() - 2; ++y)
    if (colourDistance(image.pixel(column, y), DecisionView::classColor(0)) <= 40) ++ink;
  QCOMPARE(ink, 0);
  // Nor does it drop toward 0 at the stretch's ends: in the plot's lowest fifth (values below
  // ~10.7, which the finite curve reaches only left of x = 0.1) no column from x = 0.36 to 0.65
  // has its ink.
  const auto columnAt = [&](double x) {
    return plot.left() + static_cast<int>((x + 0.1) / 1.2 * plot.width());
  };
  int low = 0;
  for (int c = columnAt(0.36); c <= columnAt(0.65); ++c)
    for (int y = plot.bottom() - plot.height() / 5; y < plot.bottom() - 1; ++y)
      if (colourDistance(image.pixel(c, y), DecisionView::classColor(0)) <= 40) ++low;
  QCOMPARE(low, 0);
  const int finiteColumn = plot.left() + plot.width() / 8;
  ink = 0;
  for (int y = plot.top() + 2; y < plot.bottom() - 2; ++y)
    if (colourDistance(image.pixel(finiteColumn, y), DecisionView::classColor(0)) <= 40) ++ink;
  QVERIFY(ink > 0);
}

void TestDecisionView::trainedPictures() {
  // xor (binary), blobs (3 classes), sine (a 1-feature regression), plane (a 2-feature
  // regression) and a 1-feature step (binary) trained for real: the picture agrees with the data
  // (the grid's cell under each training point predicts its label, or the prediction stays near
  // the generator's noiseless target: sin x, (x + y) / 10).
  struct Case {
    const char* generator;
    std::vector<LayerSpec> layers;
    const char* loss;
    int epochs;
  };
  const Case cases[] = {
      {"xor", {dense(8, "tanh"), dense(8, "tanh"), dense(1, "sigmoid")}, "binary_crossentropy", 40},
      {"blobs", {dense(8, "relu"), dense(3, "softmax")}, "sparse_categorical_crossentropy", 40},
      {"sine",
       {dense(16, "tanh"), dense(16, "tanh"), dense(1, "linear")},
       "mean_squared_error",
       150},
      {"plane", {dense(1, "linear")}, "mean_squared_error", 40},
      {"step", {dense(1, "sigmoid")}, "binary_crossentropy", 60},
  };
  for (const Case& c : cases) {
    set_random_seed(7);
    Dataset d;
    if (QByteArray(c.generator) == "step") {  // label 1 where x > 0.5, x uniform in [-3, 3]
      Rng rng(4);
      d.x.resize(300, 1);
      d.y.resize(300, 1);
      for (Index i = 0; i < 300; ++i) {
        d.x(i, 0) = float(rng.uniform(-3.0, 3.0));
        d.y(i, 0) = d.x(i, 0) > 0.5f ? 1.0f : 0.0f;
      }
    } else {
      DataSpec spec;
      spec.generator = c.generator;
      spec.samples = 300;
      spec.noise = 0.1;
      spec.features = 2;
      spec.classes = 3;
      d = generate_dataset(spec);
    }
    const Index train = 240;
    auto model = makeModel(d.x.cols(), c.layers, c.loss, false, 0.03);
    DecisionGrid grid(d, train);
    DecisionGridResult last;
    grid.setSink([&](const DecisionGridResult& r) { last = r; });
    model->fit(
        d.x, d.y,
        FitOptions{.epochs = c.epochs, .batch_size = 16, .validation_split = 0.2, .verbose = 0},
        RunOptions{.callbacks = {&grid}});
    QCOMPARE(last.epoch, c.epochs - 1);
    int agree = 0;
    for (Index i = 0; i < train; ++i) {
      const int col = std::clamp(int((d.x(i, 0) - last.xMin) / (last.xMax - last.xMin) * last.cols),
                                 0, last.cols - 1);
      int row = 0;
      if (last.features == 2)
        row = std::clamp(int((last.yMax - d.x(i, 1)) / (last.yMax - last.yMin) * last.rows), 0,
                         last.rows - 1);
      const float v = last.values[size_t(row * last.cols + col)];
      if (last.kind == DecisionKind::kBinary)
        agree += (v >= 0.5f) == (d.y(i, 0) >= 0.5f);
      else if (last.kind == DecisionKind::kMulticlass)
        agree += int(v) == int(std::lround(d.y(i, 0)));
      else if (last.features == 1)
        agree += std::abs(v - std::sin(d.x(i, 0))) < 0.25;
      else
        agree += std::abs(v - (d.x(i, 0) + d.x(i, 1)) / 10.0) < 0.1;
    }
    QVERIFY2(
        agree >= 0.85 * train,
        qPrintable(QStringLiteral("%1: %2 of %3 agree").arg(c.generator).arg(agree).arg(train)));
    DecisionView view;
    view.resize(500, 500);
    view.setShowValidation(true);
    view.setGrid(last);
    screenshot(view, QStringLiteral("F_decision_%1.png").arg(c.generator));
  }
  // The narrow dock and the message of a model with too many features, to look at.
  DecisionView narrow;
  narrow.resize(360, 420);
  DecisionGridResult reason;
  reason.reason = planDecisionGrid(4, 1, LossSpec{"binary_crossentropy"}).reason;
  narrow.setGrid(reason);
  screenshot(narrow, QStringLiteral("F_decision_reason.png"));
}

QTEST_MAIN(TestDecisionView)
#include "tst_decision_view.moc"
