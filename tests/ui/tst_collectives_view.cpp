// The collectives view: its schedule and cost table equal what a real make_thread_collectives()
// all_reduce counts (bytes and messages per device, on 2, 3 and 4 devices, odd sizes included);
// the ring has 2(N-1) steps, device d sends chunk (d - s) mod N at step s with chunk_of's size,
// and the sums it draws become complete where the algorithm says; modeled times equal the
// published per-message formula and a real call's link_us; the measured table equals the step
// trace's spans (a hand-made one and a real DataParallel fit); one device gets a sentence; Play
// advances; the pictures fit at 420 and 360 px (saved as PNGs when FITBENCH_SCREENSHOTS names a
// directory).
#include <QAbstractButton>
#include <QDir>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QSlider>
#include <QTableWidget>
#include <QTest>
#include <bit>
#include <span>
#include <thread>

#include "core/distribution/collectives/collective_schedule.h"
#include "core/distribution/executors/distribution.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "ui/rehearsal/collectives_diagram.h"
#include "ui/rehearsal/collectives_view.h"

using namespace fitbench;

Q_DECLARE_METATYPE(fitbench::CollectiveAlgorithm)

namespace {

QStringList names(int n) {
  QStringList out;
  for (int d = 0; d < n; ++d) out << QStringLiteral("cpu:%1").arg(d);
  return out;
}

// A real all_reduce of `elements` floats on n threads (device r contributes r + 1 everywhere):
// every rank's stats; `sumsOk` tells whether every rank got the sum.
std::vector<CollectiveStats> realAllReduce(int n, CollectiveAlgorithm algorithm, int64_t elements,
                                           const LinkModel& link, bool& sumsOk) {
  auto collectives = make_thread_collectives(n, algorithm, link);
  std::vector<CollectiveStats> stats(static_cast<size_t>(n));
  std::vector<std::vector<float>> buffers(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    buffers[size_t(r)].assign(size_t(elements), float(r + 1));
    threads.emplace_back([&, r] {
      stats[size_t(r)] = collectives->all_reduce(r, std::span<float>(buffers[size_t(r)]));
    });
  }
  for (auto& t : threads) t.join();
  sumsOk = true;
  for (const auto& b : buffers)
    for (float v : b) sumsOk = sumsOk && v == float(n * (n + 1) / 2);
  return stats;
}

QTableWidget* table(const CollectivesView& view, const char* name) {
  return view.findChild<QTableWidget*>(QString::fromLatin1(name));
}

int column(CollectiveAlgorithm a) { return a == CollectiveAlgorithm::kRing ? 0 : 1; }

// Ring messages on N devices: 2(N-1) steps, each one chunk of ceil(E/N) floats (collectives.h).
// Naive: device 0 takes N-1 whole buffers in and sends N-1 out.
double formulaUs(CollectiveAlgorithm a, int n, int64_t elements, const LinkModel& link) {
  const double floats =
      a == CollectiveAlgorithm::kRing ? double((elements + n - 1) / n) : double(elements);
  const double perMessage =
      link.latency_us + (link.gbps > 0.0 ? floats * 4.0 / (link.gbps * 1e3) : 0.0);
  return 2.0 * (n - 1) * perMessage;
}

struct LastTrace : Callback {
  StepTrace last;
  void on_step_trace(const StepTrace& trace) override { last = trace; }
};

}  // namespace

class TestCollectivesView : public QObject {
  Q_OBJECT
 private slots:
  void costEqualsRealAllReduce_data();
  void costEqualsRealAllReduce();
  void ringSteps_data();
  void ringSteps();
  void modeledTime_data();
  void modeledTime();
  void unlimitedLink();
  void measuredEqualsSpans();
  void measuredFromRealFit();
  void oneDevice();
  void play();
  void formats();
  void pictures_data();
  void pictures();
};

void TestCollectivesView::costEqualsRealAllReduce_data() {
  QTest::addColumn<int>("devices");
  QTest::addColumn<CollectiveAlgorithm>("algorithm");
  QTest::addColumn<qint64>("elements");
  for (int n : {2, 3, 4})
    for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
      for (qint64 e : {qint64(1), qint64(7), qint64(1001), qint64(4096)})
        QTest::addRow("%s N=%d E=%lld", algorithm_name(a), n, e) << n << a << e;
}

void TestCollectivesView::costEqualsRealAllReduce() {
  QFETCH(int, devices);
  QFETCH(CollectiveAlgorithm, algorithm);
  QFETCH(qint64, elements);
  const LinkModel link{.latency_us = 5.0, .gbps = 4.0};
  bool sumsOk = false;
  const std::vector<CollectiveStats> real =
      realAllReduce(devices, algorithm, elements, link, sumsOk);
  QVERIFY(sumsOk);

  // The schedule's per-device totals are the real call's.
  const CollectiveSchedule schedule(algorithm, devices, elements);
  int busiest = 0;
  int64_t sent = 0, received = 0;
  for (int d = 0; d < devices; ++d) {
    QCOMPARE(schedule.bytes_sent(d), real[size_t(d)].bytes_sent);
    QCOMPARE(schedule.bytes_received(d), real[size_t(d)].bytes_received);
    QCOMPARE(schedule.messages_sent(d), real[size_t(d)].messages_sent);
    if (real[size_t(d)].bytes_sent > real[size_t(busiest)].bytes_sent) busiest = d;
    sent += real[size_t(d)].bytes_sent;
    received += real[size_t(d)].bytes_received;
  }
  QCOMPARE(sent, received);

  // The table shows them, for whichever algorithm the run uses.
  for (auto used : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    CollectivesView view;
    view.setSetup(names(devices), used, elements, link);
    QTableWidget* cost = table(view, "costTable");
    QVERIFY(cost);
    const int c = column(algorithm);
    const auto cell = [&](int row) { return cost->item(row, c)->data(Qt::UserRole); };
    QCOMPARE(cell(CollectivesView::kBusiestMessages).toInt(), real[size_t(busiest)].messages_sent);
    QCOMPARE(cell(CollectivesView::kBusiestBytes).toLongLong(), real[size_t(busiest)].bytes_sent);
    QCOMPARE(cell(CollectivesView::kAllLinksBytes).toLongLong(), sent);
    QCOMPARE(cost->item(CollectivesView::kBusiestBytes, c)->text(),
             CollectivesView::formatBytes(real[size_t(busiest)].bytes_sent));
    // The link time the real call charged is the table's modeled time.
    QVERIFY(qFuzzyCompare(cell(CollectivesView::kModeledTime).toDouble(), real[0].link_us));
    // The used algorithm's column is marked.
    QCOMPARE(cost->horizontalHeaderItem(column(used))->text().contains(QStringLiteral("used")),
             true);
    QCOMPARE(cost->horizontalHeaderItem(1 - column(used))->text().contains(QStringLiteral("used")),
             false);
  }
}

void TestCollectivesView::ringSteps_data() {
  QTest::addColumn<int>("devices");
  QTest::addColumn<qint64>("elements");
  for (int n : {2, 3, 4, 5})
    for (qint64 e : {qint64(3), qint64(13), qint64(1001)})
      QTest::addRow("N=%d E=%lld", n, e) << n << e;
}

void TestCollectivesView::ringSteps() {
  QFETCH(int, devices);
  QFETCH(qint64, elements);
  const int n = devices;
  CollectivesView view;
  view.setSetup(names(n), CollectiveAlgorithm::kRing, elements, {});
  QCOMPARE(view.ringStepCount(), 2 * (n - 1));
  QCOMPARE(view.findChild<QSlider*>(QStringLiteral("ringStep"))->maximum(), 2 * (n - 1));
  const CollectiveSchedule& ring = view.schedule(CollectiveAlgorithm::kRing);
  const uint64_t all = (uint64_t{1} << n) - 1;
  for (int s = 1; s <= 2 * (n - 1); ++s) {
    // Reduce-scatter step k = s - 1 sends chunk d-1-k; all-gather step k = s - N sends d-k:
    // both are d - s (mod N).
    const auto messages = ring.messages(s);
    QCOMPARE(int(messages.size()), n);
    for (int d = 0; d < n; ++d) {
      const CollectiveMessage& m = messages[size_t(d)];
      QCOMPARE(m.from, d);
      QCOMPARE(m.to, (d + 1) % n);
      QCOMPARE(m.chunk, ((d - s) % n + n) % n);
      QCOMPARE(m.bytes, chunk_of(elements, n, m.chunk).size * 4);
    }
    QCOMPARE(ring.is_reduce_scatter(s), s <= n - 1);
    // What the picture draws: during reduce-scatter a chunk sums at most s + 1 devices; after it
    // device d holds the full sum of chunk d (and only that one, for N > 2); after all-gather
    // every chunk everywhere.
    const auto holds = ring.holds(s);
    for (int d = 0; d < n; ++d)
      for (int c = 0; c < n; ++c) {
        const uint64_t h = holds[size_t(d * n + c)];
        QVERIFY(h >> d & 1);  // a device never loses its own gradients
        if (s < n - 1) QVERIFY(std::popcount(h) <= s + 1);
        if (s == n - 1) QCOMPARE(h == all, c == d);
        if (s == 2 * (n - 1)) QCOMPARE(h, all);
      }
    view.setRingStep(s);
    QCOMPARE(view.ringStep(), s);
    const int k = s <= n - 1 ? s : s - (n - 1);
    // Shown with non-breaking hyphens (U+2011), so a wrapped line never ends in "All-".
    const QString phase =
        s <= n - 1 ? QStringLiteral("Reduce\u2011scatter") : QStringLiteral("All\u2011gather");
    QVERIFY2(
        view.ringCaption().startsWith(QStringLiteral("%1 %2 of %3").arg(phase).arg(k).arg(n - 1)),
        qPrintable(view.ringCaption()));
    QVERIFY(view.ringCaption().contains(CollectivesView::formatBytes(messages[0].bytes)));
  }
  view.setRingStep(99);
  QCOMPARE(view.ringStep(), 2 * (n - 1));
}

void TestCollectivesView::modeledTime_data() {
  QTest::addColumn<int>("devices");
  QTest::addColumn<double>("latency");
  QTest::addColumn<double>("gbps");
  QTest::addColumn<qint64>("elements");
  QTest::newRow("2 devices, 50 us, 1 GB/s, 1001") << 2 << 50.0 << 1.0 << qint64(1001);
  QTest::newRow("3 devices, latency only, 7") << 3 << 12.5 << 0.0 << qint64(7);
  QTest::newRow("4 devices, bandwidth only, 100003") << 4 << 0.0 << 2.5 << qint64(100003);
}

void TestCollectivesView::modeledTime() {
  QFETCH(int, devices);
  QFETCH(double, latency);
  QFETCH(double, gbps);
  QFETCH(qint64, elements);
  const LinkModel link{.latency_us = latency, .gbps = gbps};
  CollectivesView view;
  view.setSetup(names(devices), CollectiveAlgorithm::kNaive, elements, link);
  QTableWidget* cost = table(view, "costTable");
  for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive}) {
    const double us =
        cost->item(CollectivesView::kModeledTime, column(a))->data(Qt::UserRole).toDouble();
    QVERIFY2(qFuzzyCompare(us, formulaUs(a, devices, elements, link)),
             qPrintable(QString::number(us)));
    QCOMPARE(us, modeled_link_us(CollectiveOp::kAllReduce, a, devices, elements, link));
  }
  // e.g. 2 devices, 1001 floats, 50 us + 1 GB/s: ring 2 x (50 + 501 x 4 / 1000) = 104.008 us.
  if (devices == 2)
    QCOMPARE(cost->item(CollectivesView::kModeledTime, 0)->text(), QStringLiteral("104 µs"));
  QVERIFY(!view.findChild<QLabel*>(QStringLiteral("linkNote"))
               ->text()
               .contains(QStringLiteral("unlimited: set")));
}

void TestCollectivesView::unlimitedLink() {
  CollectivesView view;
  view.setSetup(names(3), CollectiveAlgorithm::kRing, 100, {});
  QTableWidget* cost = table(view, "costTable");
  for (int c = 0; c < 2; ++c) {
    QVERIFY(!cost->item(CollectivesView::kModeledTime, c)->data(Qt::UserRole).isValid());
    QCOMPARE(cost->item(CollectivesView::kModeledTime, c)->text(), QStringLiteral("—"));
  }
  QCOMPARE(view.findChild<QLabel*>(QStringLiteral("linkNote"))->text(),
           QStringLiteral("Link unlimited: set a latency or bandwidth in the Devices panel to "
                          "model time."));
}

void TestCollectivesView::measuredEqualsSpans() {
  // Three devices' spans as a naive run records them: waiting, then the all-reduce.
  StepTrace trace;
  trace.step = 41;
  trace.epoch = 2;
  trace.batch = 6;
  trace.shard_rows = {3, 3, 2};
  const double durations[3] = {812.5, 640.25, 1203.0};
  const int64_t sent[3] = {8008, 4004, 4004}, received[3] = {8008, 4004, 4004};
  trace.spans.resize(3);
  for (int d = 0; d < 3; ++d) {
    trace.spans[size_t(d)].push_back(
        {.kind = SpanKind::kBackward, .begin_us = 0, .duration_us = 90});
    trace.spans[size_t(d)].push_back(
        {.kind = SpanKind::kWaiting, .begin_us = 90, .duration_us = 7});
    TraceSpan c;
    c.kind = SpanKind::kCollective;
    c.algorithm = CollectiveAlgorithm::kNaive;
    c.begin_us = 97;
    c.duration_us = durations[d];
    c.bytes_sent = sent[d];
    c.bytes_received = received[d];
    trace.spans[size_t(d)].push_back(c);
  }
  CollectivesView view;
  const LinkModel link{.latency_us = 50.0, .gbps = 1.0};
  view.setSetup(names(3), CollectiveAlgorithm::kRing, 1001, link);
  view.showMeasured(trace);
  QTableWidget* measured = table(view, "measuredTable");
  QCOMPARE(measured->rowCount(), 3);
  for (int d = 0; d < 3; ++d) {
    const auto value = [&](int col) { return measured->item(d, col)->data(Qt::UserRole); };
    QCOMPARE(measured->item(d, CollectivesView::kDevice)->text(), QStringLiteral("cpu:%1").arg(d));
    QCOMPARE(value(CollectivesView::kMeasuredTime).toDouble(), durations[d]);
    QCOMPARE(value(CollectivesView::kSent).toLongLong(), sent[d]);
    QCOMPARE(value(CollectivesView::kReceived).toLongLong(), received[d]);
    // Naive on 3 devices, 50 us + 4004 bytes at 1 GB/s per message, 4 messages: 216.016 us.
    QVERIFY(qFuzzyCompare(value(CollectivesView::kModelTime).toDouble(), 4 * (50.0 + 4.004)));
  }
  QVERIFY2(view.findChild<QLabel*>(QStringLiteral("measuredCaption"))
               ->text()
               .startsWith(QStringLiteral("Step 42 (epoch 3, batch 7), naive")),
           qPrintable(view.findChild<QLabel*>(QStringLiteral("measuredCaption"))->text()));
  // The run's algorithm (naive) is marked, not the setup's ring.
  QTableWidget* cost = table(view, "costTable");
  QVERIFY(cost->horizontalHeaderItem(1)->text().contains(QStringLiteral("used")));
  QVERIFY(!cost->horizontalHeaderItem(0)->text().contains(QStringLiteral("used")));
  const auto diagrams = view.findChildren<CollectivesDiagram*>();
  QCOMPARE(diagrams.size(), 2);
  for (auto* d : diagrams)
    QCOMPARE(d->used(), d->schedule().algorithm() == CollectiveAlgorithm::kNaive);
  // A new setup drops the measured step.
  view.setSetup(names(4), CollectiveAlgorithm::kRing, 1001, link);
  QVERIFY(view.findChild<QGroupBox*>(QStringLiteral("measuredBox"))->isHidden());
  QCOMPARE(measured->rowCount(), 0);
}

void TestCollectivesView::measuredFromRealFit() {
  // A real DataParallel fit on 3 devices: the last step's collective spans carry the bytes the
  // view's model gives each device for the model's trainable parameter count. This small model
  // all-reduces; with the size threshold at 0 its update is sharded (reduce-scatter, all-gather)
  // and the table adds the two up.
  for (auto a : {CollectiveAlgorithm::kRing, CollectiveAlgorithm::kNaive})
    for (const bool sharded : {false, true}) {
      set_random_seed(5);
      ModelSpec spec;
      LayerSpec in;
      in.class_name = "InputLayer";
      in.shape = {3};
      LayerSpec hidden;
      hidden.class_name = "Dense";
      hidden.units = 5;
      hidden.activation = "relu";
      LayerSpec out = hidden;
      out.units = 1;
      out.activation = "sigmoid";
      spec.layers = {in, hidden, out};
      Sequential model(spec);
      CompileOptions compile;
      compile.optimizer.class_name = "SGD";
      compile.loss.name = "binary_crossentropy";
      model.compile(compile);
      const LinkModel link{.latency_us = 50.0, .gbps = 1.0};
      use_data_parallel(model, 3,
                        {.algorithm = a,
                         .link = link,
                         .sharded_update_min_elements = sharded ? 0 : int64_t(1) << 40});
      Matrix x(20, 3), y(20, 1);
      for (Index i = 0; i < 20; ++i) {
        for (Index j = 0; j < 3; ++j) x(i, j) = float((i * 7 + j * 3) % 11) / 11.0f;
        y(i, 0) = float(i % 2);
      }
      LastTrace last;
      model.fit(x, y, FitOptions{.epochs = 1, .batch_size = 7, .verbose = 0},
                RunOptions{.callbacks = {&last}});
      const int64_t params = model.count_params(true);
      QCOMPARE(params, int64_t(3 * 5 + 5 + 5 * 1 + 1));  // 26: two Dense layers' kernels and biases
      CollectivesView view;
      view.setSetup(names(3), a, params, link);
      view.showMeasured(last.last);
      QTableWidget* measured = table(view, "measuredTable");
      QCOMPARE(measured->rowCount(), 3);
      const int64_t chunk[3] = {8, 9, 9};  // 26 floats over 3 devices
      for (int d = 0; d < 3; ++d) {
        double us = 0.0, modelUs = 0.0;
        int64_t sent = 0, received = 0;
        std::vector<CollectiveOp> ops;
        for (const TraceSpan& s : last.last.spans[size_t(d)]) {
          if (s.kind != SpanKind::kCollective) continue;
          QCOMPARE(s.algorithm, a);
          ops.push_back(s.op);
          us += s.duration_us;
          sent += s.bytes_sent;
          received += s.bytes_received;
          modelUs += modeled_link_us(s.op, a, 3, params, link);
        }
        const std::vector<CollectiveOp> want =
            sharded
                ? std::vector<CollectiveOp>{CollectiveOp::kReduceScatter, CollectiveOp::kAllGather}
                : std::vector<CollectiveOp>{CollectiveOp::kAllReduce};
        QCOMPARE(ops, want);
        QCOMPARE(measured->item(d, CollectivesView::kSent)->data(Qt::UserRole).toLongLong(), sent);
        QCOMPARE(measured->item(d, CollectivesView::kReceived)->data(Qt::UserRole).toLongLong(),
                 received);
        QCOMPARE(measured->item(d, CollectivesView::kMeasuredTime)->data(Qt::UserRole).toDouble(),
                 us);
        QCOMPARE(measured->item(d, CollectivesView::kModelTime)->data(Qt::UserRole).toDouble(),
                 modelUs);
        if (!sharded || a == CollectiveAlgorithm::kRing) {
          // The all-reduce's bytes are the model's; the ring pair moves exactly as many.
          QCOMPARE(sent, view.schedule(a).bytes_sent(d));
          QCOMPARE(received, view.schedule(a).bytes_received(d));
        } else {
          // Naive: device 0 sends the others their chunks, then everything to each; the others
          // send everything, then their chunk.
          const int64_t want = d == 0 ? (26 - chunk[0]) + 2 * 26 : 26 + chunk[d];
          QCOMPARE(sent, want * 4);
          QCOMPARE(received, want * 4);
        }
        // The link's wait is part of the measured spans.
        QVERIFY(us >= modelUs);
      }
      // At the screenshot size the measured rows are all on screen, under the rest.
      view.resize(420, 640);
      const QImage image = view.grab().toImage();
      auto* box = view.findChild<QGroupBox*>(QStringLiteral("measuredBox"));
      QVERIFY(!box->isHidden());
      QVERIFY(box->geometry().bottom() < view.height());
      QVERIFY(measured->height() >=
              measured->horizontalHeader()->height() + 3 * measured->rowHeight(0));
      const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
      if (!dir.isEmpty())
        QVERIFY(
            image.save(QDir(dir).filePath(QStringLiteral("collectives_measured_%1%2.png")
                                              .arg(algorithm_name(a), sharded ? "_sharded" : ""))));
    }
}

void TestCollectivesView::oneDevice() {
  CollectivesView view;
  QVERIFY(!view.message().isEmpty());  // nothing set up yet
  view.setSetup(names(1), CollectiveAlgorithm::kRing, 26, {});
  QVERIFY2(view.message().startsWith(QStringLiteral("One device needs no collective")),
           qPrintable(view.message()));
  QCOMPARE(view.ringStepCount(), 0);
  view.setSetup(names(2), CollectiveAlgorithm::kRing, 26, {});
  QCOMPARE(view.message(), QString());
  QCOMPARE(view.ringStepCount(), 2);
  view.clear();
  QVERIFY(!view.message().isEmpty());
  QCOMPARE(view.ringStepCount(), 0);
  // A ModelParallel mesh: not DataParallel's all-reduce, so the view says where to look.
  view.setSetup(names(4), CollectiveAlgorithm::kRing, 26, {});
  QCOMPARE(view.message(), QString());
  view.setModelParallelMesh(QStringLiteral("2 x 2"));
  QVERIFY2(view.message().contains(QStringLiteral("ModelParallel on a 2 x 2 mesh")) &&
               view.message().contains(QStringLiteral("Device timeline")),
           qPrintable(view.message()));
  view.setModelParallelMesh({});
  QCOMPARE(view.message(), QString());
}

void TestCollectivesView::play() {
  CollectivesView view;
  view.setSetup(names(3), CollectiveAlgorithm::kRing, 100, {});
  auto* play = view.findChild<QAbstractButton*>(QStringLiteral("play"));
  QVERIFY(play);
  QTest::mouseClick(play, Qt::LeftButton);
  QVERIFY(view.isPlaying());
  QCOMPARE(view.ringStep(), 0);
  QTRY_COMPARE_WITH_TIMEOUT(view.ringStep(), 1, 3000);
  QTest::mouseClick(play, Qt::LeftButton);  // pause
  QVERIFY(!view.isPlaying());
  // From the last-but-one step, Play reaches the end and stops there.
  view.setRingStep(3);
  QTest::mouseClick(play, Qt::LeftButton);
  QTRY_VERIFY_WITH_TIMEOUT(!view.isPlaying(), 3000);
  QCOMPARE(view.ringStep(), 4);
  QVERIFY(view.ringCaption().contains(QStringLiteral("every device holds the whole sum")));
  // Play at the end starts over.
  QTest::mouseClick(play, Qt::LeftButton);
  QCOMPARE(view.ringStep(), 0);
  QVERIFY(view.isPlaying());
}

void TestCollectivesView::formats() {
  QCOMPARE(CollectivesView::formatBytes(812), QStringLiteral("812 B"));
  QCOMPARE(CollectivesView::formatBytes(1336), QStringLiteral("1.3 kB"));
  QCOMPARE(CollectivesView::formatBytes(24000), QStringLiteral("24.0 kB"));
  QCOMPARE(CollectivesView::formatBytes(400012), QStringLiteral("400 kB"));
  QCOMPARE(CollectivesView::formatBytes(1050000), QStringLiteral("1.1 MB"));
  QCOMPARE(CollectivesView::formatMicroseconds(8.46), QStringLiteral("8.5 µs"));
  QCOMPARE(CollectivesView::formatMicroseconds(412.4), QStringLiteral("412 µs"));
  QCOMPARE(CollectivesView::formatMicroseconds(1234.0), QStringLiteral("1.2 ms"));
}

void TestCollectivesView::pictures_data() {
  QTest::addColumn<int>("devices");
  QTest::addColumn<int>("width");
  QTest::addColumn<int>("height");
  for (int n : {2, 3, 4}) {
    QTest::addRow("%d devices, 420 px", n) << n << 420 << 560;
    QTest::addRow("%d devices, 360 px", n) << n << 360 << 560;
  }
  QTest::addRow("8 devices, 900 px") << 8 << 900 << 700;
}

void TestCollectivesView::pictures() {
  QFETCH(int, devices);
  QFETCH(int, width);
  QFETCH(int, height);
  CollectivesView view;
  view.resize(width, height);
  view.setSetup(names(devices), CollectiveAlgorithm::kRing, 1001,
                LinkModel{.latency_us = 50.0, .gbps = 1.0});
  view.setRingStep(2);
  const QImage image = view.grab().toImage();
  QCOMPARE(image.size(), QSize(width, height));
  // Every device box is drawn inside its picture and touches no other.
  for (auto* diagram : view.findChildren<CollectivesDiagram*>()) {
    const auto rects = diagram->deviceRects();
    QCOMPARE(int(rects.size()), devices);
    for (size_t i = 0; i < rects.size(); ++i) {
      QVERIFY(QRectF(diagram->rect()).contains(rects[i]));
      for (size_t j = i + 1; j < rects.size(); ++j) QVERIFY(!rects[i].intersects(rects[j]));
    }
    // Naive: every other device below device 0, and the straight way from each up to device 0
    // crosses no third box (the arrows run there).
    if (diagram->schedule().algorithm() != CollectiveAlgorithm::kNaive || rects.empty()) continue;
    const QRectF hub = rects[0];
    for (size_t d = 1; d < rects.size(); ++d) {
      QVERIFY(rects[d].top() > hub.bottom());
      const QPointF a(rects[d].center().x(), rects[d].top()), b(hub.center().x(), hub.bottom());
      for (int k = 1; k < 50; ++k) {
        const QPointF p = a + (b - a) * (k / 50.0);
        for (size_t o = 1; o < rects.size(); ++o)
          QVERIFY2(o == d || !rects[o].contains(p),
                   qPrintable(QStringLiteral("cpu:%1's way up crosses cpu:%2").arg(d).arg(o)));
      }
    }
  }
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
  if (!dir.isEmpty() && width != 360)
    QVERIFY(
        image.save(QDir(dir).filePath(QStringLiteral("collectives_%1_devices.png").arg(devices))));
}

QTEST_MAIN(TestCollectivesView)
#include "tst_collectives_view.moc"
