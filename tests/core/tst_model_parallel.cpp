// ModelParallel on threaded devices equals one device: the same epoch logs, evaluate() and
// predict() results and final weights to float32 rounding (1e-5 relative), on 1x2, 2x2 and 2x1
// meshes, with kernels sharded by columns and by rows, sharded and replicated biases, every
// optimizer, norm clipping, dropout, a regularizer and uneven batches; each device holds only its
// slice; replicas along the batch axis stay bitwise identical; layout errors are InputErrors.
#include <QTest>

#include "core/distribution/model_parallel_executor.h"
#include "core/error.h"
#include "core/random.h"
#include "core/training/sequential.h"

using namespace fitbench;

namespace {

LayerSpec dense(int64_t units, const std::string& activation) {
  LayerSpec l;
  l.class_name = "Dense";
  l.units = units;
  l.activation = activation;
  return l;
}

// 6 -> dense(8, relu, L2) -> dropout -> dense_1(4, tanh) -> dense_2(4, softmax)
ModelSpec mlp() {
  ModelSpec spec;
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {6};
  LayerSpec h = dense(8, "relu");
  h.kernel_regularizer = {0.0, 1e-3};
  LayerSpec d;
  d.class_name = "Dropout";
  d.rate = 0.1;
  spec.layers = {in, h, d, dense(4, "tanh"), dense(4, "softmax")};
  return spec;
}

void make_data(Matrix& x, Matrix& y) {
  Rng rng(5);
  x.resize(61, 6);
  y.resize(61, 1);
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < 6; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = static_cast<float>(x(i, 0) > 0.5 ? 3 : x(i, 1) > 0 ? 2 : x(i, 2) > 0 ? 1 : 0);
  }
}

using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Layouts by name. "columns": Keras's documented choice (kernels and biases by units).
// "rows": kernels by input rows. "mixed": one of each, a replicated bias under a column-sharded
// kernel and a replicated layer.
Entries layout(const std::string& name) {
  if (name == "columns") return {{"kernel", {"", "model"}}, {"bias", {"model"}}};
  if (name == "rows")
    return {{"dense/kernel", {"model", ""}},
            {"dense_1/kernel", {"model"}},
            {"dense_2/kernel", {"model", ""}},
            {"dense/bias", {"model"}}};
  if (name == "mixed") return {{"dense/kernel", {"", "model"}}, {"dense_1/kernel", {"model", ""}}};
  return {};
}

DistributionSpec spec_for(int batch, int model, const std::string& layout_name) {
  DistributionSpec s;
  s.class_name = "ModelParallel";
  s.mesh_shape = {batch, model};
  s.axis_names = {"batch", "model"};
  s.layout_map = layout(layout_name);
  return s;
}

struct Run {
  History history;
  std::vector<NamedWeight> weights;
  Logs evaluated;
  Matrix predicted;
};

OptimizerSpec opt(const std::string& name, double lr) {
  OptimizerSpec o;
  o.class_name = name;
  o.learning_rate = lr;
  if (name == "SGD+momentum") {
    o.class_name = "SGD";
    o.momentum = 0.9;
    o.nesterov = true;
  }
  if (name == "Adam+clipnorm") {
    o.class_name = "Adam";
    o.clipnorm = 0.05;
  }
  if (name == "SGD+global_clipnorm") {
    o.class_name = "SGD";
    o.global_clipnorm = 0.1;
  }
  return o;
}

// batch 10 on 2 batch devices: shards 5/5; the last batch (61 = 6 x 10 + 1) has 1 row, so the
// second batch group gets none.
Run train(const OptimizerSpec& o, const DistributionSpec* dist, int epochs = 3, int fits = 1) {
  set_random_seed(11);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = o;
  c.loss.name = "sparse_categorical_crossentropy";
  c.metrics = {"accuracy"};
  m.compile(c);
  if (dist) use_model_parallel(m, *dist, dist->mesh_shape[0] * dist->mesh_shape[1]);
  Run r;
  for (int f = 0; f < fits; ++f)
    r.history = m.fit(x, y,
                      FitOptions{.epochs = epochs,
                                 .batch_size = 10,
                                 .validation_split = 0.0,
                                 .shuffle = true,
                                 .verbose = 0});
  r.weights = m.get_weights();
  r.evaluated = m.evaluate(x, y, 7);
  r.predicted = m.predict(x, 9);
  return r;
}

double rel(double u, double v) { return std::abs(u - v) / std::max(1.0, std::abs(v)); }

double max_rel_diff(const Run& a, const Run& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.weights.size(); ++i)
    for (size_t j = 0; j < a.weights[i].values.size(); ++j)
      worst = std::max(worst, rel(a.weights[i].values[j], b.weights[i].values[j]));
  for (const auto& [k, vals] : a.history.history)
    for (size_t e = 0; e < vals.size(); ++e)
      worst = std::max(worst, rel(vals[e], b.history.history.at(k)[e]));
  for (const auto& [k, v] : a.evaluated) worst = std::max(worst, rel(v, b.evaluated.at(k)));
  for (Index i = 0; i < a.predicted.size(); ++i)
    worst = std::max(worst, rel(a.predicted.data()[i], b.predicted.data()[i]));
  return worst;
}

}  // namespace

class TestModelParallel : public QObject {
  Q_OBJECT
 private slots:
  void equals_one_device_data();
  void equals_one_device();
  void consecutive_fits_continue_the_optimizer();
  void devices_hold_slices();
  void deterministic();
  void plan();
  void layout_errors();
  void optimizer_state_cannot_be_taken_over();
};

void TestModelParallel::equals_one_device_data() {
  QTest::addColumn<QString>("optimizer");
  QTest::addColumn<int>("batch");
  QTest::addColumn<int>("model");
  QTest::addColumn<QString>("layout");
  const char* optimizers[] = {"SGD",     "SGD+momentum", "Adam",          "AdamW",
                              "RMSprop", "Adagrad",      "Adam+clipnorm", "SGD+global_clipnorm"};
  const std::pair<int, int> meshes[] = {{1, 2}, {2, 2}, {2, 1}};
  for (const char* o : optimizers)
    for (auto [b, m] : meshes)
      for (const char* l : {"columns", "rows", "mixed"}) {
        if (m == 1 && QString(l) != "columns") continue;  // a model axis of 1 shards nothing
        QTest::newRow(qPrintable(QString("%1/%2x%3/%4").arg(o).arg(b).arg(m).arg(l)))
            << QString(o) << b << m << QString(l);
      }
}

void TestModelParallel::equals_one_device() {
  QFETCH(QString, optimizer);
  QFETCH(int, batch);
  QFETCH(int, model);
  QFETCH(QString, layout);
  const OptimizerSpec o = opt(optimizer.toStdString(), optimizer.startsWith("SGD") ? 0.1 : 0.01);
  const DistributionSpec dist = spec_for(batch, model, layout.toStdString());
  const Run one = train(o, nullptr);
  const Run mp = train(o, &dist);
  const double diff = max_rel_diff(mp, one);
  QVERIFY2(diff < 1e-5, qPrintable(QString("max relative difference %1").arg(diff)));
  // The weights moved: a test that compares two untouched models could not fail.
  set_random_seed(11);
  Sequential fresh(mlp());
  QVERIFY(std::abs(fresh.get_weights()[0].values[0] - one.weights[0].values[0]) > 1e-4);
}

void TestModelParallel::consecutive_fits_continue_the_optimizer() {
  // Adam's moments and step count carry over from the first fit() to the second, as on one
  // device (restarting them would change the second fit's updates far beyond rounding).
  const OptimizerSpec o = opt("Adam", 0.01);
  const DistributionSpec dist = spec_for(2, 2, "columns");
  const Run one = train(o, nullptr, 2, 2);
  const Run mp = train(o, &dist, 2, 2);
  QVERIFY2(max_rel_diff(mp, one) < 1e-5, "second fit differs");
}

void TestModelParallel::devices_hold_slices() {
  set_random_seed(3);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = opt("SGD", 0.1);
  c.loss.name = "sparse_categorical_crossentropy";
  m.compile(c);
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 16, .verbose = 0});  // build the optimizer
  // Executors are made by fit(); build one directly to look inside after a few steps.
  DistributionSpec dist = spec_for(2, 2, "mixed");
  const ModelParallelPlan plan = make_model_parallel_plan(m.network(), dist, 4);
  ExecutorContext ctx;
  ctx.graph.network = &m.network();
  CompileOptions co = m.compile_options();
  auto loss = make_loss(co.loss);
  ctx.graph.loss = loss.get();
  ctx.variables = &m.variables();
  // A fresh optimizer whose iterations are 0, as the model's would be before its first step.
  auto model_opt = make_optimizer(co.optimizer, "compile.optimizer");
  ctx.optimizer = model_opt.get();
  ModelParallelExecutor exec(ctx, plan, co.optimizer, std::make_shared<ModelParallelOptimizers>());
  exec.prepare(16);
  exec.pull_from_model();
  StepTotals totals;
  totals.reset(0);
  for (uint64_t s = 0; s < 3; ++s) exec.train_step(x.topRows(16), y.topRows(16), s, totals);
  // Mesh (batch, model) = (2, 2): device index = b * 2 + m. dense/kernel (6, 8) is split by
  // columns: device m holds columns [4m, 4m + 4); dense_1/kernel (8, 4) by rows.
  const auto& vars = m.variables();
  for (int d = 0; d < 4; ++d) {
    const int mi = d % 2;
    auto v = exec.device_values(d);
    QCOMPARE(v[0]->rows(), Index(6));
    QCOMPARE(v[0]->cols(), Index(4));
    QVERIFY(*v[0] == vars[0].value.middleCols(4 * mi, 4));
    QCOMPARE(v[1]->cols(), Index(8));  // dense/bias replicated
    QCOMPARE(v[2]->rows(), Index(4));
    QVERIFY(*v[2] == vars[2].value.middleRows(4 * mi, 4));
    QCOMPARE(v[4]->rows(), Index(4));  // dense_2/kernel replicated
    QCOMPARE(v[4]->cols(), Index(4));
  }
  // Batch replicas (device 0 and 2, 1 and 3) are bitwise identical.
  for (int mi = 0; mi < 2; ++mi) {
    auto a = exec.device_values(mi), b = exec.device_values(2 + mi);
    for (size_t i = 0; i < a.size(); ++i) QVERIFY(*a[i] == *b[i]);
  }
  QCOMPARE(exec.devices(), 4);
  QCOMPARE(totals.samples, 48.0);  // each batch counted once, not once per model device
}

void TestModelParallel::deterministic() {
  const DistributionSpec dist = spec_for(2, 2, "rows");
  const Run a = train(opt("Adam", 0.01), &dist);
  const Run b = train(opt("Adam", 0.01), &dist);
  for (size_t i = 0; i < a.weights.size(); ++i) QVERIFY(a.weights[i].values == b.weights[i].values);
}

void TestModelParallel::plan() {
  Sequential m(mlp());
  // batch_dim_name "model" makes axis 1 the batch axis and "data" the model axis.
  DistributionSpec s;
  s.class_name = "ModelParallel";
  s.mesh_shape = {2, 1};
  s.axis_names = {"data", "model"};
  s.batch_dim_name = "model";
  auto p = make_model_parallel_plan(m.network(), s, 2);
  QCOMPARE(p.batch, 1);
  QCOMPARE(p.model, 2);
  QCOMPARE(p.device, (std::vector<int>{0, 1}));
  s.mesh_shape = {3, 2};
  s.batch_dim_name = "model";  // batch axis is axis 1 (size 2), model axis is "data" (3)
  p = make_model_parallel_plan(m.network(), s, 6);
  QCOMPARE(p.batch, 2);
  QCOMPARE(p.model, 3);
  // Flat mesh index of (data i, model j) is i * 2 + j; b = j, m = i.
  QCOMPARE(p.device, (std::vector<int>{0, 2, 4, 1, 3, 5}));
  QVERIFY(p.variables ==
          std::vector<ModelParallelPlan::Split>(6, ModelParallelPlan::Split::kReplicated));
  s = spec_for(1, 2, "mixed");
  p = make_model_parallel_plan(m.network(), s, 2);
  using S = ModelParallelPlan::Split;
  QVERIFY(p.variables == (std::vector<S>{S::kColumns, S::kReplicated, S::kRows, S::kReplicated,
                                         S::kReplicated, S::kReplicated}));
}

void TestModelParallel::layout_errors() {
  Sequential m(mlp());
  // dense_2/kernel (4, 4) by 3 devices: not divisible; the error names the variable and axis.
  DistributionSpec s = spec_for(1, 3, "");
  s.layout_map = {{"dense_2/kernel", {"", "model"}}};
  try {
    use_model_parallel(m, s, 3);
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("distribution.layout_map[\"dense_2/kernel\"][1]"));
    QVERIFY(e.message().find("sequential/dense_2/kernel has shape (4, 4)") != std::string::npos);
  }
  // The mesh needs 4 devices; 2 are given.
  try {
    use_model_parallel(m, spec_for(2, 2, "columns"), 2);
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("distribution.mesh.shape"));
  }
  // An unbuilt model is checked when fit() builds it.
  ModelSpec no_input = mlp();
  no_input.layers.erase(no_input.layers.begin());
  Sequential lazy(no_input);
  CompileOptions c;
  c.loss.name = "sparse_categorical_crossentropy";
  lazy.compile(c);
  use_model_parallel(lazy, s, 3);
  Matrix x, y;
  make_data(x, y);
  QVERIFY_THROWS_EXCEPTION(InputError,
                           lazy.fit(x, y, FitOptions{.epochs = 1, .batch_size = 8, .verbose = 0}));
}

void TestModelParallel::optimizer_state_cannot_be_taken_over() {
  set_random_seed(1);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  CompileOptions c;
  c.optimizer = opt("Adam", 0.01);
  c.loss.name = "sparse_categorical_crossentropy";
  m.compile(c);
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 32, .verbose = 0});  // one device
  use_model_parallel(m, spec_for(1, 2, "columns"), 2);
  try {
    m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 32, .verbose = 0});
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("distribution"));
  }
  // evaluate() and predict() need no optimizer state and work.
  const Logs logs = m.evaluate(x, y, 16);
  QVERIFY(logs.count("loss"));
}

QTEST_GUILESS_MAIN(TestModelParallel)
#include "tst_model_parallel.moc"
