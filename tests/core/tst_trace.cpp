// The per-step trace of DataParallel: spans per device in order, contiguous, with the waiting of
// every device but the last to arrive; shard rows, the all-reduce's algorithm and bytes, no
// reallocation in the steady state; the rehearsal knobs seen in it (a slow device's compute is
// stretched by what it notes, a link's modeled time is charged to every all-reduce); fit()
// handing it to callbacks with epoch and batch (and never on one device); the usage summary and
// its line; the Chrome trace JSON and its atomic file. Measured times are only bounded below by
// what the knobs injected: no test depends on the machine's speed or load.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>

#include "core/base/error.h"
#include "core/distribution/executors/data_parallel_executor.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/trace/trace.h"
#include "core/io/chrome_trace.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "tests/core/fixtures.h"

using namespace fitbench;

namespace {

// A compiled model whose optimizer is built, and the executor context fit() would give.
struct Setup {
  Sequential model;
  Matrix x, y;
  std::unique_ptr<fixtures::ExecutorSetup> setup;
  ExecutorContext ctx;
  Setup(int64_t features, std::vector<int64_t> hidden, Index rows, bool clipnorm = false)
      : model(fixtures::binary_mlp(features, hidden)) {
    set_random_seed(5);
    fixtures::make_binary_data(rows, features, x, y);
    fixtures::compile_binary_sgd(model, clipnorm);
    model.fit(x.topRows(1), y.topRows(1), FitOptions{.epochs = 1, .verbose = 0});
    setup = std::make_unique<fixtures::ExecutorSetup>(model, false);
    ctx = setup->ctx;
  }
};

// Counts on_step_trace calls and keeps (epoch, batch, step) of each.
struct TraceCounter : Callback {
  std::vector<std::array<int64_t, 3>> seen;
  void on_step_trace(const StepTrace& t) override {
    seen.push_back({t.epoch, t.batch, static_cast<int64_t>(t.step)});
  }
};

TraceSpan span(SpanKind kind, double begin, double duration) {
  TraceSpan s;
  s.kind = kind;
  s.begin_us = begin;
  s.duration_us = duration;
  return s;
}

// Two devices, two steps, by hand.
RunTrace hand_trace() {
  StepTrace a;
  a.step = 7;
  a.epoch = 0;
  a.batch = 0;
  a.shard_rows = {2, 1};
  a.spans.resize(2);
  a.spans[0] = {span(SpanKind::kForward, 0, 10), span(SpanKind::kWaiting, 10, 5)};
  TraceSpan c = span(SpanKind::kCollective, 15, 5);
  c.algorithm = CollectiveAlgorithm::kNaive;
  c.bytes_sent = 40;
  c.bytes_received = 20;
  a.spans[0].push_back(c);
  a.spans[1] = {span(SpanKind::kForward, 2, 13), span(SpanKind::kCollective, 15, 5)};
  StepTrace b = a;
  b.step = 8;
  b.batch = 1;
  b.shard_rows = {1, 1};
  b.spans[0] = {span(SpanKind::kUpdate, 30, 10)};
  b.spans[1] = {span(SpanKind::kUpdate, 35, 5)};
  RunTrace run;
  run.append(a);
  run.append(b);
  return run;
}

// The collectives of a DataParallel step, in order: with a sharded update (an element-wise
// optimizer) reduce_scatter, then all_gather; otherwise all_reduce.
std::vector<CollectiveOp> step_ops(bool sharded) {
  if (sharded) return {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather};
  return {CollectiveOp::kAllReduce};
}

// Data rows: each algorithm, with a sharded update and with clipnorm (all-reduce).
void algorithm_and_update_rows() {
  QTest::addColumn<int>("algorithm");
  QTest::addColumn<bool>("sharded");
  for (bool sharded : {true, false}) {
    const char* update = sharded ? "sharded update" : "clipnorm, all-reduce";
    QTest::addRow("ring, %s", update) << int(CollectiveAlgorithm::kRing) << sharded;
    QTest::addRow("naive, %s", update) << int(CollectiveAlgorithm::kNaive) << sharded;
  }
}

// Device d's collective span of operation `op` in a step.
const TraceSpan& collective(const StepTrace& t, size_t d, CollectiveOp op) {
  for (const TraceSpan& s : t.spans[d])
    if (s.kind == SpanKind::kCollective && s.op == op) return s;
  static const TraceSpan none;
  return none;
}

// What holds for every DataParallel step whatever the machine's load, checked with QVERIFY:
// each device's spans follow each other without gap or overlap in the order shard copy, forward,
// backward, then [waiting] reduce_scatter, update, [waiting] all_gather (sharded update) or
// [waiting] all_reduce, update; so each lane (compute: copy, forward, backward, update;
// communication: waiting, collectives) is ordered and non-overlapping. At each collective exactly
// one device has no waiting span (the last to arrive), every other device waits from the end of
// its previous span to that device's arrival, and every device's collective begins there. Sets
// `last` to the device that arrived last at the first collective.
void check_step(const StepTrace& t, int& last, bool sharded) {
  constexpr double kEps = 1e-6;  // microseconds: rounding of the timestamps' sums
  const std::vector<CollectiveOp> ops = step_ops(sharded);
  std::vector<SpanKind> want = {SpanKind::kShardCopy, SpanKind::kForward, SpanKind::kBackward,
                                SpanKind::kCollective, SpanKind::kUpdate};
  if (sharded) want.push_back(SpanKind::kCollective);
  std::vector<int> last_at(ops.size(), -1);
  std::vector<double> arrival(ops.size(), -1.0);
  for (size_t d = 0; d < t.spans.size(); ++d) {
    const auto& spans = t.spans[d];
    std::vector<SpanKind> kinds;
    for (const TraceSpan& s : spans)
      if (s.kind != SpanKind::kWaiting) kinds.push_back(s.kind);
    QVERIFY2(kinds == want, qPrintable(QString("device %1: %2 spans").arg(d).arg(spans.size())));
    size_t k = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      QVERIFY(spans[i].begin_us >= 0.0);
      QVERIFY(spans[i].duration_us >= 0.0);
      if (i > 0) QVERIFY(std::abs(spans[i].begin_us - spans[i - 1].end_us()) < kEps);
      if (spans[i].kind == SpanKind::kWaiting) {
        QVERIFY2(i + 1 < spans.size() && spans[i + 1].kind == SpanKind::kCollective,
                 "a waiting span not followed by a collective");
      }
      if (spans[i].kind != SpanKind::kCollective) continue;
      QCOMPARE(spans[i].op, ops[k]);
      if (spans[i - 1].kind != SpanKind::kWaiting) {
        QVERIFY2(last_at[k] < 0, "two devices arrived last");
        last_at[k] = static_cast<int>(d);
        arrival[k] = spans[i].begin_us;
      }
      ++k;
    }
  }
  for (size_t k = 0; k < ops.size(); ++k) QVERIFY2(last_at[k] >= 0, "no device arrived last");
  for (const auto& spans : t.spans) {
    size_t k = 0;
    for (size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].kind != SpanKind::kCollective) continue;
      QVERIFY(std::abs(spans[i].begin_us - arrival[k]) < kEps);
      if (spans[i - 1].kind == SpanKind::kWaiting)
        QVERIFY(spans[i - 1].begin_us <= arrival[k] + kEps);
      ++k;
    }
  }
  last = last_at[0];
}

}  // namespace

class TestTrace : public QObject {
  Q_OBJECT
 private slots:
  void spans_of_a_step_data();
  void spans_of_a_step();
  void sharded_from_a_size();
  void no_reallocation_in_steady_state();
  void slow_device_is_stretched_and_waited_for();
  void link_time_is_charged_to_the_collectives_data();
  void link_time_is_charged_to_the_collectives();
  void fit_hands_traces_to_callbacks();
  void run_trace_and_summary();
  void chrome_trace_json();
  void chrome_trace_file();
};

void TestTrace::spans_of_a_step_data() { algorithm_and_update_rows(); }

void TestTrace::spans_of_a_step() {
  QFETCH(int, algorithm);
  QFETCH(bool, sharded);
  Setup s(4, {}, 10, !sharded);  // Dense(1) on 4 features: 5 gradient floats
  RehearsalOptions o;
  o.algorithm = static_cast<CollectiveAlgorithm>(algorithm);
  o.sharded_update_min_elements = 0;  // clipnorm alone decides
  const bool ring = o.algorithm == CollectiveAlgorithm::kRing;
  DataParallelExecutor exec(s.ctx, 3, o);
  exec.prepare(10);
  StepTotals totals;
  totals.reset(s.ctx.graph.metric_state_size());
  exec.train_step(s.x, s.y, 41, totals);
  const StepTrace& t = *exec.step_trace();
  QCOMPARE(t.step, uint64_t(41));
  QCOMPARE(t.epoch, -1);  // fit() sets epoch and batch
  QCOMPARE(t.shard_rows, (std::vector<int64_t>{4, 3, 3}));
  QCOMPARE(t.spans.size(), size_t(3));
  int last = -1;
  QCOMPARE(exec.sharded_update(), sharded);
  check_step(t, last, sharded);
  if (QTest::currentTestFailed()) return;
  // 5 floats over 3 devices: chunks of 1, 2, 2 floats. Bytes sent by device d:
  //   ring reduce-scatter: every chunk but d; ring all-gather: every chunk but d+1; the
  //   all-reduce both;
  //   naive reduce-scatter: device 0 sends the others their chunks, the others everything;
  //   naive all-gather: device 0 sends everything to both others, the others their chunk;
  //   the naive all-reduce: device 0 sends the sum to both others, the others everything.
  const int64_t chunk[3] = {1, 2, 2};
  for (int d = 0; d < 3; ++d) {
    const int64_t rs = ring ? 5 - chunk[d] : (d == 0 ? 5 - chunk[0] : 5);
    const int64_t ag = ring ? 5 - chunk[(d + 1) % 3] : (d == 0 ? 2 * 5 : chunk[d]);
    const int64_t ar = ring ? rs + ag : (d == 0 ? 2 * 5 : 5);
    for (CollectiveOp op : step_ops(sharded)) {
      const TraceSpan& c = collective(t, size_t(d), op);
      QCOMPARE(c.algorithm, o.algorithm);
      QCOMPARE(QString(span_label(c)), QString(op_name(op)));
      const int64_t sent = op == CollectiveOp::kReduceScatter ? rs
                           : op == CollectiveOp::kAllGather   ? ag
                                                              : ar;
      QCOMPARE(c.bytes_sent, sent * 4);
    }
    // No knob is set: nothing is added to any span.
    QCOMPARE(exec.injections(d).size(), t.spans[d].size());
    for (const SpanInjection& i : exec.injections(d)) QCOMPARE(i.added_us, 0.0);
  }
}

void TestTrace::sharded_from_a_size() {
  // The default threshold: a model with fewer than 16,384 trainable floats all-reduces; one with
  // more shards its update, as its trace shows.
  for (const bool large : {false, true}) {
    Setup s(large ? 32 : 4, large ? std::vector<int64_t>{512} : std::vector<int64_t>{}, 16);
    QCOMPARE(s.model.count_params(true) >= RehearsalOptions{}.sharded_update_min_elements, large);
    DataParallelExecutor exec(s.ctx, 2);
    exec.prepare(16);
    StepTotals totals;
    totals.reset(s.ctx.graph.metric_state_size());
    exec.train_step(s.x, s.y, 0, totals);
    int last = -1;
    QCOMPARE(exec.sharded_update(), large);
    check_step(*exec.step_trace(), last, large);
    if (QTest::currentTestFailed()) return;
  }
}

void TestTrace::no_reallocation_in_steady_state() {
  Setup s(4, {8}, 32);
  DataParallelExecutor exec(s.ctx, 2);
  exec.prepare(16);
  StepTotals totals;
  totals.reset(s.ctx.graph.metric_state_size());
  exec.train_step(s.x.topRows(16), s.y.topRows(16), 0, totals);
  const TraceSpan* first[2] = {exec.step_trace()->spans[0].data(),
                               exec.step_trace()->spans[1].data()};
  for (int step = 1; step < 20; ++step) {
    const Index rows = step % 2 ? 16 : 11;  // also a partial batch
    exec.train_step(s.x.topRows(rows), s.y.topRows(rows), step, totals);
    QCOMPARE(exec.step_trace()->spans[0].data(), first[0]);
    QCOMPARE(exec.step_trace()->spans[1].data(), first[1]);
  }
}

void TestTrace::slow_device_is_stretched_and_waited_for() {
  // Equal shards; device 1 at a quarter of the speed. On any machine, in every step: each of its
  // forward, backward and update spans lasts at least its measured work plus the stretch noted
  // beside it, and the stretch is 3 times the work (1/0.25 - 1); device 0's spans get nothing
  // added; the step's structure holds (check_step). Which device reaches the reduce-scatter last is
  // up to the machine, but the slow one must in at least one of up to 300 steps (failing only if
  // the fast device were held back for 3 times the slow one's compute in every step), and in
  // such a step device 0 has a waiting span and device 1 none.
  Setup s(32, {64}, 128);
  RehearsalOptions o;
  o.speed = {1.0, 0.25};
  DataParallelExecutor exec(s.ctx, 2, o);
  exec.prepare(128);
  StepTotals totals;
  totals.reset(s.ctx.graph.metric_state_size());
  int slow_last = 0;
  for (int step = 0; step < 300 && slow_last < 3; ++step) {
    exec.train_step(s.x, s.y, step, totals);
    const StepTrace& t = *exec.step_trace();
    int last = -1;
    check_step(t, last, exec.sharded_update());
    if (QTest::currentTestFailed()) return;
    for (int d = 0; d < 2; ++d) {
      const auto& spans = t.spans[d];
      const auto& injected = exec.injections(d);
      QCOMPARE(injected.size(), spans.size());
      for (size_t i = 0; i < spans.size(); ++i) {
        const SpanInjection& in = injected[i];
        if (!is_compute(spans[i].kind) || spans[i].kind == SpanKind::kShardCopy) {
          QCOMPARE(in.added_us, 0.0);
          continue;
        }
        QVERIFY(in.work_us > 0.0);
        // The stretch is computed on the clock's nanoseconds: 1 ns of rounding.
        const double want = d == 1 ? 3.0 * in.work_us : 0.0;
        QVERIFY2(std::abs(in.added_us - want) <= 0.002,
                 qPrintable(QString("device %1 %2: added %3 us for %4 us of work")
                                .arg(d)
                                .arg(span_name(spans[i].kind))
                                .arg(in.added_us)
                                .arg(in.work_us)));
        QVERIFY(spans[i].duration_us >= in.work_us + in.added_us - 0.002);
      }
    }
    if (last == 1) {
      ++slow_last;
      QCOMPARE(t.spans[0][3].kind, SpanKind::kWaiting);
      QCOMPARE(t.spans[1][3].kind, SpanKind::kCollective);
    }
  }
  QVERIFY2(slow_last > 0, "the slow device never reached the all-reduce last");
}

void TestTrace::link_time_is_charged_to_the_collectives_data() { algorithm_and_update_rows(); }

void TestTrace::link_time_is_charged_to_the_collectives() {
  // 2 devices, 400 us per message and 0.01 GB/s: every collective span notes the modeled link
  // time of the 5 gradient floats and lasts at least that long (it starts at the last arrival,
  // and the link is charged from there). All-reduce: ring, 2 messages of 3 floats (12 bytes,
  // 1.2 us) = 802.4 us; naive, 2 messages of 5 floats (20 bytes, 2 us) = 804 us. Reduce-scatter
  // and all-gather: ring, 1 message of 3 floats = 401.2 us each; naive, a chunk and the whole
  // buffer = 803.2 us each.
  QFETCH(int, algorithm);
  QFETCH(bool, sharded);
  Setup s(4, {}, 16, !sharded);
  RehearsalOptions o;
  o.algorithm = static_cast<CollectiveAlgorithm>(algorithm);
  o.link = {400.0, 0.01};
  o.sharded_update_min_elements = 0;  // clipnorm alone decides
  const bool ring = o.algorithm == CollectiveAlgorithm::kRing;
  QCOMPARE(modeled_link_us(CollectiveOp::kAllReduce, o.algorithm, 2, 5, o.link),
           ring ? 802.4 : 804.0);
  for (CollectiveOp op : {CollectiveOp::kReduceScatter, CollectiveOp::kAllGather})
    QCOMPARE(modeled_link_us(op, o.algorithm, 2, 5, o.link), ring ? 401.2 : 803.2);
  DataParallelExecutor exec(s.ctx, 2, o);
  exec.prepare(16);
  StepTotals totals;
  totals.reset(s.ctx.graph.metric_state_size());
  for (int step = 0; step < 3; ++step) {
    exec.train_step(s.x, s.y, step, totals);
    int last = -1;
    check_step(*exec.step_trace(), last, sharded);
    if (QTest::currentTestFailed()) return;
    for (int d = 0; d < 2; ++d) {
      const auto& spans = exec.step_trace()->spans[d];
      int collectives = 0;
      for (size_t i = 0; i < spans.size(); ++i) {
        const double added = exec.injections(d)[i].added_us;
        if (spans[i].kind != SpanKind::kCollective) {
          // Compute spans get nothing: every device runs at full speed.
          QCOMPARE(added, 0.0);
          continue;
        }
        ++collectives;
        const double modeled = modeled_link_us(spans[i].op, o.algorithm, 2, 5, o.link);
        QCOMPARE(added, modeled);
        QVERIFY2(spans[i].duration_us >= modeled - 0.002,
                 qPrintable(QString::number(spans[i].duration_us)));
      }
      QCOMPARE(collectives, sharded ? 2 : 1);
    }
  }
}

void TestTrace::fit_hands_traces_to_callbacks() {
  // 23 rows, batch 10: 3 steps per epoch; 2 epochs from initial_epoch 1 of 3.
  Setup s(4, {3}, 23);
  TraceCounter counter;
  RunOptions run;
  run.callbacks = {&counter};
  use_data_parallel(s.model, 2);
  s.model.fit(s.x, s.y, FitOptions{.epochs = 3, .batch_size = 10, .verbose = 0, .initial_epoch = 1},
              run);
  QCOMPARE(counter.seen.size(), size_t(6));
  for (size_t i = 0; i < 6; ++i) {
    QCOMPARE(counter.seen[i][0], int64_t(1 + i / 3));
    QCOMPARE(counter.seen[i][1], int64_t(i % 3));
    if (i > 0) QCOMPARE(counter.seen[i][2], counter.seen[i - 1][2] + 1);
  }
  // The recorder keeps the run; the summary covers both devices.
  TraceRecorder recorder;
  run.callbacks = {&recorder};
  s.model.fit(s.x, s.y, FitOptions{.epochs = 1, .batch_size = 10, .verbose = 0}, run);
  QCOMPARE(recorder.trace().steps().size(), size_t(3));
  QCOMPARE(recorder.trace().shard_rows(2, 1), int64_t(1));  // the last batch of 3 rows: 2 + 1
  QCOMPARE(recorder.usage().size(), size_t(2));
  const std::vector<DeviceUsage> all = summarize(recorder.trace());
  for (size_t d = 0; d < 2; ++d) {
    QCOMPARE(recorder.usage()[d].busy_us, all[d].busy_us);
    QCOMPARE(recorder.usage()[d].total_us, all[d].total_us);
  }
  // A recorder that keeps one step still sums every step (the CLI without --trace keeps none,
  // so a long run's memory does not grow).
  TraceRecorder first(1);
  run.callbacks = {&first};
  s.model.fit(s.x, s.y, FitOptions{.epochs = 2, .batch_size = 10, .verbose = 0}, run);
  QCOMPARE(first.trace().steps().size(), size_t(1));
  QCOMPARE(first.steps_seen(), size_t(6));
  QCOMPARE(first.usage().size(), size_t(2));
  QVERIFY(first.usage()[1].busy_us > first.trace().spans().back().span.duration_us);
  // One device without a distribution: no trace at all.
  TraceCounter none;
  run.callbacks = {&none};
  Setup local(4, {3}, 23);
  local.model.fit(local.x, local.y, FitOptions{.epochs = 1, .batch_size = 10, .verbose = 0}, run);
  QVERIFY(none.seen.empty());
}

void TestTrace::run_trace_and_summary() {
  const RunTrace run = hand_trace();
  QCOMPARE(run.devices(), 2);
  QCOMPARE(run.steps().size(), size_t(2));
  QCOMPARE(run.spans().size(), size_t(7));
  QCOMPARE(run.shard_rows(0, 0), int64_t(2));
  QCOMPARE(run.shard_rows(1, 0), int64_t(1));
  QCOMPARE(run.spans()[3].device, 1);
  QCOMPARE(run.spans()[6].step_index, uint32_t(1));
  // The run lasts 0..40 us. Device 0: busy 10 + 10 = 20 (50%), communication 5 (12.5%), waiting
  // 5, idle 37.5%. Device 1: busy 13 + 5 = 18 (45%), communication 5 (12.5%), idle 42.5%.
  const auto usage = summarize(run);
  QCOMPARE(usage.size(), size_t(2));
  QCOMPARE(usage[0].total_us, 40.0);
  QCOMPARE(usage[0].busy_percent(), 50.0);
  QCOMPARE(usage[0].communication_percent(), 12.5);
  QCOMPARE(usage[0].waiting_us, 5.0);
  QCOMPARE(usage[0].idle_percent(), 37.5);
  QCOMPARE(usage[1].busy_percent(), 45.0);
  QCOMPARE(usage[1].idle_percent(), 42.5);
  QCOMPARE(QString::fromStdString(usage_line("cpu:1", usage[1])),
           QString("cpu:1  busy 45.0%  communication 12.5%  idle 42.5%"));
  // Reserved ahead: appending the reserved steps moves nothing.
  RunTrace reserved;
  reserved.reserve(10);
  StepTrace one;
  one.shard_rows = {1, 1};
  one.spans = {{span(SpanKind::kForward, 0, 1)}, {span(SpanKind::kForward, 0, 1)}};
  reserved.append(one);
  const auto* spans_at = reserved.spans().data();
  const auto* steps_at = reserved.steps().data();
  for (int i = 1; i < 10; ++i) reserved.append(one);
  QCOMPARE(reserved.spans().data(), spans_at);
  QCOMPARE(reserved.steps().data(), steps_at);
  QCOMPARE(reserved.spans().size(), size_t(20));
  // UsageSummary step by step.
  UsageSummary summary;
  StepTrace step;
  step.spans = {{span(SpanKind::kForward, 0, 10)}, {span(SpanKind::kCollective, 5, 15)}};
  summary.add(step);
  QCOMPARE(summary.devices()[1].communication_percent(), 75.0);
}

void TestTrace::chrome_trace_json() {
  const RunTrace run = hand_trace();
  const QJsonDocument doc =
      QJsonDocument::fromJson(QByteArray::fromStdString(fitbench::chrome_trace_json(run)));
  QVERIFY(doc.isObject());
  const QJsonArray events = doc.object()["traceEvents"].toArray();
  // 4 metadata events per device, one complete event per span.
  QCOMPARE(events.size(), 2 * 4 + 7);
  QStringList names;
  QVector<QJsonObject> complete;
  for (const auto& e : events) {
    const QJsonObject o = e.toObject();
    if (o["ph"] == "M" && o["name"] == "process_name")
      names << QString("%1=%2").arg(o["pid"].toInt()).arg(o["args"].toObject()["name"].toString());
    if (o["ph"] == "X") complete.push_back(o);
  }
  QCOMPARE(names, (QStringList{"0=cpu:0", "1=cpu:1"}));
  QCOMPARE(complete.size(), 7);
  // Device 0's all_reduce: communication lane, its timing and args.
  const QJsonObject c = complete[2];
  QCOMPARE(c["name"].toString(), QString("all_reduce"));
  QCOMPARE(c["pid"].toInt(), 0);
  QCOMPARE(c["tid"].toInt(), 2);
  QCOMPARE(c["ts"].toDouble(), 15.0);
  QCOMPARE(c["dur"].toDouble(), 5.0);
  const QJsonObject args = c["args"].toObject();
  QCOMPARE(args["algorithm"].toString(), QString("naive"));
  QCOMPARE(args["bytes_sent"].toInt(), 40);
  QCOMPARE(args["bytes_received"].toInt(), 20);
  QCOMPARE(args["step"].toInt(), 7);
  QCOMPARE(args["rows"].toInt(), 2);
  // Forward on the compute lane; waiting on the communication lane.
  QCOMPARE(complete[0]["name"].toString(), QString("forward"));
  QCOMPARE(complete[0]["tid"].toInt(), 1);
  QCOMPARE(complete[1]["name"].toString(), QString("waiting"));
  QCOMPARE(complete[1]["tid"].toInt(), 2);
  // Device 1's update in step 8, batch 1.
  QCOMPARE(complete[6]["pid"].toInt(), 1);
  QCOMPARE(complete[6]["args"].toObject()["batch"].toInt(), 1);
  QCOMPARE(complete[6]["ts"].toDouble(), 35.0);
}

void TestTrace::chrome_trace_file() {
  QTemporaryDir dir;
  const std::string file = (dir.path() + "/run.json").toStdString();
  write_chrome_trace(file, hand_trace());
  QFile f(QString::fromStdString(file));
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.readAll().toStdString(), fitbench::chrome_trace_json(hand_trace()));
  // No temporary file is left beside it.
  QCOMPARE(QDir(dir.path()).entryList(QDir::Files), QStringList{"run.json"});
  const std::string bad = (dir.path() + "/missing/run.json").toStdString();
  try {
    write_chrome_trace(bad, hand_trace());
    QFAIL("no error");
  } catch (const InputError& e) {
    QVERIFY2(QString::fromStdString(e.place()).contains("missing/run.json"), e.what());
  }
}

QTEST_GUILESS_MAIN(TestTrace)
#include "tst_trace.moc"
