// DataParallel over Open MPI processes (run by mpirun with 2 and 4 processes, ctest mpi/*)
// against the same device count on threads, computed on every rank: the History, the weights,
// evaluate() and predict() bit for bit, with 1 and 2 devices per process, ring and naive, an
// uneven last batch and a validation split, the update replicated or sharded (then the model's
// optimizer ends with every process's slots), BatchNormalization's statistics of the global
// batch summed across processes or each device's own (device 0's moving statistics broadcast
// from rank 0); and every rank's weights equal at each epoch end.
// ModelParallel the same way: a (P x rows per process) x 2 mesh, each process hosting whole mesh
// rows, kernels split by columns and by rows, ring and naive, clipnorm (its norms all-reduced
// along a row), an uneven last batch, and BatchNormalization (its sums along a column); and meshes
// whose rows span processes (the model axis named first; one device per process), their rows'
// exchanges then crossing processes too, with and without a penalty (whose loss needs the whole
// model at every step).
#include <QTest>
#include <functional>

#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "tests/core/fixtures.h"
#include "tests/mpi/mpi_fixture.h"

using namespace fitbench;

namespace {

// At each epoch end, every rank's hash of the model's weights (its device 0's replica).
class ReplicaCheck : public Callback {
 public:
  explicit ReplicaCheck(ProcessGroup& g) : g_(g) {}
  void on_epoch_end(int, Logs&) override {
    std::vector<float> all;
    for (const NamedWeight& w : model_->get_weights())
      all.insert(all.end(), w.values.begin(), w.values.end());
    const auto hashes = mpi_test::gather(g_, mpi_test::hash_floats(all));
    for (uint64_t h : hashes) differing += h != hashes[0];
    ++epochs;
  }
  int differing = 0, epochs = 0;

 private:
  ProcessGroup& g_;
};

fixtures::Run train(const std::function<void(Sequential&)>& distribute, Callback* check, int batch,
                    const std::vector<int64_t>& hidden = {6},
                    const OptimizerSpec& optimizer = fixtures::optimizer("Adam", 0.01),
                    bool batch_norm = false, bool conv = false, bool penalty = true) {
  set_random_seed(11);
  Matrix x, y;
  fixtures::make_data(x, y, 5, 3);
  ModelSpec spec = fixtures::classifier(5, hidden, 3);
  if (!penalty) spec.layers[1].kernel_regularizer = {};
  if (batch_norm) {
    // After the first Dense: its statistics are the global batch's, summed across processes.
    LayerSpec bn;
    bn.class_name = "BatchNormalization";
    spec.layers.insert(spec.layers.begin() + 2, bn);
  }
  if (conv) {
    // The first Dense's 8 units as a (1, 4, 2) image through Conv2D(4, 1x2, relu) and Flatten.
    LayerSpec reshape, conv2d, flatten;
    reshape.class_name = "Reshape";
    reshape.target_shape = {1, 4, 2};
    conv2d.class_name = "Conv2D";
    conv2d.filters = 4;
    conv2d.kernel_size = {1, 2};
    conv2d.activation = "relu";
    flatten.class_name = "Flatten";
    spec.layers.insert(spec.layers.begin() + 2, {reshape, conv2d, flatten});
  }
  Sequential m(spec);
  fixtures::compile(m, optimizer);
  distribute(m);
  FitOptions fit;
  fit.epochs = 3;
  fit.batch_size = batch;
  fit.validation_split = 0.2;
  fit.verbose = 0;
  RunOptions run;
  if (check) run.callbacks.push_back(check);
  fixtures::Run r;
  r.history = m.fit(x, y, fit, run);
  r.weights = m.get_weights();
  r.evaluated = m.evaluate(x, y, 7);
  r.predicted = m.predict(x, 9);
  // The optimizer's state, as a saved model holds it.
  for (const Optimizer::SlotVariable& slot : m.optimizer()->keras_slots())
    r.weights.push_back(
        {slot.kind,
         {},
         std::vector<float>(slot.value->data(), slot.value->data() + slot.value->size())});
  return r;
}

}  // namespace

class TestMpiTraining : public QObject {
  Q_OBJECT
  std::shared_ptr<ProcessGroup> group_;

 private slots:
  void initTestCase() { group_ = mpi_test::start(); }
  void cleanupTestCase() {
    group_.reset();
    mpi_test::stop();
  }
  void equals_threads_data();
  void equals_threads();
  void model_parallel_equals_threads_data();
  void model_parallel_equals_threads();

 private:
  // Bit for bit: the History, the weights and optimizer slots, evaluate() and predict().
  static void compare(const fixtures::Run& mpi, const fixtures::Run& one);
};

void TestMpiTraining::equals_threads_data() {
  QTest::addColumn<int>("local");
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<int>("batch");
  QTest::addColumn<bool>("sharded");
  QTest::addColumn<bool>("batch_norm");
  QTest::addColumn<bool>("per_device");
  for (int local : {1, 2})
    for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
      for (int batch : {16, 13})
        for (bool sharded : {false, true})
          QTest::addRow("%d per process, %s, batch %d%s", local, algorithm_name(a), batch,
                        sharded ? ", sharded update" : "")
              << local << static_cast<int>(a) << batch << sharded << false << false;
  for (int local : {1, 2})
    for (bool per_device : {false, true})
      QTest::addRow("BatchNormalization, %s statistics, %d per process, batch 13",
                    per_device ? "per-device" : "global", local)
          << local << static_cast<int>(CollectiveAlgorithm::kRing) << 13 << false << true
          << per_device;
}

void TestMpiTraining::equals_threads() {
  QFETCH(int, local);
  QFETCH(int, algorithm);
  QFETCH(int, batch);
  QFETCH(bool, sharded);
  QFETCH(bool, batch_norm);
  QFETCH(bool, per_device);
  const int devices = group_->size() * local;
  RehearsalOptions across{.algorithm = static_cast<CollectiveAlgorithm>(algorithm)};
  across.per_device_batch_statistics = per_device;
  across.sharded_update_min_elements = sharded ? 0 : INT64_MAX;
  across.processes = group_;
  ReplicaCheck check(*group_);
  const fixtures::Run mpi =
      train([&](Sequential& m) { use_data_parallel(m, devices, across); }, &check, batch, {6},
            fixtures::optimizer("Adam", 0.01), batch_norm);
  QCOMPARE(check.epochs, 3);
  QCOMPARE(check.differing, 0);
  // The same devices as threads of this process.
  RehearsalOptions threads = across;
  threads.processes = nullptr;
  const fixtures::Run one =
      train([&](Sequential& m) { use_data_parallel(m, devices, threads); }, nullptr, batch, {6},
            fixtures::optimizer("Adam", 0.01), batch_norm);
  compare(mpi, one);
}

void TestMpiTraining::model_parallel_equals_threads_data() {
  QTest::addColumn<QString>("mapping");
  QTest::addColumn<int>("rows");
  QTest::addColumn<QString>("layout");
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<bool>("clipnorm");
  QTest::addColumn<int>("batch");
  QTest::addColumn<bool>("batch_norm");
  for (int rows : {1, 2})
    for (const char* layout : {"columns", "rows"})
      for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
        QTest::addRow("%d mesh row%s per process, %s, %s", rows, rows == 1 ? "" : "s", layout,
                      algorithm_name(a))
            << QString("inside") << rows << QString(layout) << static_cast<int>(a) << false << 13
            << false;
  QTest::addRow("1 mesh row per process, columns, clipnorm, batch 16")
      << QString("inside") << 1 << QString("columns")
      << static_cast<int>(CollectiveAlgorithm::kRing) << true << 16 << false;
  QTest::addRow("Conv2D split by its filters, 2 mesh rows per process")
      << QString("inside") << 2 << QString("conv") << static_cast<int>(CollectiveAlgorithm::kRing)
      << false << 13 << false;
  for (int rows : {1, 2})
    QTest::addRow("BatchNormalization, %d mesh row%s per process, columns", rows,
                  rows == 1 ? "" : "s")
        << QString("inside") << rows << QString("columns")
        << static_cast<int>(CollectiveAlgorithm::kRing) << false << 13 << true;
  // Rows across processes: the model axis named first (each process hosts whole columns on 2
  // processes, half columns on 4), or one device per process (each row over 2 processes).
  for (const char* mapping : {"model first", "one device per process"})
    for (const char* layout : {"columns", "rows", "conv"})
      for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
        QTest::addRow("%s, %s, %s", mapping, layout, algorithm_name(a))
            << QString(mapping) << 1 << QString(layout) << static_cast<int>(a) << false << 13
            << false;
  for (const char* mapping : {"model first", "one device per process"}) {
    QTest::addRow("%s, clipnorm, batch 16", mapping)
        << QString(mapping) << 1 << QString("columns")
        << static_cast<int>(CollectiveAlgorithm::kRing) << true << 16 << false;
    QTest::addRow("%s, BatchNormalization", mapping)
        << QString(mapping) << 1 << QString("columns")
        << static_cast<int>(CollectiveAlgorithm::kRing) << false << 13 << true;
    // The model's whole weights then gather at epoch ends only.
    QTest::addRow("%s, no penalty", mapping)
        << QString(mapping) << 1 << QString("no penalty")
        << static_cast<int>(CollectiveAlgorithm::kRing) << false << 13 << false;
  }
}

void TestMpiTraining::model_parallel_equals_threads() {
  QFETCH(QString, mapping);
  QFETCH(int, rows);
  QFETCH(QString, layout);
  QFETCH(int, algorithm);
  QFETCH(bool, clipnorm);
  QFETCH(int, batch);
  QFETCH(bool, batch_norm);
  DistributionSpec spec;
  spec.class_name = "ModelParallel";
  const int processes = group_->size();
  spec.mesh_shape = {processes * rows, 2};
  spec.axis_names = {"batch", "model"};
  if (mapping == "model first") {
    spec.mesh_shape = {2, processes};
    spec.axis_names = {"model", "batch"};
    spec.batch_dim_name = "batch";
  } else if (mapping == "one device per process") {
    spec.mesh_shape = {processes / 2, 2};
  }
  // Dense 8, 6, 4 and 3 units (classifier()): two hidden kernels split over the model axis.
  if (layout == "columns" || layout == "no penalty")
    spec.layout_map = {{"dense/kernel", {"", "model"}},
                       {"dense/bias", {"model"}},
                       {"dense_1/kernel", {"", "model"}}};
  else if (layout == "conv")
    spec.layout_map = {{"conv2d/kernel", {"", "", "", "model"}}, {"dense_1/kernel", {"", "model"}}};
  else
    spec.layout_map = {{"dense_1/kernel", {"model", ""}}, {"dense_2/kernel", {"model", ""}}};
  const int devices = spec.mesh_shape[0] * spec.mesh_shape[1];
  OptimizerSpec optimizer = fixtures::optimizer("Adam", 0.01);
  if (clipnorm) optimizer.clipnorm = 0.05;
  RehearsalOptions across{.algorithm = static_cast<CollectiveAlgorithm>(algorithm)};
  across.processes = group_;
  ReplicaCheck check(*group_);
  const fixtures::Run mpi =
      train([&](Sequential& m) { use_model_parallel(m, spec, devices, across); }, &check, batch,
            {6, 4}, optimizer, batch_norm, layout == "conv", layout != "no penalty");
  QCOMPARE(check.epochs, 3);
  QCOMPARE(check.differing, 0);
  RehearsalOptions threads = across;
  threads.processes = nullptr;
  const fixtures::Run one =
      train([&](Sequential& m) { use_model_parallel(m, spec, devices, threads); }, nullptr, batch,
            {6, 4}, optimizer, batch_norm, layout == "conv", layout != "no penalty");
  compare(mpi, one);
}

void TestMpiTraining::compare(const fixtures::Run& mpi, const fixtures::Run& one) {
  QCOMPARE(mpi.history.history, one.history.history);
  QCOMPARE(mpi.weights.size(), one.weights.size());
  for (size_t i = 0; i < mpi.weights.size(); ++i)
    QCOMPARE(mpi.weights[i].values, one.weights[i].values);
  QCOMPARE(mpi.evaluated, one.evaluated);
  QVERIFY(mpi.predicted == one.predicted);
}

QTEST_GUILESS_MAIN(TestMpiTraining)
#include "tst_mpi_training.moc"
