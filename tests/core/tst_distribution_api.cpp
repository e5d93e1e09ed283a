// keras.distribution's objects in C++: DataParallel and ModelParallel build the meshes Keras
// builds (reprs as Python prints them), set_distribution / distribution() / scope() keep and
// restore the global setting, distribute() trains exactly as the executors do when set up
// directly, and examples/train_distributed prints the seed script's lines with the same numbers
// as `fitbench-cli run resources/examples/seed.json` on the same devices.
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include "core/base/error.h"
#include "core/distribution/api/distribution_api.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/python/random.h"
#include "core/training/sequential.h"

using namespace fitbench;

namespace {

const std::vector<std::string> kTwo = {"cpu:0", "cpu:1"};
const std::vector<std::string> kFour = {"cpu:0", "cpu:1", "cpu:2", "cpu:3"};

ModelSpec mlp() {
  ModelSpec spec;
  spec.layers = {LayerSpec{.class_name = "InputLayer", .shape = {3}},
                 LayerSpec{.class_name = "Dense", .units = 4, .activation = "relu"},
                 LayerSpec{.class_name = "Dense", .units = 2, .activation = "softmax"}};
  return spec;
}

// Trains the MLP, configured by `setup` (nothing: one device).
std::vector<NamedWeight> train(const std::function<void(Sequential&)>& setup) {
  set_random_seed(4);
  Rng rng(9);
  Matrix x(37, 3), y(37, 1);
  for (Index i = 0; i < x.rows(); ++i) {
    for (Index j = 0; j < 3; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = x(i, 0) + x(i, 2) > 0 ? 1.0f : 0.0f;
  }
  Sequential model(mlp());
  model.compile(CompileOptions{.optimizer = {.class_name = "Adam", .learning_rate = 0.01},
                               .loss = {.name = "sparse_categorical_crossentropy"}});
  if (setup) setup(model);
  model.fit(x, y, FitOptions{.epochs = 3, .batch_size = 8, .verbose = 0});
  return model.get_weights();
}

double max_rel_diff(const std::vector<NamedWeight>& a, const std::vector<NamedWeight>& b) {
  double worst = 0.0;
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < a[i].values.size(); ++j)
      worst = std::max(worst, std::abs(a[i].values[j] - b[i].values[j]) /
                                  std::max(1.0, std::abs(double(b[i].values[j]))));
  return worst;
}

QString run_program(const QString& program, const QStringList& args) {
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert("FITBENCH_CPU_DEVICES", "2");
  p.setProcessEnvironment(env);
  p.start(program, args);
  if (!p.waitForFinished(60000)) return "timeout";
  return QString::fromUtf8(p.readAllStandardOutput()) +
         (p.exitCode() == 0 ? QString() : "exit " + QString::number(p.exitCode()));
}

}  // namespace

class TestDistributionApi : public QObject {
  Q_OBJECT
 private slots:
  void cleanup() { set_distribution(std::nullopt); }
  void data_parallel_mesh();
  void data_parallel_default_devices();
  void model_parallel_spec();
  void global_setting_and_scope();
  void distribute_equals_the_executors();
  void data_parallel_over_a_2d_mesh();
  void example_prints_the_seed_script_lines();
};

void TestDistributionApi::data_parallel_mesh() {
  const DataParallel dp(kTwo);
  QCOMPARE(dp.class_name(), std::string("DataParallel"));
  QCOMPARE(dp.repr(), std::string("<DataParallel device_mesh=<DeviceMesh shape=(2,), "
                                  "axis_names=['batch']>>"));
  QCOMPARE(dp.batch_dim_name(), std::string("batch"));
  QVERIFY(dp.device_mesh().devices() == kTwo);
  QVERIFY(!dp.layout_map());
  // Over a given mesh: the batch is split over its first axis.
  const DataParallel over(DeviceMesh({2, 2}, {"data", "replica"}, kFour));
  QCOMPARE(over.batch_dim_name(), std::string("data"));
}

void TestDistributionApi::data_parallel_default_devices() {
  // No devices: every device the environment provides, as keras.distribution.list_devices().
  qputenv("FITBENCH_CPU_DEVICES", "3");
  const DataParallel dp;
  qunsetenv("FITBENCH_CPU_DEVICES");
  QVERIFY(dp.device_mesh().shape() == std::vector<int>{3});
  QCOMPARE(dp.device_mesh().devices().back(), std::string("cpu:2"));
  // A mesh needing more devices than exist fails as Keras's DeviceMesh does.
  qputenv("FITBENCH_CPU_DEVICES", "2");
  QVERIFY_THROWS_EXCEPTION(InputError, DeviceMesh({2, 2}, {"batch", "model"}));
  qunsetenv("FITBENCH_CPU_DEVICES");
}

void TestDistributionApi::model_parallel_spec() {
  LayoutMap map(DeviceMesh({2, 2}, {"batch", "model"}, kFour));
  map.set("dense.*kernel", std::vector<std::string>{"", "model"});
  map.set("dense.*bias", std::vector<std::string>{"model"});
  const ModelParallel mp(map);
  QCOMPARE(mp.batch_dim_name(), std::string("batch"));
  const DistributionSpec spec = mp.to_spec();
  QCOMPARE(spec.class_name, std::string("ModelParallel"));
  QVERIFY(spec.mesh_shape == (std::vector<int>{2, 2}));
  QVERIFY(spec.axis_names == (std::vector<std::string>{"batch", "model"}));
  QCOMPARE(spec.layout_map.size(), size_t(2));
  QCOMPARE(spec.layout_map[0].first, std::string("dense.*kernel"));
  QVERIFY(spec.layout_map[0].second == (std::vector<std::string>{"", "model"}));
  QCOMPARE(ModelParallel(map, "model").batch_dim_name(), std::string("model"));
  try {
    ModelParallel bad(map, "data");
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("distribution.batch_dim_name"));
    QCOMPARE(e.message(), std::string("Invalid axis names for Layout. Valid axis names: "
                                      "['batch', 'model'], Got 'data'"));
  }
}

void TestDistributionApi::global_setting_and_scope() {
  QVERIFY(!distribution());
  set_distribution(DataParallel(kTwo));
  QCOMPARE(distribution()->class_name(), std::string("DataParallel"));
  LayoutMap map(DeviceMesh({1, 2}, {"batch", "model"}, kTwo));
  const ModelParallel mp(map);
  {
    auto outer = mp.scope();
    QCOMPARE(distribution()->class_name(), std::string("ModelParallel"));
    {
      DistributionScope inner{DataParallel(kFour)};
      QCOMPARE(distribution()->device_mesh().size(), 4);
    }
    QCOMPARE(distribution()->class_name(), std::string("ModelParallel"));
  }
  QCOMPARE(distribution()->class_name(), std::string("DataParallel"));
  QCOMPARE(distribution()->device_mesh().size(), 2);
  set_distribution(std::nullopt);
  QVERIFY(!distribution());
  Sequential model(mlp());
  QVERIFY(!distribute(model));  // nothing set: the model stays on one device
}

void TestDistributionApi::distribute_equals_the_executors() {
  // DataParallel through the API trains bitwise as use_data_parallel does.
  const auto direct_dp = train([](Sequential& m) { use_data_parallel(m, 2); });
  const auto api_dp = train([](Sequential& m) {
    set_distribution(DataParallel(kTwo));
    QVERIFY(distribute(m));
  });
  for (size_t i = 0; i < direct_dp.size(); ++i) QVERIFY(direct_dp[i].values == api_dp[i].values);
  // ModelParallel likewise, and both equal one device to float32 rounding.
  LayoutMap map(DeviceMesh({2, 2}, {"batch", "model"}, kFour));
  map.set("dense/kernel", std::vector<std::string>{"", "model"});
  map.set("dense_1/kernel", std::vector<std::string>{"model", ""});
  const ModelParallel mp(map);
  const auto direct_mp = train([&](Sequential& m) { use_model_parallel(m, mp.to_spec(), 4); });
  const auto api_mp = train([&](Sequential& m) { mp.distribute(m); });
  for (size_t i = 0; i < direct_mp.size(); ++i) QVERIFY(direct_mp[i].values == api_mp[i].values);
  const auto one = train(nullptr);
  QVERIFY(max_rel_diff(api_mp, one) < 1e-5);
  QVERIFY(max_rel_diff(api_dp, one) < 1e-5);
  // A layout the model cannot take fails when distributing, naming the place.
  LayoutMap bad(DeviceMesh({1, 4}, {"batch", "model"}, kFour));
  bad.set("dense_1/kernel", std::vector<std::string>{"", "model"});  // 2 units over 4 devices
  Sequential model(mlp());
  try {
    ModelParallel(bad).distribute(model);
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("distribution.layout_map[\"dense_1/kernel\"][1]"));
  }
}

void TestDistributionApi::data_parallel_over_a_2d_mesh() {
  // Keras splits the batch over the first axis and replicates over the second.
  const DataParallel dp(DeviceMesh({2, 2}, {"batch", "replica"}, kFour));
  const auto w = train([&](Sequential& m) { dp.distribute(m); });
  QVERIFY(max_rel_diff(w, train(nullptr)) < 1e-5);
}

void TestDistributionApi::example_prints_the_seed_script_lines() {
  const QString cli = FITBENCH_CLI;
  const QString example = QFileInfo(cli).absolutePath() + "/../examples/train_distributed";
  if (!QFileInfo::exists(example))
    QSKIP("examples/train_distributed is not built (add_subdirectory(examples))");
  const QString got = run_program(example, {});
  const QString want =
      run_program(cli, {"run", QString(FITBENCH_SOURCE_DIR) + "/resources/examples/seed.json"});
  // Step times differ from run to run; everything else is the same text.
  const QRegularExpression timing(" - \\d+s - \\d+[mu]?s/step");
  QString a = got, b = want;
  a.replace(timing, " - T");
  b.replace(timing, " - T");
  QCOMPARE(a, b);
  const QStringList lines = got.split('\n', Qt::SkipEmptyParts);
  QCOMPARE(lines.size(), 11);
  QCOMPARE(lines[0], QString("Devices: ['cpu:0', 'cpu:1']"));
  QCOMPARE(lines[1], QString("Distribution: DataParallel"));
  QCOMPARE(lines[2], QString("Epoch 1/4"));
  QVERIFY2(QRegularExpression("^8/8 - \\d+s - \\d+[mu]?s/step - accuracy: 0\\.\\d{4} - loss: "
                              "0\\.\\d{4}$")
               .match(lines[3])
               .hasMatch(),
           qPrintable(lines[3]));
  QVERIFY(lines[10].startsWith("Final accuracy: 0."));
}

QTEST_GUILESS_MAIN(TestDistributionApi)
#include "tst_distribution_api.moc"
