// The capacity plan: bytes per device checked against hand-computed values (Adam's 16 bytes per
// parameter, the sharded update's slots over N, ModelParallel's slices by the layout map), and
// against what the engine really allocates after fit() (exact for weights, gradients and slots,
// within 5% for activations and buffers), for every strategy and optimizer.
#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/io/experiment.h"
#include "core/optimizers/optimizer.h"
#include "core/run/capacity.h"
#include "core/run/run_plan.h"

using namespace fitbench;
using nlohmann::json;

namespace {

json dense(const std::string& name, int units, const std::string& activation = "relu") {
  return {{"class_name", "Dense"},
          {"config", {{"name", name}, {"units", units}, {"activation", activation}}}};
}

// An MLP on `features` Gaussian features with the given hidden widths and one sigmoid output.
json experiment(int features, const std::vector<int>& hidden, const json& optimizer,
                const json& distribution, int batch = 32, int samples = 256) {
  json layers = json::array();
  layers.push_back({{"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, features}}, {"name", "input_layer"}}}});
  for (size_t i = 0; i < hidden.size(); ++i)
    layers.push_back(dense("hidden_" + std::to_string(i + 1), hidden[i]));
  layers.push_back(dense("output", 1, "sigmoid"));
  return {
      {"name", "capacity"},
      {"seed", 3},
      {"distribution", distribution},
      {"data", {{"generator", "seed"}, {"samples", samples}, {"features", features}, {"seed", 3}}},
      {"model", {{"class_name", "Sequential"}, {"config", {{"layers", layers}}}}},
      {"compile",
       {{"optimizer", optimizer}, {"loss", "binary_crossentropy"}, {"metrics", {"accuracy"}}}},
      {"fit", {{"epochs", 1}, {"batch_size", batch}, {"verbose", 0}, {"shuffle", true}}}};
}

json adam() { return {{"class_name", "Adam"}, {"config", {{"learning_rate", 0.01}}}}; }

json data_parallel() { return {{"class_name", "DataParallel"}}; }

json model_parallel(int rows, int cols, const json& layout) {
  return {{"class_name", "ModelParallel"},
          {"mesh", {{"shape", {rows, cols}}, {"axis_names", {"batch", "model"}}}},
          {"layout_map", layout}};
}

RunPlan plan_of(const json& doc, int devices) {
  RunOverrides o;
  o.devices = devices;
  return plan_run(parse_experiment(doc, "t.json", {}), o, PlanContext{});
}

MemoryPlan memory_of(const json& doc, int devices) {
  return plan_memory(capacity_input(plan_of(doc, devices)));
}

int64_t model_state(const DeviceMemory& m) { return m.weights + m.gradients + m.optimizer_slots; }

bool within(int64_t measured, int64_t predicted, double tolerance) {
  if (measured == predicted) return true;
  return std::abs(static_cast<double>(measured - predicted)) <=
         tolerance * static_cast<double>(std::max(measured, predicted));
}

}  // namespace

class TestCapacity : public QObject {
  Q_OBJECT
 private slots:
  // A 4-8-1 MLP has 4*8 + 8 + 8*1 + 1 = 49 parameters; with Adam each device holds the weights
  // (4 bytes), the gradients (4) and two slots (8): 16 bytes per parameter, on every device.
  void adamReplicatedIs16BytesPerParameter_data() {
    QTest::addColumn<int>("devices");
    QTest::newRow("1") << 1;
    QTest::newRow("2") << 2;
    QTest::newRow("4") << 4;
  }
  void adamReplicatedIs16BytesPerParameter() {
    QFETCH(int, devices);
    const MemoryPlan plan = memory_of(experiment(4, {8}, adam(), data_parallel()), devices);
    QCOMPARE(plan.parameters, int64_t{49});
    QCOMPARE(plan.slots_per_variable, 2);
    QVERIFY(!plan.sharded_update);
    QCOMPARE(static_cast<int>(plan.devices.size()), devices);
    for (const DeviceMemory& d : plan.devices) {
      QCOMPARE(d.weights, int64_t{49 * 4});
      QCOMPARE(d.gradients, int64_t{49 * 4});
      QCOMPARE(d.optimizer_slots, int64_t{49 * 8});
      QCOMPARE(model_state(d), int64_t{49 * 16});
    }
  }

  // Slots per optimizer, as Keras keeps them.
  void slotsPerOptimizer_data() {
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<int>("kept");
    QTest::newRow("SGD") << R"({"class_name": "SGD"})" << 0;
    QTest::newRow("SGD momentum") << R"({"class_name": "SGD", "config": {"momentum": 0.9}})" << 1;
    QTest::newRow("Adam") << R"({"class_name": "Adam"})" << 2;
    QTest::newRow("AMSGrad") << R"({"class_name": "Adam", "config": {"amsgrad": true}})" << 3;
    QTest::newRow("AdamW") << R"({"class_name": "AdamW"})" << 2;
    QTest::newRow("RMSprop") << R"({"class_name": "RMSprop"})" << 1;
    QTest::newRow("RMSprop centered momentum")
        << R"({"class_name": "RMSprop", "config": {"momentum": 0.5, "centered": true}})" << 3;
    QTest::newRow("Adagrad") << R"({"class_name": "Adagrad"})" << 1;
  }
  void slotsPerOptimizer() {
    QFETCH(QString, optimizer);
    QFETCH(int, kept);
    const json doc = experiment(4, {8}, json::parse(optimizer.toStdString()), data_parallel());
    RunPlan run = plan_of(doc, 2);
    const MemoryPlan plan = plan_memory(capacity_input(run));
    QCOMPARE(plan.slots_per_variable, kept);
    QCOMPARE(plan.devices[1].optimizer_slots, int64_t{49} * 4 * kept);
    // Keras's own slot list after training: as many slot variables per variable.
    run.model->fit(run.data.x, run.data.y, run.spec.fit);
    QCOMPARE(run.model->optimizer()->keras_slots().size(), size_t{4} * kept);
  }

  // 4 -> 4096 -> 1 has 4*4096 + 4096 + 4096 + 1 = 24577 parameters, above the 16384 floats where
  // DataParallel shards the update: each device keeps Adam's slots for its chunk only
  // (24577 * d / 4 .. 24577 * (d + 1) / 4: 6144, 6144, 6144, 6145 floats), the model's
  // optimizer the whole state.
  void shardedUpdateDividesSlots() {
    const MemoryPlan plan = memory_of(experiment(4, {4096}, adam(), data_parallel()), 4);
    QCOMPARE(plan.parameters, int64_t{24577});
    QVERIFY(plan.sharded_update);
    const int64_t chunk[] = {6144, 6144, 6144, 6145};
    for (int d = 0; d < 4; ++d) {
      QCOMPARE(plan.devices[d].weights, int64_t{24577 * 4});
      QCOMPARE(plan.devices[d].gradients, int64_t{24577 * 4});
      QCOMPARE(plan.devices[d].optimizer_slots, chunk[d] * 8);
    }
    // One device, or a small model, keeps the whole state on every device.
    QVERIFY(!memory_of(experiment(4, {4096}, adam(), data_parallel()), 1).sharded_update);
  }

  // A 2 x 2 mesh splitting both hidden layers by units (2-16-16-1): each device holds
  // hidden_1 2x8 + 8, hidden_2 16x8 + 8 and the replicated output 16x1 + 1 = 177 floats; with
  // the output kernel split by rows (8x1) instead, 169.
  void modelParallelFollowsLayoutMap_data() {
    QTest::addColumn<QString>("layout");
    QTest::addColumn<int>("floats");
    QTest::newRow("hidden by units")
        << R"({"hidden.*kernel": [null, "model"], "hidden.*bias": ["model"]})" << 177;
    QTest::newRow("output by rows") << R"({"hidden.*kernel": [null, "model"],
        "hidden.*bias": ["model"], "output.*kernel": ["model", null]})"
                                    << 169;
    QTest::newRow("replicated") << R"({".*": []})" << 2 * 16 + 16 + 16 * 16 + 16 + 16 + 1;
  }
  void modelParallelFollowsLayoutMap() {
    QFETCH(QString, layout);
    QFETCH(int, floats);
    const json doc =
        experiment(2, {16, 16}, adam(), model_parallel(2, 2, json::parse(layout.toStdString())));
    const MemoryPlan plan = memory_of(doc, 4);
    QCOMPARE(plan.devices.size(), size_t{4});
    for (const DeviceMemory& d : plan.devices) {
      QCOMPARE(d.weights, int64_t{floats} * 4);
      QCOMPARE(d.gradients, int64_t{floats} * 4);
      QCOMPARE(d.optimizer_slots, int64_t{floats} * 8);
    }
  }

  // What the engine allocates (counted from its buffers after fit()) is what the plan says.
  void engineAllocatesThePlan_data() {
    QTest::addColumn<QString>("doc");
    QTest::addColumn<int>("devices");
    const auto row = [](const char* name, const json& doc, int devices) {
      QTest::newRow(name) << QString::fromStdString(doc.dump()) << devices;
    };
    row("one device", experiment(8, {32, 16}, adam(), nullptr), 1);
    row("DataParallel 2", experiment(8, {32, 16}, adam(), data_parallel()), 2);
    row("DataParallel 3 uneven batch", experiment(8, {32}, adam(), data_parallel(), 20, 100), 3);
    row("DataParallel sharded", experiment(4, {4096}, adam(), data_parallel()), 4);
    json naive = experiment(8, {32}, adam(), data_parallel());
    naive["devices"] = {{"allreduce", "naive"}};
    row("DataParallel naive", naive, 3);
    row("SGD momentum sharded",
        experiment(4, {4096}, {{"class_name", "SGD"}, {"config", {{"momentum", 0.9}}}},
                   data_parallel()),
        2);
    row("RMSprop centered",
        experiment(8, {32}, {{"class_name", "RMSprop"}, {"config", {{"centered", true}}}},
                   data_parallel()),
        2);
    json dropout = experiment(8, {32}, {{"class_name", "Adagrad"}}, data_parallel());
    const json drop = {{"class_name", "Dropout"}, {"config", {{"rate", 0.25}}}};
    json& layers = dropout["model"]["config"]["layers"];
    layers.insert(layers.begin() + 2, drop);
    dropout["fit"]["validation_split"] = 0.25;
    row("Dropout and validation", dropout, 2);
    row("ModelParallel 2x2",
        experiment(
            2, {16, 16}, adam(),
            model_parallel(2, 2,
                           {{"hidden.*kernel", {nullptr, "model"}}, {"hidden.*bias", {"model"}}})),
        4);
    row("ModelParallel 1x4 rows",
        experiment(8, {32, 16}, adam(),
                   model_parallel(1, 4,
                                  {{"hidden_1.*kernel", {nullptr, "model"}},
                                   {"hidden_2.*kernel", {"model", nullptr}}})),
        4);
    row("ModelParallel 4x1",
        experiment(8, {32}, adam(), model_parallel(4, 1, {{".*", json::array()}})), 4);
    // Two Conv2D split along their filters, the first with its bias replicated.
    json conv = experiment(16, {8}, adam(),
                           model_parallel(2, 2,
                                          {{"conv2d.*kernel", {nullptr, nullptr, nullptr, "model"}},
                                           {"conv2d_1/bias", {"model"}}}));
    json& image = conv["model"]["config"]["layers"];
    image[0]["config"]["batch_shape"] = {nullptr, 4, 4, 1};
    const json same = {{"class_name", "Conv2D"},
                       {"config", {{"filters", 4}, {"kernel_size", 3}, {"padding", "same"}}}};
    const json valid = {{"class_name", "Conv2D"}, {"config", {{"filters", 6}, {"kernel_size", 3}}}};
    image.insert(image.begin() + 1,
                 {same, valid, {{"class_name", "Flatten"}, {"config", json::object()}}});
    row("ModelParallel 2x2 Conv2D filters", conv, 4);
  }
  void engineAllocatesThePlan() {
    QFETCH(QString, doc);
    QFETCH(int, devices);
    RunPlan run = plan_of(json::parse(doc.toStdString()), devices);
    const MemoryPlan plan = plan_memory(capacity_input(run));
    run.model->fit(run.data.x, run.data.y, run.spec.fit);
    const std::vector<DeviceMemory>& measured = run.model->fit_device_memory();
    QCOMPARE(measured.size(), plan.devices.size());
    for (size_t d = 0; d < measured.size(); ++d) {
      const DeviceMemory& m = measured[d];
      const DeviceMemory& p = plan.devices[d];
      const QByteArray where = "device " + QByteArray::number(static_cast<int>(d));
      QVERIFY2(m.weights == p.weights, where + " weights");
      QVERIFY2(m.gradients == p.gradients, where + " gradients");
      QVERIFY2(m.optimizer_slots == p.optimizer_slots,
               where + " slots " + QByteArray::number(static_cast<qlonglong>(m.optimizer_slots)) +
                   " vs " + QByteArray::number(static_cast<qlonglong>(p.optimizer_slots)));
      QVERIFY2(within(m.activations, p.activations, 0.05),
               where + " activations " + QByteArray::number(static_cast<qlonglong>(m.activations)) +
                   " vs " + QByteArray::number(static_cast<qlonglong>(p.activations)));
      QVERIFY2(within(m.buffers, p.buffers, 0.05),
               where + " buffers " + QByteArray::number(static_cast<qlonglong>(m.buffers)) +
                   " vs " + QByteArray::number(static_cast<qlonglong>(p.buffers)));
    }
    QVERIFY(plan.host >= run.model->optimizer()->slot_bytes() * (plan.sharded_update ? 1 : 0));
  }

  void bytesText() {
    QCOMPARE(bytes_text(96), std::string("96 B"));
    QCOMPARE(bytes_text(1536), std::string("1.50 KiB"));
    QCOMPARE(bytes_text(int64_t{3} << 30), std::string("3.00 GiB"));
    QCOMPARE(bytes_text(int64_t{200} << 20), std::string("200 MiB"));
  }
};

QTEST_GUILESS_MAIN(TestCapacity)
#include "tst_capacity.moc"
