// The batch split view shows the engine's split: the shard rows of a real DataParallel fit (3
// devices, 25 samples, batch 10) after showStep, the planned full and partial batches before a
// run, ModelParallel's slices per device equal to what a ModelParallelExecutor holds on several
// meshes (the placement rule copied from make_model_parallel_plan), a replicated bias shown as
// replicated, an invalid layout's errors, and the glossary's terms in its tooltips.
#include <QSet>
#include <QTest>
#include <functional>
#include <numeric>

#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/layout_map.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "tests/core/fixtures.h"
#include "ui/common/glossary.h"
#include "ui/rehearsal/batch_split_view.h"

using namespace fitbench;

namespace {

using Rows = std::vector<int64_t>;

std::vector<std::string> cpuNames(int n) {
  std::vector<std::string> out;
  for (int d = 0; d < n; ++d) out.push_back("cpu:" + std::to_string(d));
  return out;
}

// Keeps every step's trace.
struct TraceKeeper : Callback {
  std::vector<StepTrace> steps;
  void on_step_trace(const StepTrace& t) override { steps.push_back(t); }
};

// The step traces of a real fit(): a binary classifier `spec` on `samples` rows of 4 features,
// distributed by `distribute`.
std::vector<StepTrace> fitTraces(const ModelSpec& spec, Index samples,
                                 const std::function<void(Sequential&)>& distribute,
                                 const FitOptions& fit) {
  set_random_seed(7);
  Matrix x, y;
  fixtures::make_binary_data(samples, 4, x, y);
  Sequential model(spec);
  fixtures::compile_binary_sgd(model);
  distribute(model);
  TraceKeeper keeper;
  RunOptions run;
  run.callbacks = {&keeper};
  model.fit(x, y, fit, run);
  return keeper.steps;
}

BatchSplitPlan dataParallelPlan(int devices, int64_t batch, int64_t samples) {
  BatchSplitPlan plan;
  plan.devices = cpuNames(devices);
  plan.strategy = "DataParallel";
  plan.batchSize = batch;
  plan.trainingSamples = samples;
  return plan;
}

// A ModelParallel plan for a model spec, as the main window fills it from check_layout_map.
BatchSplitPlan modelParallelPlan(const ModelSpec& model, const DistributionSpec& dist) {
  const int devices =
      std::accumulate(dist.mesh_shape.begin(), dist.mesh_shape.end(), 1, std::multiplies<int>());
  const LayoutCheck check = check_layout_map(model_variables(model, 0), dist, devices);
  BatchSplitPlan plan;
  plan.devices = cpuNames(devices);
  plan.strategy = "ModelParallel";
  plan.batchSize = 10;
  plan.trainingSamples = 25;
  plan.meshShape = dist.mesh_shape;
  plan.axisNames = dist.axis_names;
  plan.batchDimName = dist.batch_dim_name;
  plan.variables = check.variables;
  plan.errors = check.errors;
  return plan;
}

// Every tooltip the view shows, sampled on a 3-pixel grid.
QSet<QString> allTips(const BatchSplitView& view) {
  QSet<QString> tips;
  for (int y = 0; y < view.height(); y += 3)
    for (int x = 0; x < view.width(); x += 3) tips.insert(view.toolTipAt(QPoint(x, y)));
  return tips;
}

bool anyContains(const QSet<QString>& tips, const QString& text) {
  for (const QString& t : tips)
    if (t.contains(text)) return true;
  return false;
}

void saveShot(BatchSplitView& view, const QString& name) {
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  if (!dir.isEmpty()) QVERIFY(view.grab().save(dir + QLatin1Char('/') + name));
}

}  // namespace

class TestBatchSplitView : public QObject {
  Q_OBJECT
 private slots:
  void shardRows_data();
  void shardRows();
  void dataParallelFitMatchesEngine();
  void validationSplitShrinksTheEpoch();
  void plannedBatches_data();
  void plannedBatches();
  void modelParallelSlices_data();
  void modelParallelSlices();
  void modelParallelFitMatchesEngine();
  void invalidLayoutShowsErrors();
  void glossaryTooltips();
  void batchNormalizationStatisticsAreSaid();
};

void TestBatchSplitView::shardRows_data() {
  QTest::addColumn<qlonglong>("rows");
  QTest::addColumn<int>("devices");
  QTest::addColumn<Rows>("expected");  // by hand: the first rows % devices get one more row
  QTest::newRow("10 on 3") << 10LL << 3 << Rows{4, 3, 3};
  QTest::newRow("5 on 3") << 5LL << 3 << Rows{2, 2, 1};
  QTest::newRow("2 on 3: a device without rows") << 2LL << 3 << Rows{1, 1, 0};
  QTest::newRow("16 on 2") << 16LL << 2 << Rows{8, 8};
  QTest::newRow("7 on 1") << 7LL << 1 << Rows{7};
  QTest::newRow("11 on 4") << 11LL << 4 << Rows{3, 3, 3, 2};
}

void TestBatchSplitView::shardRows() {
  QFETCH(qlonglong, rows);
  QFETCH(int, devices);
  QFETCH(Rows, expected);
  QCOMPARE(BatchSplitView::shardRows(rows, devices), expected);
  std::vector<Index> offsets(static_cast<size_t>(devices)), sizes(static_cast<size_t>(devices));
  DataParallelExecutor::shard_rows(rows, devices, offsets, sizes);
  QCOMPARE(Rows(sizes.begin(), sizes.end()), expected);
}

void TestBatchSplitView::dataParallelFitMatchesEngine() {
  // 3 devices, 25 samples, batch 10: batches of 10, 10 and 5 rows each epoch.
  const auto dataParallel = [](Sequential& m) { use_data_parallel(m, 3); };
  const std::vector<StepTrace> steps =
      fitTraces(fixtures::binary_mlp(4, {}), 25, dataParallel,
                FitOptions{.epochs = 2, .batch_size = 10, .verbose = 0});
  QCOMPARE(steps.size(), size_t(6));

  BatchSplitView view;
  view.resize(380, 520);
  view.setPlan(dataParallelPlan(3, 10, 25));
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepTrace& step = steps[i];
    view.showStep(step);
    QCOMPARE(view.batches().size(), size_t(1));
    const BatchSplit& shown = view.batches().front();
    QCOMPARE(shown.parts, step.shard_rows);  // what the engine trained on
    const bool last = i % 3 == 2;
    QCOMPARE(shown.parts, (last ? Rows{2, 2, 1} : Rows{4, 3, 3}));
    QCOMPARE(shown.rows, last ? int64_t(5) : int64_t(10));
    QCOMPARE(shown.partial, last);
    // The rule the view uses before a run predicts the engine's split of this batch.
    QCOMPARE(BatchSplitView::shardRows(shown.rows, 3), step.shard_rows);
  }
  QCOMPARE(view.caption(), QStringLiteral("Epoch 2, batch 3 of 3 · 5 rows: last partial batch"));
  view.showStep(steps[1]);
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1, batch 2 of 3 · 10 rows"));
  saveShot(view, "S_dp_live.png");
}

void TestBatchSplitView::validationSplitShrinksTheEpoch() {
  // 30 samples with validation_split 0.2: fit() trains on floor(30 * 0.8) = 24 rows, batches of
  // 10, 10 and 4 rows; the last split 2 + 1 + 1 on 3 devices.
  QCOMPARE(batchsplit::trainingSamples(30, 0.2), int64_t(24));
  QCOMPARE(batchsplit::trainingSamples(30, 0.0), int64_t(30));
  const auto dataParallel = [](Sequential& m) { use_data_parallel(m, 3); };
  const std::vector<StepTrace> steps =
      fitTraces(fixtures::binary_mlp(4, {}), 30, dataParallel,
                FitOptions{.epochs = 1, .batch_size = 10, .validation_split = 0.2, .verbose = 0});
  QCOMPARE(steps.size(), size_t(3));
  BatchSplitView view;
  view.setPlan(dataParallelPlan(3, 10, batchsplit::trainingSamples(30, 0.2)));
  QCOMPARE(view.batches().size(), size_t(2));
  QCOMPARE(view.batches()[1].parts, steps[2].shard_rows);
  QCOMPARE(view.batches()[1].parts, (Rows{2, 1, 1}));
}

void TestBatchSplitView::plannedBatches_data() {
  QTest::addColumn<QString>("strategy");
  QTest::addColumn<int>("devices");
  QTest::addColumn<qlonglong>("batch");
  QTest::addColumn<qlonglong>("samples");
  QTest::addColumn<QStringList>("titles");
  QTest::addColumn<QList<Rows>>("parts");
  QTest::addColumn<QString>("caption");
  QTest::newRow("DataParallel, uneven last batch")
      << "DataParallel" << 3 << 10LL << 25LL << QStringList{"Full batch", "Last batch"}
      << QList<Rows>{{4, 3, 3}, {2, 2, 1}}
      << "25 training samples, batch size 10: 3 batches per epoch, the last one of 5 rows.";
  QTest::newRow("DataParallel, every batch full")
      << "DataParallel" << 3 << 8LL << 32LL << QStringList{"Full batch"} << QList<Rows>{{3, 3, 2}}
      << "32 training samples, batch size 8: 4 full batches per epoch.";
  QTest::newRow("DataParallel, fewer samples than a batch")
      << "DataParallel" << 3 << 16LL << 7LL << QStringList{"The only batch"}
      << QList<Rows>{{3, 2, 2}}
      << "7 training samples, batch size 16: one batch of 7 rows per epoch.";
  QTest::newRow("DataParallel, samples unknown")
      << "DataParallel" << 3 << 16LL << 0LL << QStringList{"Full batch"} << QList<Rows>{{6, 5, 5}}
      << "Each batch has up to 16 rows (the data's row count is not known yet).";
  // A batch size beyond the data (batch_size=1e9 on 400 rows): Keras trains one batch of all the
  // rows, which is full, not partial.
  QTest::newRow("batch size far beyond the data")
      << "DataParallel" << 2 << 1000000000LL << 400LL << QStringList{"The only batch"}
      << QList<Rows>{{200, 200}}
      << "400 training samples, batch size 1000000000: one batch of 400 rows per epoch.";
  QTest::newRow("8 devices, batch 32: the last batch leaves devices without rows")
      << "DataParallel" << 8 << 32LL << 100LL << QStringList{"Full batch", "Last batch"}
      << QList<Rows>{{4, 4, 4, 4, 4, 4, 4, 4}, {1, 1, 1, 1, 0, 0, 0, 0}}
      << "100 training samples, batch size 32: 4 batches per epoch, the last one of 4 rows.";
  QTest::newRow("one device (three listed, no distribution)")
      << "" << 3 << 10LL << 21LL << QStringList{"Full batch", "Last batch"}
      << QList<Rows>{{10}, {1}}
      << "21 training samples, batch size 10: 3 batches per epoch, the last one of 1 row.";
}

void TestBatchSplitView::plannedBatches() {
  QFETCH(QString, strategy);
  QFETCH(int, devices);
  QFETCH(qlonglong, batch);
  QFETCH(qlonglong, samples);
  QFETCH(QStringList, titles);
  QFETCH(QList<Rows>, parts);
  QFETCH(QString, caption);
  BatchSplitPlan plan = dataParallelPlan(devices, batch, samples);
  plan.strategy = strategy.toStdString();
  BatchSplitView view;
  view.resize(380, 520);
  view.setPlan(plan);
  QCOMPARE(view.batches().size(), size_t(titles.size()));
  for (qsizetype i = 0; i < titles.size(); ++i) {
    const BatchSplit& b = view.batches()[size_t(i)];
    QCOMPARE(b.title, titles[i]);
    QCOMPARE(b.parts, parts[i]);
    QCOMPARE(b.rows, std::accumulate(parts[i].begin(), parts[i].end(), int64_t{0}));
    QCOMPARE(b.partial, b.rows < (samples > 0 ? std::min(batch, samples) : batch));
  }
  QCOMPARE(view.caption(), caption);
  if (QTest::currentDataTag() == QByteArray("DataParallel, uneven last batch"))
    saveShot(view, "S_dp.png");
  if (strategy.isEmpty()) saveShot(view, "S_one.png");
  if (devices == 8) saveShot(view, "S_dp8.png");
  // A step drops the planned batches; a new plan brings them back; clear() empties the view.
  StepTrace step;
  step.epoch = 0;
  step.batch = 0;
  const int64_t rows = samples > 0 ? std::min(batch, samples) : batch;
  step.shard_rows = BatchSplitView::shardRows(rows, devices);
  view.showStep(step);
  QCOMPARE(view.batches().size(), size_t(1));
  QVERIFY(!view.batches().front().partial);  // the largest batch the data gives is full
  QVERIFY(!view.caption().contains(QStringLiteral("partial")));
  view.setPlan(plan);
  QCOMPARE(view.batches().size(), size_t(titles.size()));
  view.clear();
  QVERIFY(view.batches().empty());
  QVERIFY(view.caption().isEmpty());
}

void TestBatchSplitView::modelParallelSlices_data() {
  QTest::addColumn<QList<int>>("shape");
  QTest::addColumn<QStringList>("axes");
  QTest::addColumn<QString>("batchDim");
  // Expected by hand from DeviceMesh's row-major order: the devices holding dense/kernel's second
  // column range, and dense_1/kernel's first row range.
  QTest::addColumn<QString>("kernelLabel");
  QTest::addColumn<QString>("rowsLabel");
  QTest::addColumn<Rows>("meshRows");  // a full batch of 10 over the batch axis
  QTest::newRow("2x2 batch, model") << QList<int>{2, 2} << QStringList{"batch", "model"} << ""
                                    << "cpu:1, cpu:3 hold kernel[:, 8:16]"
                                    << "cpu:0, cpu:2 hold kernel[0:8, :]" << Rows{5, 5};
  QTest::newRow("2x2 model, batch (batch axis second)")
      << QList<int>{2, 2} << QStringList{"model", "batch"} << "batch"
      << "cpu:2, cpu:3 hold kernel[:, 8:16]"
      << "cpu:0, cpu:1 hold kernel[0:8, :]" << Rows{5, 5};
  QTest::newRow("1x4") << QList<int>{1, 4} << QStringList{"batch", "model"} << ""
                       << "cpu:1 holds kernel[:, 4:8]"
                       << "cpu:0 holds kernel[0:4, :]" << Rows{10};
  QTest::newRow("4x1: a model axis of one device keeps everything whole")
      << QList<int>{4, 1} << QStringList{"batch", "model"} << ""
      << "replicated on all devices"
      << "replicated on all devices" << Rows{3, 3, 2, 2};
}

void TestBatchSplitView::modelParallelSlices() {
  QFETCH(QList<int>, shape);
  QFETCH(QStringList, axes);
  QFETCH(QString, batchDim);
  QFETCH(QString, kernelLabel);
  QFETCH(QString, rowsLabel);
  QFETCH(Rows, meshRows);
  // 4-16-16-1: dense/kernel by columns, dense_1/kernel by rows, dense_1/bias by units; the rest
  // (dense/bias among them) replicated.
  const ModelSpec spec = fixtures::binary_mlp(4, {16, 16});
  const std::string model = "model";  // the model axis's name in every row
  DistributionSpec dist;
  dist.class_name = "ModelParallel";
  dist.mesh_shape = std::vector<int>(shape.begin(), shape.end());
  for (const QString& a : axes) dist.axis_names.push_back(a.toStdString());
  dist.batch_dim_name = batchDim.toStdString();
  dist.layout_map = {
      {"dense/kernel", {"", model}}, {"dense_1/kernel", {model, ""}}, {"dense_1/bias", {model}}};
  const int devices = shape[0] * shape[1];

  BatchSplitView view;
  view.resize(380, 520);
  view.setPlan(modelParallelPlan(spec, dist));
  QVERIFY(view.errorLines().isEmpty());
  QCOMPARE(view.batches().front().parts, meshRows);

  // The executor's own placement: build the model, a ModelParallelExecutor, take a step.
  set_random_seed(5);
  Matrix x, y;
  fixtures::make_binary_data(20, 4, x, y);
  Sequential m(spec);
  fixtures::compile_binary_sgd(m);
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 10, .verbose = 0});  // builds everything
  ExecutorContext ctx;
  ctx.graph.network = &m.network();
  const CompileOptions co = m.compile_options();
  auto loss = make_loss(co.loss);
  ctx.graph.loss = loss.get();
  ctx.variables = &m.variables();
  auto optimizer = make_optimizer(co.optimizer, "compile.optimizer");
  ctx.optimizer = optimizer.get();
  ModelParallelExecutor exec(ctx, make_model_parallel_plan(m.network(), dist, devices),
                             co.optimizer, std::make_shared<ModelParallelOptimizers>());
  exec.prepare(10);
  exec.pull_from_model();
  StepTotals totals;
  totals.reset(0);
  exec.train_step(x.topRows(10), y.topRows(10), 0, totals);

  const auto& vars = m.variables();
  QCOMPARE(vars.size(), size_t(6));
  for (int d = 0; d < devices; ++d) {
    const auto held = exec.device_values(d);
    for (size_t i = 0; i < vars.size(); ++i) {
      std::vector<const VariableSlice*> mine;
      for (const auto& s : view.slices())
        if (s.variable == int(i) &&
            std::find(s.devices.begin(), s.devices.end(), d) != s.devices.end())
          mine.push_back(&s);
      QCOMPARE(mine.size(), size_t(1));  // every device holds exactly one piece of each variable
      const VariableSlice& s = *mine.front();
      const Matrix& full = vars[i].value;
      Matrix expected = full;
      if (s.dim == 0 && vars[i].shape.size() == 2)
        expected = full.middleRows(s.begin, s.end - s.begin);
      else if (s.dim >= 0)
        expected = full.middleCols(s.begin, s.end - s.begin);
      QCOMPARE(held[i]->rows(), expected.rows());
      QCOMPARE(held[i]->cols(), expected.cols());
      QVERIFY2(*held[i] == expected, qPrintable(QStringLiteral("device %1 variable %2")
                                                    .arg(d)
                                                    .arg(QString::fromStdString(vars[i].path))));
    }
  }
  // Labels by hand; dense/bias (variable 1) replicated on every device.
  QStringList labels;
  for (const auto& s : view.slices()) labels << s.label;
  QVERIFY2(labels.contains(kernelLabel), qPrintable(labels.join(" | ")));
  QVERIFY2(labels.contains(rowsLabel), qPrintable(labels.join(" | ")));
  const auto bias = std::find_if(view.slices().begin(), view.slices().end(),
                                 [](const VariableSlice& s) { return s.variable == 1; });
  QCOMPARE(bias->dim, -1);
  QCOMPARE(bias->label, QStringLiteral("replicated on all devices"));
  QCOMPARE(int(bias->devices.size()), devices);
  if (QTest::currentDataTag() == QByteArray("2x2 batch, model")) saveShot(view, "S_mp.png");
}

void TestBatchSplitView::modelParallelFitMatchesEngine() {
  // A 2x2 mesh, 25 samples, batch 10: each device of a mesh row trains on that row's rows, 5 + 5
  // for a full batch and 3 + 2 for the last batch of 5.
  DistributionSpec dist;
  dist.class_name = "ModelParallel";
  dist.mesh_shape = {2, 2};
  dist.axis_names = {"batch", "model"};
  dist.layout_map = {{"dense/kernel", {"", "model"}}};
  const ModelSpec spec = fixtures::binary_mlp(4, {16, 16});
  const std::vector<StepTrace> steps = fitTraces(
      spec, 25, [&](Sequential& m) { use_model_parallel(m, dist, 4); },
      FitOptions{.epochs = 1, .batch_size = 10, .verbose = 0});
  QCOMPARE(steps.size(), size_t(3));
  BatchSplitView view;
  view.setPlan(modelParallelPlan(spec, dist));
  for (size_t i = 0; i < steps.size(); ++i) {
    const StepTrace& step = steps[i];
    QCOMPARE(step.shard_rows.size(), size_t(4));
    view.showStep(step);
    const Rows expected = i == 2 ? Rows{3, 2} : Rows{5, 5};
    QCOMPARE(view.batches().front().parts, expected);
    // cpu:0 and cpu:1 form mesh row 0, cpu:2 and cpu:3 mesh row 1.
    QCOMPARE(step.shard_rows, (Rows{expected[0], expected[0], expected[1], expected[1]}));
  }
  QCOMPARE(view.caption(), QStringLiteral("Epoch 1, batch 3 of 3 · 5 rows: last partial batch"));
}

void TestBatchSplitView::invalidLayoutShowsErrors() {
  // dense_2/kernel (16, 1) cannot be split in 2 by columns.
  DistributionSpec dist;
  dist.class_name = "ModelParallel";
  dist.mesh_shape = {2, 2};
  dist.axis_names = {"batch", "model"};
  dist.layout_map = {{"kernel", {"", "model"}}};
  const BatchSplitPlan plan = modelParallelPlan(fixtures::binary_mlp(4, {16, 16}), dist);
  QVERIFY(!plan.errors.empty());
  BatchSplitView view;
  view.resize(380, 520);
  view.setPlan(plan);
  const QStringList errors = view.errorLines();
  QCOMPARE(errors.size(), qsizetype(plan.errors.size()));
  QCOMPARE(errors.front(), QString::fromStdString(plan.errors.front().text()));
  QVERIFY2(errors.front().contains("dense_2/kernel"), qPrintable(errors.front()));
  QVERIFY(view.slices().empty());
  saveShot(view, "S_mp_error.png");
}

void TestBatchSplitView::glossaryTooltips() {
  BatchSplitView view;
  view.resize(380, 520);
  view.setPlan(dataParallelPlan(3, 10, 25));
  QSet<QString> tips = allTips(view);
  QVERIFY(anyContains(tips, glossary::shard()));
  QVERIFY(anyContains(tips, glossary::replica()));
  QVERIFY(anyContains(tips, glossary::dataParallel()));
  // Full batch 4 + 3 + 3: cpu:2 has rows 7-9; last batch 2 + 2 + 1: cpu:2 has row 4 alone.
  QVERIFY(anyContains(tips, QStringLiteral("cpu:2 trains on rows 7–9 of this batch (3 rows).")));
  QVERIFY(anyContains(tips, QStringLiteral("cpu:2 trains on row 4 of this batch (1 row).")));

  DistributionSpec dist;
  dist.class_name = "ModelParallel";
  dist.mesh_shape = {2, 2};
  dist.axis_names = {"batch", "model"};
  dist.layout_map = {{"dense/kernel", {"", "model"}}};
  view.setPlan(modelParallelPlan(fixtures::binary_mlp(4, {16, 16}), dist));
  tips = allTips(view);
  QVERIFY(anyContains(tips, glossary::mesh()));
  QVERIFY(anyContains(tips, glossary::layout()));
  QVERIFY(anyContains(tips, glossary::replica()));
  QVERIFY(anyContains(tips, glossary::modelParallel()));
}

void TestBatchSplitView::batchNormalizationStatisticsAreSaid() {
  // Whose statistics BatchNormalization uses, under the caption: none without the layer or on
  // one device; the global batch's, or each shard's own (with cpu:0's moving statistics).
  BatchSplitView view;
  view.resize(380, 520);
  BatchSplitPlan plan = dataParallelPlan(8, 16, 6000);
  view.setPlan(plan);
  QCOMPARE(view.statisticsNote(), QString());
  plan.batchNormLayers = 1;
  view.setPlan(plan);
  QCOMPARE(view.statisticsNote(),
           QStringLiteral("BatchNormalization: every shard is normalized by the whole batch's "
                          "statistics, each device's sums all-reduced (as Keras)."));
  plan.perDeviceStatistics = true;
  plan.batchNormLayers = 2;
  view.setPlan(plan);
  QCOMPARE(view.statisticsNote(),
           QStringLiteral("The 2 BatchNormalization layers: each device normalizes its shard by "
                          "that shard's own statistics (per device, as PyTorch's "
                          "DistributedDataParallel without SyncBatchNorm); every replica keeps "
                          "cpu:0's moving statistics."));
  saveShot(view, "S_dp_per_device_statistics.png");
  // Shown under the caption: the view grows by its lines.
  const int with = view.heightForWidth(380);
  plan.batchNormLayers = 0;
  view.setPlan(plan);
  QVERIFY(view.heightForWidth(380) < with);
  BatchSplitPlan one = dataParallelPlan(1, 16, 6000);
  one.batchNormLayers = 1;
  view.setPlan(one);
  QCOMPARE(view.statisticsNote(), QString());
}

QTEST_MAIN(TestBatchSplitView)
#include "tst_batch_split_view.moc"
