// DataParallel on N threaded devices equals one device: the same epoch logs and final weights to
// float32 rounding for every optimizer, with uneven shards (batches that do not divide, a partial
// last batch, devices with no rows), replicas bitwise identical, and the same run twice bitwise
// identical.
#include <QTest>

#include "core/distribution/data_parallel_executor.h"
#include "core/distribution/distribution.h"
#include "core/error.h"
#include "core/random.h"
#include "core/training/sequential.h"

using namespace fitbench;

namespace {

ModelSpec mlp() {
  ModelSpec spec;
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {5};
  LayerSpec h;
  h.class_name = "Dense";
  h.units = 8;
  h.activation = "relu";
  h.kernel_regularizer = {0.0, 1e-3};
  LayerSpec d;
  d.class_name = "Dropout";
  d.rate = 0.1;
  LayerSpec out;
  out.class_name = "Dense";
  out.units = 3;
  out.activation = "softmax";
  spec.layers = {in, h, d, out};
  return spec;
}

void make_data(Matrix& x, Matrix& y) {
  Rng rng(5);
  x.resize(61, 5);
  y.resize(61, 1);
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < 5; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = static_cast<float>(x(i, 0) > 0.5 ? 2 : x(i, 1) > 0 ? 1 : 0);
  }
}

struct Run {
  History history;
  std::vector<NamedWeight> weights;
};

Run train(const OptimizerSpec& opt, int devices, bool shuffle = true) {
  set_random_seed(11);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = opt;
  c.loss.name = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  m.compile(c);
  if (devices > 0) use_data_parallel(m, devices);
  // batch 10: shards of 10 on 3 devices are 4/3/3; on 8 devices 2/2/1/1/1/1/1/1; the last batch
  // of 1 row (61 = 6 x 10 + 1) leaves all but one device without rows.
  Run r;
  r.history =
      m.fit(x, y, FitOptions{.epochs = 3, .batch_size = 10, .shuffle = shuffle, .verbose = 0});
  r.weights = m.get_weights();
  return r;
}

double max_rel_diff(const Run& a, const Run& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.weights.size(); ++i)
    for (size_t j = 0; j < a.weights[i].values.size(); ++j) {
      const double u = a.weights[i].values[j], v = b.weights[i].values[j];
      worst = std::max(worst, std::abs(u - v) / std::max(1.0, std::abs(v)));
    }
  for (const auto& [k, vals] : a.history.history)
    for (size_t e = 0; e < vals.size(); ++e) {
      const double v = b.history.history.at(k)[e];
      worst = std::max(worst, std::abs(vals[e] - v) / std::max(1.0, std::abs(v)));
    }
  return worst;
}

OptimizerSpec opt(const std::string& name, double lr, double momentum = 0.0,
                  bool nesterov = false) {
  OptimizerSpec o;
  o.class_name = name;
  o.learning_rate = lr;
  o.momentum = momentum;
  o.nesterov = nesterov;
  return o;
}

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
 private slots:
  void equals_one_device_data();
  void equals_one_device();
  void shards();
  void replicas_stay_identical();
  void deterministic();
  void device_error_propagates();
};

void TestDataParallel::equals_one_device_data() {
  QTest::addColumn<QString>("optimizer");
  QTest::addColumn<int>("devices");
  const char* names[] = {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"};
  for (const char* n : names)
    for (int d : {1, 2, 3, 4, 8})
      QTest::newRow(qPrintable(QString("%1/%2").arg(n).arg(d))) << QString(n) << d;
}

void TestDataParallel::equals_one_device() {
  QFETCH(QString, optimizer);
  QFETCH(int, devices);
  OptimizerSpec o;
  if (optimizer == "sgd") o = opt("SGD", 0.1);
  if (optimizer == "momentum") o = opt("SGD", 0.05, 0.9);
  if (optimizer == "nesterov") o = opt("SGD", 0.05, 0.9, true);
  if (optimizer == "adam") o = opt("Adam", 0.01);
  if (optimizer == "adamw") o = opt("AdamW", 0.01);
  if (optimizer == "rmsprop") {
    o = opt("RMSprop", 0.005, 0.5);
    o.centered = true;
  }
  if (optimizer == "adagrad") o = opt("Adagrad", 0.1);
  o.global_clipnorm = 5.0;
  const Run one = train(o, 0);
  const Run many = train(o, devices);
  const double diff = max_rel_diff(many, one);
  QVERIFY2(diff < 1e-5, qPrintable(QString("max relative difference %1").arg(diff)));
  // The trajectory really moved (the comparison is not between two untrained models).
  QVERIFY(std::abs(one.history.history.at("loss").front() - one.history.history.at("loss").back()) >
          1e-3);
}

void TestDataParallel::shards() {
  std::vector<Index> off(3), size(3);
  DataParallelExecutor::shard_rows(10, 3, off, size);
  QCOMPARE(size, (std::vector<Index>{4, 3, 3}));
  QCOMPARE(off, (std::vector<Index>{0, 4, 7}));
  off.resize(8);
  size.resize(8);
  DataParallelExecutor::shard_rows(1, 8, off, size);
  QCOMPARE(size, (std::vector<Index>{1, 0, 0, 0, 0, 0, 0, 0}));
}

void TestDataParallel::replicas_stay_identical() {
  set_random_seed(3);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = opt("Adam", 0.01);
  c.loss.name = "sparse_categorical_crossentropy";
  m.compile(c);
  m.fit(x.topRows(1), y.topRows(1), FitOptions{.epochs = 1, .verbose = 0});  // builds optimizer
  ExecutorContext ctx;
  ctx.graph.network = &m.network();
  auto loss = make_loss(c.loss);
  ctx.graph.loss = loss.get();
  ctx.variables = &m.variables();
  ctx.optimizer = m.optimizer();
  DataParallelExecutor exec(ctx, 4);
  exec.prepare(16);
  StepTotals totals;
  totals.reset(0);
  for (int step = 0; step < 12; ++step) {
    const Index start = (step * 16) % 45;
    exec.train_step(x.middleRows(start, 16), y.middleRows(start, 16), step, totals);
  }
  const auto ref = exec.replica_values(0);
  for (int d = 1; d < 4; ++d) {
    const auto r = exec.replica_values(d);
    for (size_t v = 0; v < ref.size(); ++v) QVERIFY(*r[v] == *ref[v]);
  }
}

void TestDataParallel::deterministic() {
  const Run a = train(opt("Adam", 0.01), 3), b = train(opt("Adam", 0.01), 3);
  QVERIFY(a.history.history == b.history.history);
  for (size_t i = 0; i < a.weights.size(); ++i) QVERIFY(a.weights[i].values == b.weights[i].values);
}

void TestDataParallel::device_error_propagates() {
  // A sparse label out of range on one device's shard: the error reaches fit()'s caller, every
  // device is released, and the executor can be used again.
  set_random_seed(3);
  Matrix x, y;
  make_data(x, y);
  y(13, 0) = 7.0f;
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = opt("SGD", 0.1);
  c.loss.name = "sparse_categorical_crossentropy";
  m.compile(c);
  use_data_parallel(m, 4);
  QVERIFY_THROWS_EXCEPTION(InputError,
                           m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 20, .verbose = 0}));
  y(13, 0) = 1.0f;
  const History h = m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 20, .verbose = 0});
  QCOMPARE(h.epoch.size(), size_t(1));
}

QTEST_GUILESS_MAIN(TestDataParallel)
#include "tst_data_parallel.moc"
