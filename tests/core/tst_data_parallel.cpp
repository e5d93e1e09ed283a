// DataParallel on N threaded devices equals one device: the same epoch logs and final weights to
// float32 rounding for every optimizer, with uneven shards (batches that do not divide, a partial
// last batch, devices with no rows), with the ring and the naive all-reduce, replicas bitwise
// identical, and the same run twice bitwise identical. The rehearsal knobs change the time, not
// the numbers; they are validated with errors that name the place, and read from and written to
// the experiment file's devices section.
#include <QTest>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/distribution.h"
#include "core/io/experiment.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "tests/core/fixtures.h"

using namespace fitbench;

namespace {

using fixtures::Run;

// Input(5) -> Dense(8, relu, L2) -> Dropout -> Dense(3, softmax).
ModelSpec mlp() { return fixtures::classifier(5, {}, 3); }

void make_data(Matrix& x, Matrix& y) { fixtures::make_data(x, y, 5, 3); }

OptimizerSpec opt(const std::string& name, double lr, double momentum = 0.0,
                  bool nesterov = false) {
  return fixtures::optimizer(name, lr, momentum, nesterov);
}

// batch 10: shards of 10 on 3 devices are 4/3/3; on 8 devices 2/2/1/1/1/1/1/1; the last batch
// of 1 row (61 = 6 x 10 + 1) leaves all but one device without rows. devices 0: one device
// without a distribution.
Run train(const OptimizerSpec& o, int devices, bool shuffle = true,
          const RehearsalOptions& options = {}) {
  return fixtures::train(
      mlp(), 5, 3, o,
      [&](Sequential& m) {
        if (devices > 0) use_data_parallel(m, devices, options);
      },
      FitOptions{.epochs = 3, .batch_size = 10, .shuffle = shuffle, .verbose = 0});
}

using fixtures::max_rel_diff;

}  // namespace

class TestDataParallel : public QObject {
  Q_OBJECT
 private slots:
  void equals_one_device_data();
  void equals_one_device();
  void shards();
  void confusion_metrics_equal_one_device();
  void replicas_stay_identical();
  void deterministic();
  void device_error_propagates();
  void sharded_update_equals_one_device_data();
  void sharded_update_equals_one_device();
  void sharded_state_carries_into_the_next_fit();
  void knobs_change_time_not_numbers();
  void rehearsal_errors_data();
  void rehearsal_errors();
  void devices_section_round_trip();
  void devices_section_errors_data();
  void devices_section_errors();
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

// precision, recall and auc keep counts (auc 200 buckets of each label), not means: a device's
// counts add to the others', so 3 devices log what one device logs, in fit() and evaluate().
void TestDataParallel::confusion_metrics_equal_one_device() {
  const auto run = [](int devices) {
    set_random_seed(11);
    Matrix x, y;
    fixtures::make_binary_data(61, 4, x, y);
    Sequential m(fixtures::binary_mlp(4, {6}));
    CompileOptions c;
    c.optimizer = opt("SGD", 0.1);
    c.loss.name = "binary_crossentropy";
    c.metrics = {"auc", "precision", "recall"};
    m.compile(c);
    if (devices > 0) use_data_parallel(m, devices);
    Run r;
    r.history = m.fit(x, y, FitOptions{.epochs = 3, .batch_size = 10, .verbose = 0});
    r.weights = m.get_weights();
    r.evaluated = m.evaluate(x, y, 7);
    return r;
  };
  const Run one = run(0);
  const Run many = run(3);
  const double diff = max_rel_diff(many, one);
  QVERIFY2(diff < 1e-5, qPrintable(QString("max relative difference %1").arg(diff)));
  // A separable set: the area grows as the model learns, and stays an area.
  const std::vector<double>& auc = one.history.history.at("auc");
  QVERIFY2(auc.back() > auc.front() + 0.1 && auc.back() <= 1.0,
           qPrintable(QString("%1 -> %2").arg(auc.front()).arg(auc.back())));
  QVERIFY(one.evaluated.count("auc") == 1);
}

void TestDataParallel::replicas_stay_identical() {
  set_random_seed(3);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  fixtures::compile(m, opt("Adam", 0.01), false);
  m.fit(x.topRows(1), y.topRows(1), FitOptions{.epochs = 1, .verbose = 0});  // builds optimizer
  fixtures::ExecutorSetup setup(m, false);
  DataParallelExecutor exec(setup.ctx, 4);
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
  fixtures::compile(m, opt("SGD", 0.1), false);
  use_data_parallel(m, 4);
  QVERIFY_THROWS_EXCEPTION(InputError,
                           m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 20, .verbose = 0}));
  y(13, 0) = 1.0f;
  const History h = m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 20, .verbose = 0});
  QCOMPARE(h.epoch.size(), size_t(1));
}

void TestDataParallel::sharded_update_equals_one_device_data() {
  QTest::addColumn<QString>("optimizer");
  QTest::addColumn<int>("devices");
  QTest::addColumn<bool>("naive");
  const char* names[] = {"sgd", "momentum", "adam", "rmsprop", "adagrad", "clipvalue"};
  for (const char* n : names)
    for (int d : {2, 3, 5, 8})
      for (bool naive : {false, true})
        QTest::newRow(qPrintable(QString("%1/%2/%3").arg(n).arg(d).arg(naive ? "naive" : "ring")))
            << QString(n) << d << naive;
}

void TestDataParallel::sharded_update_equals_one_device() {
  // Without clipnorm (and with no size threshold) the update is sharded (reduce-scatter, 1/N of
  // the update per device, all-gather): within 1e-5 of one device, with either algorithm (the naive
  // one adds in another order than the ring), and bitwise identical to a rerun.
  QFETCH(QString, optimizer);
  QFETCH(int, devices);
  QFETCH(bool, naive);
  OptimizerSpec o = opt("SGD", 0.1);
  if (optimizer == "momentum") o = opt("SGD", 0.05, 0.9, true);
  if (optimizer == "adam") o = opt("Adam", 0.01);
  if (optimizer == "rmsprop") {
    o = opt("RMSprop", 0.005, 0.5);
    o.centered = true;
  }
  if (optimizer == "adagrad") o = opt("Adagrad", 0.1);
  if (optimizer == "clipvalue") {
    o = opt("AdamW", 0.01);
    o.clipvalue = 0.05;
  }
  RehearsalOptions options;
  options.sharded_update_min_elements = 0;  // this small model too
  if (naive) options.algorithm = CollectiveAlgorithm::kNaive;
  const Run one = train(o, 0);
  const Run many = train(o, devices, true, options);
  const double diff = max_rel_diff(many, one);
  QVERIFY2(diff < 1e-5, qPrintable(QString("max relative difference %1").arg(diff)));
  const Run again = train(o, devices, true, options);
  for (size_t i = 0; i < many.weights.size(); ++i)
    QVERIFY(many.weights[i].values == again.weights[i].values);
}

void TestDataParallel::sharded_state_carries_into_the_next_fit() {
  // With a sharded update each device keeps the optimizer slots of its own part; at the end of
  // every epoch and of fit() they go back to the model's optimizer, so a second fit() (a new
  // executor, whose replicas clone that optimizer) continues Adam's moments and RMSprop's
  // averages as one device does.
  for (const char* name : {"Adam", "RMSprop"}) {
    const OptimizerSpec o = opt(name, 0.01, std::string(name) == "RMSprop" ? 0.5 : 0.0);
    const FitOptions fit{.epochs = 2, .batch_size = 10, .verbose = 0};
    auto run = [&](int devices) {
      return fixtures::train(
          mlp(), 5, 3, o,
          [&](Sequential& m) {
            if (devices > 0)
              use_data_parallel(m, devices, RehearsalOptions{.sharded_update_min_elements = 0});
          },
          fit, 2);
    };
    const Run one = run(0);
    for (int devices : {2, 3}) {
      const double diff = max_rel_diff(run(devices), one);
      QVERIFY2(diff < 1e-5, qPrintable(QString("%1 on %2 devices: max relative difference %3")
                                           .arg(name)
                                           .arg(devices)
                                           .arg(diff)));
    }
  }
}

void TestDataParallel::knobs_change_time_not_numbers() {
  // A slow device and a slow link make the run take longer; the weights are the same bits.
  RehearsalOptions slow;
  slow.speed = {1.0, 0.5, 0.25};
  slow.link = {20.0, 0.5};
  const Run plain = train(opt("Adam", 0.01), 3);
  const Run rehearsed = train(opt("Adam", 0.01), 3, true, slow);
  for (size_t i = 0; i < plain.weights.size(); ++i)
    QVERIFY(plain.weights[i].values == rehearsed.weights[i].values);
  QVERIFY(plain.history.history == rehearsed.history.history);
}

void TestDataParallel::rehearsal_errors_data() {
  QTest::addColumn<QString>("field");
  QTest::addColumn<QString>("value");
  QTest::addColumn<QString>("place");
  QTest::newRow("speed length") << "speed"
                                << "1,0.5,1"
                                << "devices.speed";
  QTest::newRow("speed zero") << "speed"
                              << "1,0"
                              << "devices.speed[1]";
  QTest::newRow("speed above 1") << "speed"
                                 << "1.5,1"
                                 << "devices.speed[0]";
  QTest::newRow("latency") << "latency"
                           << "-1"
                           << "devices.link_latency_us";
  QTest::newRow("bandwidth") << "gbps"
                             << "-2"
                             << "devices.link_gbps";
  QTest::newRow("algorithm") << "allreduce"
                             << "tree"
                             << "devices.allreduce";
}

void TestDataParallel::rehearsal_errors() {
  QFETCH(QString, field);
  QFETCH(QString, value);
  QFETCH(QString, place);
  DevicesSpec spec;
  if (field == "speed")
    for (const QString& v : value.split(',')) spec.speed.push_back(v.toDouble());
  if (field == "latency") spec.link_latency_us = value.toDouble();
  if (field == "gbps") spec.link_gbps = value.toDouble();
  if (field == "allreduce") spec.allreduce = value.toStdString();
  try {
    rehearsal_options(spec, 2);
    QFAIL("no error");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.place()), place);
  }
  // The defaults are valid and cost nothing.
  const RehearsalOptions o = rehearsal_options(DevicesSpec{}, 2);
  QCOMPARE(o.algorithm, CollectiveAlgorithm::kRing);
  QVERIFY(o.speed.empty());
  QVERIFY(!o.link.active());
}

namespace {
nlohmann::json experiment_with_devices(const nlohmann::json& devices) {
  return {
      {"name", "t"},
      {"devices", devices},
      {"distribution", {{"class_name", "DataParallel"}}},
      {"data", {{"generator", "seed"}, {"samples", 32}}},
      {"model",
       {{"class_name", "Sequential"},
        {"config",
         {{"layers",
           {{{"class_name", "Dense"}, {"config", {{"units", 1}, {"activation", "sigmoid"}}}}}}}}}},
      {"compile", {{"optimizer", "sgd"}, {"loss", "binary_crossentropy"}}}};
}
}  // namespace

void TestDataParallel::devices_section_round_trip() {
  const nlohmann::json devices = {{"type", "cpu"},     {"count", 2},
                                  {"speed", {1, 0.5}}, {"link_latency_us", 50},
                                  {"link_gbps", 1.5},  {"allreduce", "naive"}};
  const ExperimentSpec spec = parse_experiment(experiment_with_devices(devices), "t.json", {});
  QCOMPARE(spec.devices.speed, (std::vector<double>{1.0, 0.5}));
  QCOMPARE(spec.devices.link_latency_us, 50.0);
  QCOMPARE(spec.devices.link_gbps, 1.5);
  QCOMPARE(spec.devices.allreduce, std::string("naive"));
  const nlohmann::json written = experiment_to_json(spec);
  QVERIFY2(written["devices"] == devices, written["devices"].dump().c_str());
  // Defaults are not written.
  ExperimentSpec plain = spec;
  plain.devices = DevicesSpec{};
  plain.devices.count = 2;
  const nlohmann::json plain_devices = experiment_to_json(plain)["devices"];
  QVERIFY2(plain_devices == (nlohmann::json{{"type", "cpu"}, {"count", 2}}),
           plain_devices.dump().c_str());
}

void TestDataParallel::devices_section_errors_data() {
  QTest::addColumn<QString>("devices");
  QTest::addColumn<QString>("place");
  QTest::newRow("speed count") << R"({"count": 2, "speed": [1, 1, 1]})"
                               << "t.json: devices.speed";
  QTest::newRow("speed zero") << R"({"speed": [1, 0]})"
                              << "t.json: devices.speed[1]";
  QTest::newRow("speed text") << R"({"speed": ["fast"]})"
                              << "t.json: devices.speed[0]";
  QTest::newRow("speed empty") << R"({"speed": []})"
                               << "t.json: devices.speed";
  QTest::newRow("latency") << R"({"link_latency_us": -5})"
                           << "t.json: devices.link_latency_us";
  QTest::newRow("bandwidth") << R"({"link_gbps": "fast"})"
                             << "t.json: devices.link_gbps";
  QTest::newRow("algorithm") << R"({"allreduce": "tree"})"
                             << "t.json: devices.allreduce";
  QTest::newRow("unknown key") << R"({"speeds": [1]})"
                               << "t.json: devices.speeds";
}

void TestDataParallel::devices_section_errors() {
  QFETCH(QString, devices);
  QFETCH(QString, place);
  try {
    parse_experiment(experiment_with_devices(nlohmann::json::parse(devices.toStdString())),
                     "t.json", {});
    QFAIL("no error");
  } catch (const InputError& e) {
    QVERIFY2(QString::fromStdString(e.place()) == place, e.what());
  }
}

QTEST_GUILESS_MAIN(TestDataParallel)
#include "tst_data_parallel.moc"
