// The device timeline: the store keeps the latest steps up to its capacity and sums them as
// core's summarize() does; after a real DataParallel fit on 3 devices the widget has one lane per
// device, every phase drawn, the percentages of summarize() on the same run, an export with one
// process per device and every span, a scrubbable step slider and a collective's bytes in its
// tooltip; a slowed device makes the others wait before the all-reduce; single-device runs show
// the empty state; with 12 devices in a low view the lanes scroll under a legend, step captions
// and time axis that stay in sight. Saves 900x260 pictures when FITBENCH_SCREENSHOTS names a
// directory.
#include <QDir>
#include <QFile>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "core/distribution/executors/distribution.h"
#include "core/distribution/trace/trace.h"
#include "core/python/random.h"
#include "core/training/sequential.h"
#include "tests/core/fixtures.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/rehearsal/timeline_canvas.h"
#include "ui/rehearsal/trace_store.h"

using namespace fitbench;

namespace {

const QString kEmptyText =
    QStringLiteral("Run a distributed experiment to see what each device does in each step.");

// Input(features) -> Dense(hidden...) -> Dense(1, sigmoid), compiled with SGD.
std::unique_ptr<Sequential> makeModel(int64_t features, const std::vector<int64_t>& hidden) {
  auto model = std::make_unique<Sequential>(fixtures::binary_mlp(features, hidden));
  fixtures::compile_binary_sgd(*model);
  return model;
}

// Keeps a copy of every StepTrace fit() hands out.
struct Collector : Callback {
  std::vector<StepTrace> steps;
  void on_step_trace(const StepTrace& t) override { steps.push_back(t); }
};

struct Run {
  std::vector<StepTrace> steps;
  RunTrace trace;  // TraceRecorder's, as the CLI keeps it
};

// fit() on `devices` devices (0: no distribution) with DataParallel and the devices' knobs, as
// an experiment file applies them.
Run fitRun(int devices, int64_t features, std::vector<int64_t> hidden, Index rows, int epochs,
           int batchSize, const DevicesSpec& knobs = {}) {
  set_random_seed(11);
  auto model = makeModel(features, hidden);
  Matrix x(rows, features), y(rows, 1);
  Rng rng(4);
  for (Index i = 0; i < rows; ++i) {
    for (Index j = 0; j < features; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = x(i, 0) > 0 ? 1.0f : 0.0f;
  }
  if (devices > 0) {
    DistributionSpec strategy;
    strategy.class_name = "DataParallel";
    apply_distribution(*model, strategy, devices, knobs);
  }
  Collector collector;
  TraceRecorder recorder;
  RunOptions run;
  run.callbacks = {&collector, &recorder};
  model->fit(x, y, FitOptions{.epochs = epochs, .batch_size = batchSize, .verbose = 0}, run);
  return {std::move(collector.steps), recorder.trace()};
}

QStringList deviceNames(int n) {
  QStringList names;
  for (int d = 0; d < n; ++d) names << QStringLiteral("cpu:%1").arg(d);
  return names;
}

// Feeds the steps as the main window does: live, a few per tick, then the run ends.
void feed(DeviceTimelineView& w, const std::vector<StepTrace>& steps, size_t perTick = 3) {
  w.clear(deviceNames(steps.empty() ? 1 : static_cast<int>(steps.front().spans.size())));
  w.setLive(true);
  for (size_t i = 0; i < steps.size(); i += perTick)
    w.appendSteps(
        {steps.begin() + static_cast<std::ptrdiff_t>(i),
         steps.begin() + static_cast<std::ptrdiff_t>(std::min(i + perTick, steps.size()))});
  w.setLive(false);
}

TraceSpan span(SpanKind kind, double begin, double duration) {
  TraceSpan s;
  s.kind = kind;
  s.begin_us = begin;
  s.duration_us = duration;
  return s;
}

// Step i by hand on 2 devices, 10 us apart: device 0 computes 4 us then all-reduces 2 us; device 1
// computes 2 us, waits 2 us, all-reduces 2 us.
StepTrace handStep(int i) {
  StepTrace s;
  s.step = static_cast<uint64_t>(i);
  s.epoch = i / 4;
  s.batch = i % 4;
  s.shard_rows = {5, 5};
  const double t = 10.0 * i;
  s.spans = {{span(SpanKind::kForward, t, 4), span(SpanKind::kCollective, t + 4, 2)},
             {span(SpanKind::kForward, t, 2), span(SpanKind::kWaiting, t + 2, 2),
              span(SpanKind::kCollective, t + 4, 2)}};
  return s;
}

// The steps with their spans laid end to end, 10 us each, every step 10 us after the longest lane
// of the one before; kinds, bytes and algorithms as they were.
std::vector<StepTrace> evenlyTimed(std::vector<StepTrace> steps) {
  double t = 0.0;
  for (StepTrace& s : steps) {
    double end = t;
    for (auto& spans : s.spans) {
      double at = t;
      for (TraceSpan& sp : spans) {
        sp.begin_us = at;
        sp.duration_us = 10.0;
        at += 10.0;
      }
      end = std::max(end, at);
    }
    t = end + 10.0;
  }
  return steps;
}

QString usageText(const DeviceUsage& u) {
  return QString::asprintf("busy %.1f%% · comm. %.1f%% · idle %.1f%%", u.busy_percent(),
                           u.communication_percent(), u.idle_percent());
}

void compareUsage(const std::vector<DeviceUsage>& got, const std::vector<DeviceUsage>& want) {
  QCOMPARE(got.size(), want.size());
  for (size_t d = 0; d < got.size(); ++d) {
    QCOMPARE(got[d].busy_us, want[d].busy_us);
    QCOMPARE(got[d].communication_us, want[d].communication_us);
    QCOMPARE(got[d].waiting_us, want[d].waiting_us);
    QCOMPARE(got[d].total_us, want[d].total_us);
  }
}

size_t spanCount(const StepTrace& s) {
  size_t n = 0;
  for (const auto& spans : s.spans) n += spans.size();
  return n;
}

}  // namespace

class TestDeviceTimeline : public QObject {
  Q_OBJECT
 private slots:
  void storeKeepsTheLatest_data();
  void storeKeepsTheLatest();
  void storeUsageByHand();
  void threeDeviceRun();
  void scrubbing_data();
  void scrubbing();
  void collectiveToolTipNamesBytes();
  void narrowSpansTakeShortLabels();
  void exportedTrace();
  void stragglerMakesOthersWait();
  void capacityWhileLive();
  void emptyAndSingleDevice();
  void manyDevicesScrollUnderFixedAxis();
  void screenshots();

 private:
  const Run& threeDevices();
  std::optional<Run> m_run;
};

void TestDeviceTimeline::narrowSpansTakeShortLabels() {
  QCOMPARE(TimelineCanvas::shortLabel(QStringLiteral("all-reduce")), QStringLiteral("AR"));
  QCOMPARE(TimelineCanvas::shortLabel(QStringLiteral("all-gather")), QStringLiteral("AG"));
  QCOMPARE(TimelineCanvas::shortLabel(QStringLiteral("reduce-scatter")), QStringLiteral("RS"));
  QCOMPARE(TimelineCanvas::shortLabel(TimelineCanvas::kindText(SpanKind::kUpdate)),
           QStringLiteral("upd"));
  QCOMPARE(TimelineCanvas::shortLabel(TimelineCanvas::kindText(SpanKind::kShardCopy)),
           QStringLiteral("copy"));
  QCOMPARE(TimelineCanvas::shortLabel(QStringLiteral("something")), QStringLiteral("something"));
}

// 40 rows in batches of 10 on 3 devices for 2 epochs: 8 steps, shards of 4, 3, 3 rows; the model
// Dense(1) on 4 features has 5 gradient floats.
const Run& TestDeviceTimeline::threeDevices() {
  if (!m_run) m_run = fitRun(3, 4, {}, 40, 2, 10);
  return *m_run;
}

void TestDeviceTimeline::storeKeepsTheLatest_data() {
  QTest::addColumn<int>("capacity");
  QTest::addColumn<int>("appended");
  QTest::newRow("under capacity") << 10 << 7;
  QTest::newRow("exactly full") << 7 << 7;
  QTest::newRow("drops three") << 4 << 7;
  QTest::newRow("keeps one") << 1 << 3;
}

void TestDeviceTimeline::storeKeepsTheLatest() {
  QFETCH(int, capacity);
  QFETCH(int, appended);
  TraceStore store(static_cast<size_t>(capacity));
  store.clear(2);
  for (int i = 0; i < appended; ++i) store.append(handStep(i));
  const int kept = std::min(capacity, appended);
  QCOMPARE(store.size(), size_t(kept));
  QCOMPARE(store.dropped(), size_t(appended - kept));
  QCOMPARE(store.devices(), 2);
  // Oldest first: steps appended - kept .. appended - 1.
  RunTrace expected;
  for (int i = 0; i < kept; ++i) {
    QCOMPARE(store.step(size_t(i)).step, uint64_t(appended - kept + i));
    expected.append(handStep(appended - kept + i));
  }
  const RunTrace got = store.toRunTrace();
  QCOMPARE(got.steps().size(), expected.steps().size());
  QCOMPARE(got.spans().size(), expected.spans().size());
  for (size_t i = 0; i < got.steps().size(); ++i)
    QCOMPARE(got.steps()[i].step, expected.steps()[i].step);
  compareUsage(store.usage(), summarize(expected));
  // Appending after a usage() call keeps the sums equal too.
  store.append(handStep(appended));
  expected = store.toRunTrace();
  compareUsage(store.usage(), summarize(expected));
  store.clear(3);
  QVERIFY(store.empty());
  QCOMPARE(store.dropped(), size_t(0));
  QCOMPARE(store.usage().size(), size_t(3));
  QCOMPARE(store.usage()[0].busy_percent(), 0.0);
}

void TestDeviceTimeline::storeUsageByHand() {
  // The last 2 of 5 hand steps (starting at 30 and 40 us): the run lasts 30..46 us = 16 us.
  // Device 0: busy 4 + 4 = 8 (50%), communication 2 + 2 = 4 (25%), idle 25%.
  // Device 1: busy 2 + 2 = 4 (25%), communication 4 (25%), waiting 4, idle 50%.
  TraceStore store(2);
  store.clear(2);
  for (int i = 0; i < 5; ++i) store.append(handStep(i));
  const auto u = store.usage();
  QCOMPARE(u[0].total_us, 16.0);
  QCOMPARE(u[0].busy_percent(), 50.0);
  QCOMPARE(u[0].communication_percent(), 25.0);
  QCOMPARE(u[0].idle_percent(), 25.0);
  QCOMPARE(u[1].busy_percent(), 25.0);
  QCOMPARE(u[1].waiting_us, 4.0);
  QCOMPARE(u[1].idle_percent(), 50.0);
  DeviceTimelineView w(nullptr, 2);
  w.resize(900, 260);
  feed(w, [] {
    std::vector<StepTrace> steps;
    for (int i = 0; i < 5; ++i) steps.push_back(handStep(i));
    return steps;
  }());
  QCOMPARE(w.laneText(0), QStringLiteral("busy 50.0% · comm. 25.0% · idle 25.0%"));
  QCOMPARE(w.laneText(1), QStringLiteral("busy 25.0% · comm. 25.0% · idle 50.0%"));
}

void TestDeviceTimeline::threeDeviceRun() {
  const Run& run = threeDevices();
  QCOMPARE(run.steps.size(), size_t(8));
  DeviceTimelineView w;
  w.resize(900, 260);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  w.clear(deviceNames(3));
  w.setLive(true);
  // Live: the latest 3 steps, scrolling as steps arrive.
  for (size_t i = 0; i < run.steps.size(); i += 3) {
    const size_t end = std::min(i + 3, run.steps.size());
    w.appendSteps({run.steps.begin() + static_cast<std::ptrdiff_t>(i),
                   run.steps.begin() + static_cast<std::ptrdiff_t>(end)});
    QCOMPARE(w.firstVisibleStep(), end > 3 ? end - 3 : 0);
    QCOMPARE(w.visibleStepCount(), std::min<size_t>(end, 3));
    QVERIFY(w.message().isEmpty());
  }
  w.setLive(false);
  QCOMPARE(w.laneCount(), 3);
  QCOMPARE(w.store().size(), size_t(8));
  // Every phase of every shown step is drawn, in its device's lane, in time order.
  const auto boxes = w.visibleSpans();
  size_t expected = 0;
  for (size_t i = 5; i < 8; ++i) expected += spanCount(run.steps[i]);
  QCOMPARE(boxes.size(), expected);
  std::set<SpanKind> kinds;
  std::map<int, std::vector<QRectF>> lanes;
  for (const auto& b : boxes) {
    kinds.insert(b.kind);
    QVERIFY(b.step >= 5 && b.step < 8);
    QVERIFY(w.rect().contains(b.rect.toRect()));
    lanes[b.device].push_back(b.rect);
  }
  QCOMPARE(kinds.size(), size_t(6));
  QCOMPARE(lanes.size(), size_t(3));
  for (int d = 1; d < 3; ++d) QVERIFY(lanes[d].front().top() > lanes[d - 1].front().bottom());
  for (const auto& [d, rects] : lanes)
    for (size_t k = 1; k < rects.size(); ++k) QVERIFY(rects[k].left() >= rects[k - 1].left());
  // The percentages are summarize()'s over the same run, as the CLI prints them.
  const auto usage = summarize(run.trace);
  compareUsage(w.store().usage(), usage);
  for (int d = 0; d < 3; ++d) QCOMPARE(w.laneText(d), usageText(usage[size_t(d)]));
  // Fewer steps shown: only the latest one's spans.
  w.setStepsShown(1);
  QCOMPARE(w.firstVisibleStep(), size_t(7));
  QCOMPARE(w.visibleSpans().size(), spanCount(run.steps[7]));
}

void TestDeviceTimeline::scrubbing_data() {
  QTest::addColumn<int>("shown");
  QTest::addColumn<int>("index");
  QTest::addColumn<int>("first");
  QTest::addColumn<QString>("caption");
  // 8 steps, 4 per epoch, a fresh model: kept step i is step i, epoch i / 4, batch i % 4 (0-based).
  // The window stays full: its first step is at most 8 - shown.
  QTest::newRow("first") << 3 << 0 << 0 << "Epoch 1, batch 1 (step 1)";
  QTest::newRow("third") << 3 << 2 << 2 << "Epoch 1, batch 3 (step 3)";
  QTest::newRow("second epoch") << 3 << 5 << 5 << "Epoch 2, batch 2 (step 6)";
  QTest::newRow("past the end") << 3 << 7 << 5 << "Epoch 2, batch 2 (step 6)";
  QTest::newRow("last alone") << 1 << 7 << 7 << "Epoch 2, batch 4 (step 8)";
}

void TestDeviceTimeline::scrubbing() {
  QFETCH(int, shown);
  QFETCH(int, index);
  QFETCH(int, first);
  QFETCH(QString, caption);
  DeviceTimelineView w;
  w.resize(900, 260);
  feed(w, threeDevices().steps);
  w.setStepsShown(shown);
  auto* slider = w.findChild<QSlider*>(QStringLiteral("stepSlider"));
  auto* spin = w.findChild<QSpinBox*>(QStringLiteral("step"));
  QVERIFY(slider && spin);
  QVERIFY(slider->isEnabled());
  QCOMPARE(slider->maximum(), 8 - shown);
  w.showStep(0);
  slider->setValue(index);
  QCOMPARE(w.firstVisibleStep(), size_t(first));
  QCOMPARE(w.visibleStepCount(), size_t(shown));
  QCOMPARE(w.caption(), caption);
  QCOMPARE(spin->value(), first + 1);
  for (const auto& b : w.visibleSpans())
    QVERIFY(b.step >= size_t(first) && b.step < size_t(first + shown));
  // The spin box moves the view as well (it counts from 1).
  spin->setValue(1);
  QCOMPARE(w.firstVisibleStep(), size_t(0));
  QCOMPARE(slider->value(), 0);
  QCOMPARE(w.caption(), QStringLiteral("Epoch 1, batch 1 (step 1)"));
}

void TestDeviceTimeline::collectiveToolTipNamesBytes() {
  DeviceTimelineView w;
  w.resize(900, 320);  // three lanes unscrolled under the synchronization sentence
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  // The run's spans with even timings: a step of the real run that the machine preempted can
  // squeeze a collective under a pixel beside its backward span, and the mouse then points at
  // either; what this test reads is the tooltip, not the timing.
  feed(w, evenlyTimed(threeDevices().steps));
  // Ring all-reduce of 5 floats on 3 devices, chunks of 1, 2, 2 floats: device d sends every
  // chunk but d, then every chunk but d + 1, and receives what device d - 1 sends.
  // Device 1 sends (5 - 2) + (5 - 2) = 6 floats (24 bytes) and receives device 0's
  // (5 - 1) + (5 - 2) = 7 floats (28 bytes).
  bool found = false;
  for (const auto& b : w.visibleSpans()) {
    if (b.device != 1 || b.kind != SpanKind::kCollective) continue;
    const QString text = w.toolTipAt(b.rect.center().toPoint());
    QVERIFY2(text.contains(QStringLiteral("cpu:1 · all_reduce")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Sent 24 bytes, received 28 bytes")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("ring")), qPrintable(text));
    QVERIFY2(text.contains(QStringLiteral("Duration: ")), qPrintable(text));
    found = true;
  }
  QVERIFY(found);
  // Durations: µs with one decimal below a millisecond, ms above.
  QCOMPARE(DeviceTimelineView::durationText(12.34), QStringLiteral("12.3 µs"));
  QCOMPARE(DeviceTimelineView::durationText(1234.5), QStringLiteral("1.23 ms"));
  QCOMPARE(DeviceTimelineView::bytesText(2500000), QStringLiteral("2,500,000 bytes (2.5 MB)"));
}

void TestDeviceTimeline::exportedTrace() {
  DeviceTimelineView w;
  feed(w, threeDevices().steps);
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("run.json"));
  QString error;
  QVERIFY2(w.exportChromeTrace(path, &error), qPrintable(error));
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const auto doc = nlohmann::json::parse(file.readAll().toStdString());
  std::set<std::string> processes;
  size_t complete = 0;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name")
      processes.insert(e.at("args").at("name").get<std::string>());
    if (e.at("ph") == "X") ++complete;
  }
  QCOMPARE(processes, (std::set<std::string>{"cpu:0", "cpu:1", "cpu:2"}));
  size_t spans = 0;
  for (size_t i = 0; i < w.store().size(); ++i) spans += spanCount(w.store().step(i));
  QCOMPARE(complete, spans);
  QCOMPARE(doc.at("otherData").at("steps").get<size_t>(), size_t(8));
  // A directory that does not exist: false and the reason.
  QVERIFY(!w.exportChromeTrace(dir.filePath(QStringLiteral("missing/run.json")), &error));
  QVERIFY2(error.contains(QStringLiteral("missing/run.json")), qPrintable(error));
}

void TestDeviceTimeline::stragglerMakesOthersWait() {
  // Device 1 at a tenth of the speed (devices.speed; a quarter let a loaded machine's scheduling
  // leave device 0 a sub-pixel wait). Structure only: in every step each lane
  // that waits shows its waiting span right before a collective; at each collective exactly one
  // device (the last to arrive) does not wait; and in some step the fast device 0 waits at the
  // first collective while the slow device 1 does not (failing only if device 0 arrived last in
  // all 20 steps), with the tooltip saying so.
  DevicesSpec knobs;
  knobs.speed = {1.0, 0.1};
  const Run run = fitRun(2, 16, {32}, 320, 1, 16, knobs);
  QCOMPARE(run.steps.size(), size_t(20));
  DeviceTimelineView w;
  w.resize(900, 260);
  feed(w, run.steps);
  w.setStepsShown(DeviceTimelineView::kMaxStepsShown);
  QCOMPARE(w.firstVisibleStep(), size_t(0));
  QCOMPARE(w.visibleStepCount(), size_t(20));
  std::map<std::pair<size_t, int>, std::vector<DeviceTimelineView::SpanBox>> byLane;
  for (const auto& b : w.visibleSpans()) byLane[{b.step, b.device}].push_back(b);
  QCOMPARE(byLane.size(), size_t(40));
  int slowLast = 0;
  const DeviceTimelineView::SpanBox* widest = nullptr;  // device 0's widest waiting box
  for (size_t step = 0; step < 20; ++step) {
    // waits[k][d]: device d waited before the step's collective k (one all-reduce for this small
    // model; a reduce-scatter and an all-gather for a large one).
    std::vector<std::array<bool, 2>> waits;
    for (int d = 0; d < 2; ++d) {
      const auto& boxes = byLane[{step, d}];
      size_t k = 0;
      for (size_t i = 0; i < boxes.size(); ++i) {
        if (boxes[i].kind == SpanKind::kWaiting) {
          QVERIFY(i + 1 < boxes.size());
          QCOMPARE(boxes[i + 1].kind, SpanKind::kCollective);
          QVERIFY(boxes[i + 1].rect.left() >= boxes[i].rect.left());
          if (d == 0 && (!widest || boxes[i].rect.width() > widest->rect.width()))
            widest = &boxes[i];
        }
        if (boxes[i].kind != SpanKind::kCollective) continue;
        if (waits.size() <= k) waits.push_back({false, false});
        waits[k][size_t(d)] = i > 0 && boxes[i - 1].kind == SpanKind::kWaiting;
        ++k;
      }
    }
    QVERIFY(!waits.empty());
    for (const auto& w : waits) QVERIFY(w[0] != w[1]);
    if (waits[0][0]) ++slowLast;
  }
  QVERIFY(slowLast > 0);
  QVERIFY(widest);
  QVERIFY2(widest->rect.width() >= 2.0, qPrintable(QString::number(widest->rect.width())));
  const QString text = w.toolTipAt(widest->rect.center().toPoint());
  QVERIFY2(text.startsWith(QStringLiteral("cpu:0 · waiting")), qPrintable(text));
  QVERIFY2(text.contains(QStringLiteral("straggler")), qPrintable(text));
}

void TestDeviceTimeline::capacityWhileLive() {
  DeviceTimelineView w(nullptr, 6);
  w.resize(900, 260);
  w.clear(deviceNames(2));
  w.setLive(true);
  for (int i = 0; i < 8; ++i) w.appendSteps({handStep(i)});
  QCOMPARE(w.store().size(), size_t(6));
  QCOMPARE(w.store().dropped(), size_t(2));
  QCOMPARE(w.firstVisibleStep(), size_t(3));  // the latest 3 of 6 kept: steps 5, 6, 7
  QCOMPARE(w.store().step(w.firstVisibleStep()).step, uint64_t(5));
  // Scrubbed while live: the view stays on the same step as older ones are dropped.
  w.showStep(2);
  QCOMPARE(w.store().step(2).step, uint64_t(4));
  w.appendSteps({handStep(8)});
  QCOMPARE(w.firstVisibleStep(), size_t(1));
  QCOMPARE(w.store().step(1).step, uint64_t(4));
  QCOMPARE(w.caption(), QStringLiteral("Epoch 2, batch 1 (step 5)"));
  // Following again: the latest steps.
  auto* follow = w.findChild<QPushButton*>(QStringLiteral("followLatest"));
  QVERIFY(follow);
  QVERIFY(!follow->isChecked());
  follow->click();
  QCOMPARE(w.firstVisibleStep(), size_t(3));
  QCOMPARE(w.store().step(3).step, uint64_t(6));
  w.setLive(false);
  compareUsage(w.store().usage(), summarize(w.store().toRunTrace()));
}

void TestDeviceTimeline::emptyAndSingleDevice() {
  DeviceTimelineView fresh;
  QCOMPARE(fresh.message(), kEmptyText);
  // A distributed setup before its run: Run draws it.
  fresh.setReadyDevices(3);
  QCOMPARE(fresh.message(),
           QStringLiteral("Press Run to see what each of the 3 devices does in each step."));
  fresh.setReadyDevices(1);
  QCOMPARE(fresh.message(), QStringLiteral("Press Run to see what the device does in each step."));
  fresh.setReadyDevices(0);
  QCOMPARE(fresh.message(), kEmptyText);
  QVERIFY(fresh.visibleSpans().empty());
  QString error;
  QVERIFY(!fresh.exportChromeTrace(QDir::temp().filePath(QStringLiteral("none.json")), &error));
  QVERIFY(!error.isEmpty());
  // One device without a distribution: fit() hands out no StepTrace at all.
  const Run run = fitRun(0, 4, {}, 20, 1, 10);
  QVERIFY(run.steps.empty());
  DeviceTimelineView w;
  w.resize(900, 260);
  feed(w, run.steps);
  QCOMPARE(w.message(), kEmptyText);
  QCOMPARE(w.caption(), QString());
  QVERIFY(!w.findChild<QSlider*>(QStringLiteral("stepSlider"))->isEnabled());
  QVERIFY(!w.findChild<QPushButton*>(QStringLiteral("exportTrace"))->isEnabled());
}

void TestDeviceTimeline::manyDevicesScrollUnderFixedAxis() {
  const Run run = fitRun(12, 4, {8}, 96, 1, 48);
  DeviceTimelineView w;
  w.resize(900, 260);
  feed(w, run.steps);
  w.show();
  QVERIFY(QTest::qWaitForWindowExposed(&w));
  auto* scroll = w.findChild<QScrollArea*>();
  auto* canvas = w.findChild<TimelineCanvas*>();
  QVERIFY(scroll && canvas);
  QCOMPARE(canvas->laneCount(), 12);
  const int viewport = scroll->viewport()->height();
  QVERIFY2(canvas->height() > viewport, "12 lanes in 260 px should scroll");
  QScrollBar* bar = scroll->verticalScrollBar();
  const int line = QFontMetrics(canvas->font()).height();
  for (int value : {0, bar->maximum() / 2, bar->maximum()}) {
    bar->setValue(value);
    QCoreApplication::processEvents();
    QCOMPARE(-canvas->y(), value);
    // The axis and the legend's first entry are inside what the scroll area shows.
    const QRect shown(0, value, canvas->width(), viewport);
    QVERIFY2(shown.contains(canvas->timeAxisRect()),
             qPrintable(QStringLiteral("scrolled to %1: axis at y %2, shown %3..%4")
                            .arg(value)
                            .arg(canvas->timeAxisRect().top())
                            .arg(shown.top())
                            .arg(shown.bottom())));
    const QPointF legendPoint(16, value + 5 + line / 2.0);
    QCOMPARE(canvas->legendAt(legendPoint), std::optional<SpanKind>(SpanKind::kShardCopy));
    // A span box scrolled under the legend is not what the mouse points at there.
    QVERIFY(canvas->boxAt(QPointF(canvas->timeAxisRect().center().x(), value + 5)) == nullptr);
  }
  // Scrolled to the end, the last lane ends above the axis.
  const TimelineCanvas::SpanBox* last = nullptr;
  for (const auto& b : canvas->boxes())
    if (b.device == 11) last = &b;
  QVERIFY(last);
  QVERIFY(last->rect.bottom() <= canvas->timeAxisRect().top());
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
  if (!dir.isEmpty()) {
    bar->setValue(bar->maximum() / 2);
    QCoreApplication::processEvents();
    QVERIFY(w.grab().save(QDir(dir).filePath(QStringLiteral("device_timeline_12_scrolled.png"))));
  }
}

void TestDeviceTimeline::screenshots() {
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOTS");
  if (dir.isEmpty()) QSKIP("FITBENCH_SCREENSHOTS is not set");
  struct Shot {
    const char* file;
    int devices;
    std::vector<double> speed;
  };
  const Shot shots[] = {{"device_timeline_2.png", 2, {}},
                        {"device_timeline_4_straggler.png", 4, {1.0, 1.0, 0.3, 1.0}}};
  for (const Shot& shot : shots) {
    DevicesSpec knobs;
    knobs.speed = shot.speed;
    const Run run = fitRun(shot.devices, 64, {256, 256}, 1024, 1, 256, knobs);
    DeviceTimelineView w;
    w.resize(900, 260);
    feed(w, run.steps);
    QVERIFY(w.grab().save(QDir(dir).filePath(QLatin1String(shot.file))));
  }
}

QTEST_MAIN(TestDeviceTimeline)
#include "tst_device_timeline_view.moc"
