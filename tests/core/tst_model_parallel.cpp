// ModelParallel on threaded devices equals one device: the same epoch logs, evaluate() and
// predict() results and final weights to float32 rounding (1e-5 relative), on 1x2, 2x2 and 2x1
// meshes, with kernels sharded by columns and by rows, sharded and replicated biases, every
// optimizer, norm clipping, dropout, a regularizer and uneven batches; each device holds only its
// slice; replicas along the batch axis stay bitwise identical; layout errors are InputErrors.
// Its trace: every step's spans per device in the order the layout implies, each collective
// with its operation, algorithm and bytes, one waiting span for every device of a group but the
// last to arrive, and what the rehearsal knobs added (a slow device's stretch, a link's modeled
// time); the knobs change time, not numbers; apply_distribution and fitbench-cli take them.
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include "core/base/error.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/executors/model_parallel_executor.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/trace/trace.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "tests/core/fixtures.h"

using namespace fitbench;

namespace {

using fixtures::max_rel_diff;
using fixtures::rel;
using fixtures::Run;

// 6 -> dense(8, relu, L2) -> dropout -> dense_1(4, tanh) -> dense_2(4, softmax)
ModelSpec mlp() { return fixtures::classifier(6, {4}, 4); }

void make_data(Matrix& x, Matrix& y) { fixtures::make_data(x, y, 6, 4); }

using Entries = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Layouts by name. "columns": Keras's documented choice (kernels and biases by units).
// "rows": kernels by input rows. "mixed": one of each, a replicated bias under a column-sharded
// kernel and a replicated layer. "bias": a sharded bias under a replicated kernel.
Entries layout(const std::string& name) {
  if (name == "columns") return {{"kernel", {"", "model"}}, {"bias", {"model"}}};
  if (name == "rows")
    return {{"dense/kernel", {"model", ""}},
            {"dense_1/kernel", {"model"}},
            {"dense_2/kernel", {"model", ""}},
            {"dense/bias", {"model"}}};
  if (name == "mixed") return {{"dense/kernel", {"", "model"}}, {"dense_1/kernel", {"model", ""}}};
  if (name == "bias") return {{"dense_1/bias", {"model"}}};
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

// By name, with the variants the equivalence test runs.
OptimizerSpec opt(const std::string& name, double lr) {
  if (name == "SGD+momentum") return fixtures::optimizer("SGD", lr, 0.9, true);
  OptimizerSpec o = fixtures::optimizer(name, lr);
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
// second batch group gets none. Without `dist`: one device. With evaluate() and predict().
Run train(const OptimizerSpec& o, const DistributionSpec* dist, int epochs = 3, int fits = 1,
          const RehearsalOptions& knobs = {}) {
  return fixtures::train(
      mlp(), 6, 4, o,
      [&](Sequential& m) {
        if (dist) use_model_parallel(m, *dist, dist->mesh_shape[0] * dist->mesh_shape[1], knobs);
      },
      FitOptions{.epochs = epochs, .batch_size = 10, .shuffle = true, .verbose = 0}, fits, true);
}

// A built and compiled mlp() model and an executor made directly (as fit() would make it), to
// look at its trace and slices after a few steps.
struct Direct {
  Matrix x, y;
  Sequential m{mlp()};
  std::unique_ptr<fixtures::ExecutorSetup> setup;
  std::unique_ptr<ModelParallelExecutor> exec;
  Direct(const DistributionSpec& dist, const OptimizerSpec& o, const RehearsalOptions& knobs = {}) {
    set_random_seed(3);
    make_data(x, y);
    fixtures::compile(m, o, false);
    m.build(6);
    setup = std::make_unique<fixtures::ExecutorSetup>(m, true);
    const int devices = dist.mesh_shape[0] * dist.mesh_shape[1];
    exec = std::make_unique<ModelParallelExecutor>(
        setup->ctx, make_model_parallel_plan(m.network(), dist, devices), o,
        std::make_shared<ModelParallelOptimizers>(), knobs);
    exec->prepare(16);
    exec->pull_from_model();
  }
  // n train steps on the first `rows` rows; the totals they add up to.
  StepTotals steps(int n, Index rows = 16) {
    StepTotals totals;
    totals.reset(0);
    for (int s = 0; s < n; ++s) exec->train_step(x.topRows(rows), y.topRows(rows), s, totals);
    return totals;
  }
};

// A collective a device takes part in: its operation and its whole buffer per row of the
// device's shard (0: a fixed size, given in `fixed`).
struct Exchange {
  CollectiveOp op;
  Index per_row = 0;
  Index fixed = 0;
};

// The row collectives of mlp() under each layout (model axis 2), by hand from the layers
// 6 -> dense(8) -> dropout -> dense_1(4) -> dense_2(4). Column-sharded kernels all-gather their
// outputs going forward and all-reduce partial input gradients going back; row-sharded kernels
// all-reduce partial outputs and all-gather input gradients; a replicated layer exchanges
// nothing; the first layer computes no input gradient.
void row_exchanges(const std::string& layout, std::vector<Exchange>& forward,
                   std::vector<Exchange>& backward) {
  const auto ag = CollectiveOp::kAllGather, ar = CollectiveOp::kAllReduce;
  if (layout == "columns") {
    forward = {{ag, 8}, {ag, 4}, {ag, 4}};
    backward = {{ar, 4}, {ar, 8}};  // dense_2's input is 4 wide, dense_1's 8
  } else if (layout == "rows") {
    forward = {{ar, 8}, {ar, 4}, {ar, 4}};
    backward = {{ag, 4}, {ag, 8}};
  } else if (layout == "mixed") {  // dense by columns, dense_1 by rows, dense_2 replicated
    forward = {{ag, 8}, {ar, 4}};
    backward = {{ag, 8}};
  } else {  // bias: dense_1's bias alone, gathered whole (4 floats) under its replicated kernel
    forward = {{ag, 0, 4}};
    backward = {};
  }
}

// Checks one ModelParallel train step's trace against the mesh and the layout, whatever the
// machine's load: every device's spans follow each other without gap or overlap: shard copy,
// forward, each row collective of the forward pass then forward again, backward, each row
// collective of the backward pass then backward again, the gradient all-reduce along the batch
// axis (B > 1), the wait for every device (M > 1), update (with `clip` and M > 1: update, the
// all-reduce of the squared norms over the row, update). Every collective has its operation,
// the algorithm, and the bytes a ring over 2 devices receives (all_gather: the other half of
// the buffer; all_reduce: the whole of it). At each synchronization exactly one device of its
// group (row, column, all) has no waiting span. Collective spans note the modeled link time;
// compute spans of a device slower than 1 note a stretch of work * (1/speed - 1).
void check_trace(ModelParallelExecutor& exec, const ModelParallelPlan& plan,
                 const std::string& layout, Index batch_rows, const RehearsalOptions& knobs,
                 bool clip) {
  const StepTrace& t = *exec.step_trace();
  const int devices = plan.batch * plan.model;
  QCOMPARE(int(t.spans.size()), devices);
  std::vector<Exchange> fwd, bwd;
  if (plan.model > 1) row_exchanges(layout, fwd, bwd);
  // Per device, whether it waited at each synchronization, in order.
  std::vector<std::vector<bool>> waited(devices);
  for (int b = 0; b < plan.batch; ++b) {
    for (int m = 0; m < plan.model; ++m) {
      const int d = plan.device_at(b, m);
      const Index rows = batch_rows / plan.batch + (b < batch_rows % plan.batch ? 1 : 0);
      QCOMPARE(t.shard_rows[d], int64_t(rows));
      const auto& spans = t.spans[d];
      const auto& injected = exec.injections(d);
      QCOMPARE(injected.size(), spans.size());
      const double speed = knobs.speed.empty() ? 1.0 : knobs.speed[d];
      size_t i = 0;
      auto next = [&](SpanKind kind) {
        QVERIFY2(i < spans.size() && spans[i].kind == kind,
                 qPrintable(QString("device %1 span %2: want %3, got %4")
                                .arg(d)
                                .arg(i)
                                .arg(span_name(kind))
                                .arg(i < spans.size() ? span_label(spans[i]) : "the end")));
        const SpanInjection& in = injected[i];
        if (kind == SpanKind::kForward || kind == SpanKind::kBackward ||
            kind == SpanKind::kUpdate) {
          QVERIFY(std::abs(in.added_us - in.work_us * (1.0 / speed - 1.0)) <= 0.002);
          QVERIFY(spans[i].duration_us >= in.work_us + in.added_us - 0.002);
        } else if (kind != SpanKind::kCollective) {
          QCOMPARE(in.added_us, 0.0);
        }
        if (i > 0) QVERIFY(std::abs(spans[i].begin_us - spans[i - 1].end_us()) < 1e-6);
        ++i;
      };
      // A synchronization: an optional waiting span, then the collective (if any).
      auto sync = [&](const Exchange* e, int group, int rank) {
        const bool w = i < spans.size() && spans[i].kind == SpanKind::kWaiting;
        waited[d].push_back(w);
        if (w) next(SpanKind::kWaiting);
        if (QTest::currentTestFailed() || !e) return;
        const size_t at = i;
        next(SpanKind::kCollective);
        if (QTest::currentTestFailed()) return;
        const TraceSpan& c = spans[at];
        const Index elements = e->fixed ? e->fixed : e->per_row * rows;
        QCOMPARE(c.op, e->op);
        QCOMPARE(c.algorithm, knobs.algorithm);
        // Over 2 devices an all_reduce receives the whole buffer (ring: half in each phase;
        // naive: the other's buffer, or the sum); an all_gather the other half, except the naive
        // one's rank 1, which receives the whole buffer from rank 0.
        const bool whole = e->op == CollectiveOp::kAllReduce ||
                           (c.algorithm == CollectiveAlgorithm::kNaive && rank == 1);
        QCOMPARE(c.bytes_received, int64_t(4 * (whole ? elements : elements / 2)));
        const double link = modeled_link_us(c.op, c.algorithm, group, elements, knobs.link);
        QCOMPARE(injected[at].added_us, link);
        QVERIFY(c.duration_us >= link - 0.002);
      };
      next(SpanKind::kShardCopy);
      next(SpanKind::kForward);
      for (const Exchange& e : fwd) {
        sync(&e, plan.model, m);
        next(SpanKind::kForward);
      }
      next(SpanKind::kBackward);
      for (const Exchange& e : bwd) {
        sync(&e, plan.model, m);
        next(SpanKind::kBackward);
      }
      if (plan.batch > 1) {
        Index elements = 0;
        for (const Matrix* v : exec.device_values(d)) elements += v->size();
        const Exchange grads{CollectiveOp::kAllReduce, 0, elements};
        sync(&grads, plan.batch, b);
      }
      if (plan.model > 1) sync(nullptr, devices, d);
      if (clip && plan.model > 1) {
        // Norm clipping: the squared norms of the 6 variables' slices, summed over the row.
        next(SpanKind::kUpdate);
        const Exchange norms{CollectiveOp::kAllReduce, 0, 6};
        sync(&norms, plan.model, m);
      }
      next(SpanKind::kUpdate);
      QCOMPARE(i, spans.size());
      if (QTest::currentTestFailed()) return;
    }
  }
  // Exactly one member of each group arrives last and waits for nobody.
  auto one_last = [&](const std::vector<int>& group, size_t k) {
    int not_waiting = 0;
    for (int d : group) not_waiting += waited[d][k] ? 0 : 1;
    QCOMPARE(not_waiting, 1);
  };
  for (int b = 0; b < plan.batch; ++b) {
    std::vector<int> row;
    for (int m = 0; m < plan.model; ++m) row.push_back(plan.device_at(b, m));
    for (size_t k = 0; plan.model > 1 && k < fwd.size() + bwd.size(); ++k) one_last(row, k);
  }
  const size_t grad_sync = fwd.size() + bwd.size();
  for (int m = 0; m < plan.model && plan.batch > 1; ++m) {
    std::vector<int> column;
    for (int b = 0; b < plan.batch; ++b) column.push_back(plan.device_at(b, m));
    one_last(column, grad_sync);
  }
  if (plan.model > 1) {
    std::vector<int> all(devices);
    for (int d = 0; d < devices; ++d) all[d] = d;
    one_last(all, grad_sync + (plan.batch > 1 ? 1 : 0));
  }
  for (int b = 0; b < plan.batch && clip && plan.model > 1; ++b) {
    std::vector<int> row;
    for (int m = 0; m < plan.model; ++m) row.push_back(plan.device_at(b, m));
    one_last(row, grad_sync + (plan.batch > 1 ? 2 : 1));
  }
}

}  // namespace

class TestModelParallel : public QObject {
  Q_OBJECT
 private slots:
  void equals_one_device_data();
  void equals_one_device();
  void consecutive_fits_continue_the_optimizer();
  void devices_hold_slices();
  void device_plan_is_what_devices_hold_data();
  void device_plan_is_what_devices_hold();
  void mesh_lines_over_processes_data();
  void mesh_lines_over_processes();
  void deterministic();
  void plan();
  void layout_errors();
  void optimizer_state_is_taken_over();
  void trace_of_a_step_data();
  void trace_of_a_step();
  void no_reallocation_in_steady_state();
  void knobs_change_time_not_numbers();
  void distribution_takes_the_knobs();
  void cli_runs_with_knobs_and_trace();
  void device_error_propagates();
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
      for (const char* l : {"columns", "rows", "mixed", "bias"}) {
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
  // Executors are made by fit(); build one directly to look inside after a few steps.
  Direct run(spec_for(2, 2, "mixed"), opt("SGD", 0.1));
  const StepTotals totals = run.steps(3);
  ModelParallelExecutor& exec = *run.exec;
  Sequential& m = run.m;
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

void TestModelParallel::device_plan_is_what_devices_hold_data() {
  QTest::addColumn<int>("batch");
  QTest::addColumn<int>("model");
  QTest::addColumn<QString>("layout");
  QTest::addColumn<bool>("batchAxisSecond");
  for (const char* l : {"columns", "rows", "mixed"}) {
    QTest::addRow("2x2 %s", l) << 2 << 2 << QString(l) << false;
    QTest::addRow("1x2 %s", l) << 1 << 2 << QString(l) << false;
    QTest::addRow("2x2 %s batch axis second", l) << 2 << 2 << QString(l) << true;
  }
}

// The pictures the batch split view draws (core's device_plan: mesh placement, variable pieces,
// rows per mesh row) against what the executor's devices hold and train on after real steps.
void TestModelParallel::device_plan_is_what_devices_hold() {
  QFETCH(int, batch);
  QFETCH(int, model);
  QFETCH(QString, layout);
  QFETCH(bool, batchAxisSecond);
  DistributionSpec dist = spec_for(batch, model, layout.toStdString());
  if (batchAxisSecond) {
    dist.mesh_shape = {model, batch};
    dist.axis_names = {"model", "batch"};
    dist.batch_dim_name = "batch";
  }
  Direct run(dist, opt("SGD", 0.1));
  run.steps(2, 13);  // 13 rows: uneven parts over the batch axis
  const std::vector<VariableInfo> infos = model_variables(mlp(), 6);
  const LayoutCheck check = check_layout_map(infos, dist, batch * model);
  QVERIFY(check.ok());
  const MeshPlacement mesh = mesh_placement(dist);
  QCOMPARE(mesh.batch, batch);
  QCOMPARE(mesh.model, model);
  const auto& vars = run.m.variables();
  int pieces_seen = 0;
  for (const VariablePiece& piece : variable_pieces(check.variables, mesh)) {
    const Matrix& full = vars[size_t(piece.variable)].value;
    // The matrix block of the piece: a kernel's dim 0 is rows, its dim 1 and a bias's dim 0
    // columns (a bias is one row).
    const bool rows = piece.dim == 0 && full.rows() > 1;
    for (int d = 0; d < batch * model; ++d) {
      const Matrix& held = *run.exec->device_values(d)[size_t(piece.variable)];
      const bool listed =
          std::find(piece.devices.begin(), piece.devices.end(), d) != piece.devices.end();
      if (piece.dim < 0) {
        QVERIFY(listed);
        QVERIFY(held == full);
        continue;
      }
      const Matrix block = rows ? Matrix(full.middleRows(piece.begin, piece.end - piece.begin))
                                : Matrix(full.middleCols(piece.begin, piece.end - piece.begin));
      const bool same = held.rows() == block.rows() && held.cols() == block.cols() && held == block;
      QCOMPARE(same, listed);
      ++pieces_seen;
    }
  }
  if (model > 1) QVERIFY(pieces_seen > 0);
  // Rows: every device of mesh row b trains on part b of batch_parts over the batch axis.
  const StepTrace* trace = run.exec->step_trace();
  QVERIFY(trace);
  const std::vector<int64_t> parts = batch_parts(13, mesh.batch);
  for (int b = 0; b < mesh.batch; ++b)
    for (int m = 0; m < mesh.model; ++m)
      QCOMPARE(trace->shard_rows[size_t(mesh.at(b, m))], parts[size_t(b)]);
}

void TestModelParallel::mesh_lines_over_processes_data() {
  QTest::addColumn<QString>("axes");
  QTest::addColumn<int>("shape0");
  QTest::addColumn<int>("shape1");
  QTest::addColumn<int>("processes");
  QTest::addColumn<int>("process");
  // What process `process` hosts of the rows and of the columns: "within" or "spans", members,
  // lines, color; or the error's start.
  QTest::addColumn<QString>("rows");
  QTest::addColumn<QString>("columns");
  QTest::newRow("2 x 2 on 2: whole rows") << "batch,model" << 2 << 2 << 2 << 1 << "within 2 [1] 1"
                                          << "spans 1 [0 1] 0";
  QTest::newRow("4 x 2 on 2: two rows each")
      << "batch,model" << 4 << 2 << 2 << 1 << "within 2 [2 3] 2"
      << "spans 2 [0 1] 0";
  QTest::newRow("2 x 2 on 4: a device each") << "batch,model" << 2 << 2 << 4 << 3 << "spans 1 [1] 1"
                                             << "spans 1 [1] 1";
  QTest::newRow("model first, 2 x 2 on 2: whole columns")
      << "model,batch" << 2 << 2 << 2 << 1 << "spans 1 [0 1] 0"
      << "within 2 [1] 1";
  QTest::newRow("model first, 2 x 4 on 4: half columns")
      << "model,batch" << 2 << 4 << 4 << 2 << "spans 1 [0 1] 0"
      << "spans 2 [1] 1";
  QTest::newRow("2 x 3 on 3: rows split 2 and 1")
      << "batch,model" << 2 << 3 << 3 << 0
      << "the mesh's 2 x 3 devices (batch x model) place batch group 0 on cpu:0, cpu:1, cpu:2 "
         "unevenly over processes 0 to 1 (2 and 1 devices): across processes every mesh row "
         "and column must have as many devices in each process it spans; make the devices per "
         "process (2) a multiple or a divisor of the mesh's model axis (3)"
      << "";
}

void TestModelParallel::mesh_lines_over_processes() {
  QFETCH(QString, axes);
  QFETCH(int, shape0);
  QFETCH(int, shape1);
  QFETCH(int, processes);
  QFETCH(int, process);
  QFETCH(QString, rows);
  QFETCH(QString, columns);
  DistributionSpec dist;
  dist.class_name = "ModelParallel";
  dist.mesh_shape = {shape0, shape1};
  for (const QString& a : axes.split(',')) dist.axis_names.push_back(a.toStdString());
  dist.batch_dim_name = "batch";
  const MeshPlacement mesh = mesh_placement(dist);
  auto said = [&](bool of_rows) {
    MeshLines lines;
    const std::string why = mesh_lines(mesh, processes, process, of_rows, lines);
    if (!why.empty()) return QString::fromStdString(why);
    QString text = lines.within ? "within " : "spans ";
    text += QString::number(lines.members) + " [";
    for (size_t i = 0; i < lines.lines.size(); ++i)
      text += (i ? " " : "") + QString::number(lines.lines[i]);
    return text + "] " + QString::number(lines.color);
  };
  const QString why = QString::fromStdString(mesh_process_error(mesh, processes));
  if (columns.isEmpty()) {  // refused
    QVERIFY2(said(true).startsWith(rows), qPrintable(said(true)));
    QVERIFY2(why.startsWith(rows), qPrintable(why));
    return;
  }
  QCOMPARE(said(true), rows);
  QCOMPARE(said(false), columns);
  QCOMPARE(why, QString());
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

// A model that trained on one device continues on a mesh from its optimizer's state (each
// device takes its slice of the slots), as it would have continued on one device; the state
// gathered back from the devices continues on one device again.
void TestModelParallel::optimizer_state_is_taken_over() {
  const FitOptions one{.epochs = 1, .batch_size = 32, .verbose = 0};
  Matrix x, y;
  make_data(x, y);
  set_random_seed(1);
  Sequential single(mlp());
  fixtures::compile(single, opt("Adam", 0.01), false);
  set_random_seed(1);
  Sequential moved(mlp());
  fixtures::compile(moved, opt("Adam", 0.01), false);
  single.fit(x, y, one);
  moved.fit(x, y, one);
  use_model_parallel(moved, spec_for(1, 2, "columns"), 2);
  const History a = single.fit(x, y, one);
  const History b = moved.fit(x, y, one);
  QVERIFY(rel(a.history.at("loss")[0], b.history.at("loss")[0]) < 1e-5);
  QCOMPARE(moved.optimizer()->iterations(), single.optimizer()->iterations());
  const auto sa = single.optimizer_state(), sb = moved.optimizer_state();
  QCOMPARE(sa->slot_variables.size(), sb->slot_variables.size());
  for (size_t i = 0; i < sa->slot_variables.size(); ++i)
    for (size_t k = 0; k < sa->slot_variables[i].values.size(); ++k)
      QVERIFY(rel(sa->slot_variables[i].values[k], sb->slot_variables[i].values[k]) < 1e-5);
  // evaluate() and predict() work on the mesh.
  const Logs logs = moved.evaluate(x, y, 16);
  QVERIFY(logs.count("loss"));
}

void TestModelParallel::trace_of_a_step_data() {
  QTest::addColumn<int>("batch");
  QTest::addColumn<int>("model");
  QTest::addColumn<QString>("layout");
  QTest::addColumn<int>("rows");
  QTest::addColumn<QString>("algorithm");
  QTest::addColumn<bool>("clip");
  const std::pair<int, int> meshes[] = {{1, 2}, {2, 2}, {2, 1}};
  for (auto [b, m] : meshes)
    for (const char* l : {"columns", "rows", "mixed", "bias"}) {
      if (m == 1 && QString(l) != "columns") continue;
      for (int rows : {16, 15})
        for (const char* a : {"ring", "naive"})
          QTest::newRow(
              qPrintable(QString("%1x%2/%3/%4 rows/%5").arg(b).arg(m).arg(l).arg(rows).arg(a)))
              << b << m << QString(l) << rows << QString(a) << false;
      QTest::newRow(qPrintable(QString("%1x%2/%3/clipnorm").arg(b).arg(m).arg(l)))
          << b << m << QString(l) << 16 << QString("ring") << true;
    }
}

void TestModelParallel::trace_of_a_step() {
  // The last device at half speed, 5 us and 2 GB/s per message: every step's trace has the
  // mesh's, the layout's and the optimizer's shape, and what the knobs added (check_trace).
  QFETCH(int, batch);
  QFETCH(int, model);
  QFETCH(QString, layout);
  QFETCH(int, rows);
  QFETCH(QString, algorithm);
  QFETCH(bool, clip);
  const DistributionSpec dist = spec_for(batch, model, layout.toStdString());
  RehearsalOptions knobs;
  knobs.algorithm = parse_algorithm(algorithm.toStdString(), "algorithm");
  knobs.speed.assign(batch * model, 1.0);
  knobs.speed.back() = 0.5;
  knobs.link = {5.0, 2.0};
  Direct run(dist, clip ? opt("Adam+clipnorm", 0.01) : opt("SGD", 0.1), knobs);
  const ModelParallelPlan plan = make_model_parallel_plan(run.m.network(), dist, batch * model);
  for (int step = 0; step < 3; ++step) {
    run.steps(1, rows);
    QCOMPARE(run.exec->step_trace()->step, uint64_t(0));
    check_trace(*run.exec, plan, layout.toStdString(), rows, knobs, clip);
    if (QTest::currentTestFailed()) return;
  }
}

void TestModelParallel::no_reallocation_in_steady_state() {
  Direct run(spec_for(2, 2, "columns"), opt("Adam", 0.01));
  run.steps(1);
  std::vector<const TraceSpan*> first;
  for (const auto& spans : run.exec->step_trace()->spans) first.push_back(spans.data());
  for (int step = 1; step < 12; ++step) {
    run.steps(1, step % 2 ? 11 : 16);  // also a partial batch
    for (size_t d = 0; d < first.size(); ++d)
      QCOMPARE(run.exec->step_trace()->spans[d].data(), first[d]);
  }
}

void TestModelParallel::knobs_change_time_not_numbers() {
  // A slow device and a slow link make the run take longer; the weights are the same bits.
  RehearsalOptions slow;
  slow.speed = {1.0, 0.5, 1.0, 0.25};
  slow.link = {20.0, 0.5};
  for (const char* layout : {"columns", "rows"}) {
    const DistributionSpec dist = spec_for(2, 2, layout);
    const Run plain = train(opt("Adam", 0.01), &dist, 1);
    const Run rehearsed = train(opt("Adam", 0.01), &dist, 1, 1, slow);
    for (size_t i = 0; i < plain.weights.size(); ++i)
      QVERIFY(plain.weights[i].values == rehearsed.weights[i].values);
    QVERIFY(plain.history.history == rehearsed.history.history);
  }
}

void TestModelParallel::distribution_takes_the_knobs() {
  // apply_distribution with an experiment's devices section: ModelParallel takes the speeds and
  // the link; fit() hands every step's trace of the 4 devices to callbacks, and the usage
  // summary has a line per device.
  set_random_seed(2);
  Matrix x, y;
  make_data(x, y);
  Sequential m(mlp());
  fixtures::compile(m, opt("SGD", 0.1), false);
  DevicesSpec devices;
  devices.speed = {1.0, 1.0, 1.0, 0.5};
  devices.link_latency_us = 10.0;
  devices.allreduce = "naive";
  apply_distribution(m, spec_for(2, 2, "columns"), 4, devices);
  TraceRecorder recorder;
  RunOptions run;
  run.callbacks = {&recorder};
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 16, .verbose = 0}, run);
  const RunTrace& trace = recorder.trace();
  QCOMPARE(trace.devices(), 4);
  QCOMPARE(trace.steps().size(), size_t(4));  // 61 rows: 16, 16, 16, 13
  QCOMPARE(trace.shard_rows(3, 0), int64_t(7));
  QCOMPARE(trace.shard_rows(3, 3), int64_t(6));
  int gathers = 0;
  for (const auto& s : trace.spans()) {
    if (s.span.kind != SpanKind::kCollective) continue;
    QCOMPARE(s.span.algorithm, CollectiveAlgorithm::kNaive);
    if (s.span.op == CollectiveOp::kAllGather) ++gathers;
  }
  QCOMPARE(gathers, 4 * 4 * 3);  // 4 steps, 4 devices, 3 sharded layers
  const std::vector<DeviceUsage> usage = summarize(trace);
  QCOMPARE(usage.size(), size_t(4));
  for (const DeviceUsage& u : usage) {
    QVERIFY(u.busy_us > 0.0);
    QVERIFY(u.communication_us > 0.0);
  }
  // The knobs are checked against the mesh's size.
  Sequential other(mlp());
  fixtures::compile(other, opt("SGD", 0.1), false);
  devices.speed = {1.0, 0.5};
  try {
    apply_distribution(other, spec_for(2, 2, "columns"), 4, devices);
    QFAIL("expected an InputError");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("devices.speed"));
  }
}

void TestModelParallel::cli_runs_with_knobs_and_trace() {
  // The command line of the issue: a 2 x 2 mesh, the last device at half speed, a trace file.
  if (!QFileInfo::exists(FITBENCH_CLI)) QSKIP("fitbench-cli is not built in this tree");
  QTemporaryDir dir;
  const QString trace = dir.filePath("t.json");
  QProcess p;
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.remove("FITBENCH_CPU_DEVICES");
  env.remove("XLA_FLAGS");
  p.setProcessEnvironment(env);
  p.start(FITBENCH_CLI, {"run", FITBENCH_SOURCE_DIR "/resources/examples/model_parallel_2x2.json",
                         "--strategy", "model_parallel", "--mesh", "2x2", "--trace", trace,
                         "--device-speed", "1,1,1,0.5", "--epochs", "2"});
  QVERIFY(p.waitForFinished(120000));
  const QString out = QString::fromUtf8(p.readAllStandardOutput());
  const QString err = QString::fromUtf8(p.readAllStandardError());
  QCOMPARE(p.exitCode(), 0);
  QVERIFY2(out.startsWith("Devices: ['cpu:0', 'cpu:1', 'cpu:2', 'cpu:3']\nDistribution: "
                          "ModelParallel\n"),
           qPrintable(out));
  // One usage line per device on stderr (after a note that 4 devices share fewer cores).
  QStringList usage;
  for (const QString& line : err.split('\n', Qt::SkipEmptyParts))
    if (line.startsWith("cpu:")) usage << line;
  QCOMPARE(usage.size(), 4);
  const QRegularExpression form(
      R"(^cpu:(\d)  busy (\d+\.\d)%  communication (\d+\.\d)%  idle (\d+\.\d)%$)");
  for (int d = 0; d < 4; ++d) {
    const auto match = form.match(usage[d]);
    QVERIFY2(match.hasMatch(), qPrintable(usage[d]));
    QCOMPARE(match.captured(1).toInt(), d);
  }
  // The trace: 4 processes; per step and device 2 all_gathers (the two hidden layers; the
  // output layer matches no rule) and 2 all_reduces (the hidden_2 input gradient, the
  // gradients along the batch axis). 400 samples, batch 32: 13 steps per epoch.
  QFile f(trace);
  QVERIFY(f.open(QIODevice::ReadOnly));
  const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
  QStringList processes;
  int gathers = 0, reduces = 0;
  for (const auto& e : doc.object()["traceEvents"].toArray()) {
    const QJsonObject o = e.toObject();
    if (o["name"] == "process_name") processes << o["args"].toObject()["name"].toString();
    if (o["name"] == "all_gather") ++gathers;
    if (o["name"] == "all_reduce") ++reduces;
  }
  QCOMPARE(processes, (QStringList{"cpu:0", "cpu:1", "cpu:2", "cpu:3"}));
  QCOMPARE(gathers, 2 * 13 * 4 * 2);
  QCOMPARE(reduces, 2 * 13 * 4 * 2);
}

void TestModelParallel::device_error_propagates() {
  // A sparse label out of range in the second batch group's shard of the first batch: the error
  // reaches fit()'s caller, every device is released, no device updated anything (the weights
  // are the initial ones), and the model trains afterwards.
  set_random_seed(3);
  Matrix x, y;
  make_data(x, y);
  y(13, 0) = 7.0f;
  Sequential m(mlp());
  fixtures::compile(m, opt("Adam", 0.01), false);
  m.build(6);
  const std::vector<NamedWeight> initial = m.get_weights();
  use_model_parallel(m, spec_for(2, 2, "columns"), 4);
  const FitOptions o{.epochs = 1, .batch_size = 20, .shuffle = false, .verbose = 0};
  QVERIFY_THROWS_EXCEPTION(InputError, m.fit(x, y, o));
  const std::vector<NamedWeight> after = m.get_weights();
  for (size_t i = 0; i < initial.size(); ++i) QVERIFY(after[i].values == initial[i].values);
  y(13, 0) = 1.0f;
  QCOMPARE(m.fit(x, y, o).epoch.size(), size_t(1));
}

QTEST_GUILESS_MAIN(TestModelParallel)
#include "tst_model_parallel.moc"
