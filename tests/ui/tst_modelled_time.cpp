// The device timeline's modelled time: the Measured | Modelled pair works by mouse and by
// keyboard and the view says in words which time it shows; modelled steps of the seed
// (DataParallel on 2 devices) and of the 2 x 2 ModelParallel example have the step model's
// seconds for every phase of every device, laid end to end, and the 2 x 2 mesh's lanes are
// balanced; the sentence about thread synchronization appears under the lanes only when
// measured collectives take a large share of the step and far more than the link model gives; a
// run in the window hands its plan to the timeline.
#include <QLabel>
#include <QTest>
#include <QToolButton>
#include <cmath>

#include "core/io/experiment.h"
#include "core/run/run_plan.h"
#include "core/run/step_time.h"
#include "tests/ui/window_fixtures.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/rehearsal/target_chooser.h"

using namespace fitbench;

namespace {

CapacityInput exampleInput(const QString& name, int devices) {
  const std::filesystem::path file =
      std::filesystem::path(FITBENCH_SOURCE_DIR) / "resources/examples" / name.toStdString();
  RunOverrides overrides;
  overrides.devices = devices;
  PlanContext context;
  context.base_dir = file.parent_path();
  return capacity_input(plan_run(read_experiment(file), overrides, context));
}

TraceSpan span(SpanKind kind, double begin, double duration, int64_t bytes = 0) {
  TraceSpan s;
  s.kind = kind;
  s.begin_us = begin;
  s.duration_us = duration;
  s.bytes_sent = s.bytes_received = bytes;
  return s;
}

// `steps` measured steps on `rows.size()` devices, each device computing `compute` µs (forward
// and backward halves), then all-reducing for `collective` µs and updating for 1 µs, 5 µs apart.
std::vector<StepTrace> measuredSteps(int steps, const std::vector<int64_t>& rows, double compute,
                                     double collective) {
  std::vector<StepTrace> out;
  double t = 0.0;
  for (int i = 0; i < steps; ++i) {
    StepTrace s;
    s.step = static_cast<uint64_t>(i);
    s.epoch = 0;
    s.batch = i;
    s.shard_rows = rows;
    for (size_t d = 0; d < rows.size(); ++d)
      s.spans.push_back({span(SpanKind::kForward, t, compute / 2),
                         span(SpanKind::kBackward, t + compute / 2, compute / 2),
                         span(SpanKind::kCollective, t + compute, collective, 20),
                         span(SpanKind::kUpdate, t + compute + collective, 1.0)});
    out.push_back(std::move(s));
    t += compute + collective + 1.0 + 5.0;
  }
  return out;
}

QStringList names(size_t n) {
  QStringList out;
  for (size_t d = 0; d < n; ++d) out << QStringLiteral("cpu:%1").arg(d);
  return out;
}

void feed(DeviceTimelineView& w, const std::vector<StepTrace>& steps) {
  w.clear(names(steps.front().spans.size()));
  w.setLive(true);
  w.appendSteps(steps);
  w.setLive(false);
}

bool near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

}  // namespace

class TestModelledTime : public QObject {
  Q_OBJECT
 private slots:
  void switchByMouseAndKeyboard() {
    DeviceTimelineView w;
    w.resize(1000, 320);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setModelInput(exampleInput(QStringLiteral("seed.json"), 2));
    feed(w, measuredSteps(4, {8, 8}, 4.0, 30.0));
    QCOMPARE(w.timeMode(), DeviceTimelineView::TimeMode::kMeasured);
    QVERIFY2(w.modeText().startsWith(QStringLiteral("Measured time on this computer")),
             qPrintable(w.modeText()));
    QVERIFY(!w.targetChooser()->isVisible());
    QVERIFY(!w.modelledButton()->toolTip().isEmpty());

    QTest::mouseClick(w.modelledButton(), Qt::LeftButton);
    QCOMPARE(w.timeMode(), DeviceTimelineView::TimeMode::kModelled);
    QVERIFY(w.modelledButton()->isChecked());
    QVERIFY(!w.measuredButton()->isChecked());
    QVERIFY(w.targetChooser()->isVisible());
    // The default target is this machine's preset, named with its rates.
    QVERIFY2(w.modeText().startsWith(QStringLiteral("Modelled time: compute at 20 GFLOP/s per "
                                                    "device, links 2 µs + 10 GB/s")),
             qPrintable(w.modeText()));
    QVERIFY(w.modeText().contains(QStringLiteral("target: this-machine")));

    // Keyboard, as a segmented pair: Tab reaches the chosen one, the arrows choose.
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    w.modelledButton()->setFocus();
    QTest::keyClick(w.modelledButton(), Qt::Key_Left);
    QCOMPARE(w.timeMode(), DeviceTimelineView::TimeMode::kMeasured);
    QVERIFY(w.measuredButton()->hasFocus());
    QVERIFY(w.modeText().startsWith(QStringLiteral("Measured time")));
    QTest::keyClick(w.measuredButton(), Qt::Key_Right);
    QCOMPARE(w.timeMode(), DeviceTimelineView::TimeMode::kModelled);
    QVERIFY(w.modelledButton()->hasFocus());
    QTest::keyClick(w.modelledButton(), Qt::Key_Tab);
    QVERIFY(w.targetChooser()->hasFocus());
    QTest::keyClick(w.targetChooser(), Qt::Key_Backtab);
    QVERIFY(w.modelledButton()->hasFocus());

    // Another target: its rates in the words, the modelled steps again.
    QVERIFY(w.targetChooser()->selectTarget(QStringLiteral("dgx1-v100")));
    QVERIFY2(w.modeText().contains(QStringLiteral("15.7 TFLOP/s")), qPrintable(w.modeText()));
    QVERIFY(w.modeText().contains(QStringLiteral("target: dgx1-v100")));
  }

  void modelledPhasesAreTheStepModel_data() {
    QTest::addColumn<QString>("example");
    QTest::addColumn<int>("devices");
    QTest::addColumn<std::vector<int64_t>>("rows");
    QTest::newRow("seed, DataParallel on 2")
        << QStringLiteral("seed.json") << 2 << std::vector<int64_t>{8, 8};
    QTest::newRow("ModelParallel 2 x 2")
        << QStringLiteral("model_parallel_2x2.json") << 4 << std::vector<int64_t>{16, 16, 16, 16};
  }

  void modelledPhasesAreTheStepModel() {
    QFETCH(QString, example);
    QFETCH(int, devices);
    QFETCH(std::vector<int64_t>, rows);
    const CapacityInput in = exampleInput(example, devices);
    DeviceTimelineView w;
    w.resize(1000, 320);
    w.setModelInput(in);
    // Measured: one device much busier than the others, as oversubscribed threads make it.
    std::vector<StepTrace> steps = measuredSteps(5, rows, 4.0, 30.0);
    for (StepTrace& s : steps) s.spans[devices - 1][1].duration_us += 200.0;
    feed(w, steps);
    QVERIFY(w.targetChooser()->selectTarget(QStringLiteral("dgx1-v100")));
    w.setTimeMode(DeviceTimelineView::TimeMode::kModelled);

    const Target target = read_target("dgx1-v100", "test");
    const StepPhases p = predict_step_phases(in, target);
    const StepTime t = predict_step(in, target);
    const TraceStore& shown = w.shownStore();
    QCOMPARE(shown.size(), steps.size());
    QCOMPARE(shown.devices(), devices);
    double stepStart = 0.0;
    for (size_t i = 0; i < shown.size(); ++i) {
      const StepTrace& s = shown.step(i);
      QCOMPARE(s.step, steps[i].step);
      double stepEnd = stepStart;
      for (int d = 0; d < devices; ++d) {
        const auto& spans = s.spans[static_cast<size_t>(d)];
        const DevicePhases& want = p.devices[static_cast<size_t>(d)];
        QCOMPARE(s.shard_rows[static_cast<size_t>(d)], rows[static_cast<size_t>(d)]);
        double forward = 0, backward = 0, update = 0;
        std::vector<double> collectives;
        QCOMPARE(spans.front().begin_us, stepStart);
        for (size_t k = 0; k < spans.size(); ++k) {
          if (k > 0) QVERIFY(near(spans[k].begin_us, spans[k - 1].end_us()));  // end to end
          if (spans[k].kind == SpanKind::kForward) forward += spans[k].duration_us;
          if (spans[k].kind == SpanKind::kBackward) backward += spans[k].duration_us;
          if (spans[k].kind == SpanKind::kUpdate) update += spans[k].duration_us;
          if (spans[k].kind == SpanKind::kCollective) collectives.push_back(spans[k].duration_us);
        }
        QVERIFY(near(forward, want.forward_s * 1e6));
        QVERIFY(near(backward, want.backward_s * 1e6));
        QVERIFY(near(update, want.update_s * 1e6));
        QCOMPARE(collectives.size(), t.collectives.size());
        for (size_t c = 0; c < collectives.size(); ++c)
          QVERIFY(near(collectives[c], t.collectives[c].seconds * 1e6));
        stepEnd = std::max(stepEnd, spans.back().end_us());
      }
      // Each step lasts what predict_step gives, and the next starts where it ends.
      QVERIFY2(
          near(stepEnd - stepStart, t.total_s * 1e6),
          qPrintable(QStringLiteral("%1 vs %2").arg(stepEnd - stepStart).arg(t.total_s * 1e6)));
      stepStart = stepEnd;
    }
    // The lanes' shares are the modelled ones: every device of these examples computes alike.
    for (int d = 1; d < devices; ++d) QCOMPARE(w.laneText(d), w.laneText(0));
    w.setTimeMode(DeviceTimelineView::TimeMode::kMeasured);
    QVERIFY(w.laneText(devices - 1) != w.laneText(0));
  }

  void synchronizationSentence_data() {
    QTest::addColumn<double>("compute");
    QTest::addColumn<double>("collective");
    QTest::addColumn<bool>("shown");
    // The seed's all-reduce of 5 floats on this machine's 2 µs links: about 4 µs a step.
    QTest::newRow("collectives 30 µs of 35") << 4.0 << 30.0 << true;
    QTest::newRow("collectives a small share") << 200.0 << 30.0 << false;
    QTest::newRow("collectives as the link model") << 2.0 << 5.0 << false;
  }

  void synchronizationSentence() {
    QFETCH(double, compute);
    QFETCH(double, collective);
    QFETCH(bool, shown);
    DeviceTimelineView w;
    w.resize(1000, 320);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    const CapacityInput in = exampleInput(QStringLiteral("seed.json"), 2);
    w.setModelInput(in);
    feed(w, measuredSteps(6, {8, 8}, compute, collective));
    const auto* note = w.findChild<QLabel*>(QStringLiteral("synchronizationNote"));
    QVERIFY(note);
    QCOMPARE(note->isVisible(), shown);
    QCOMPARE(w.synchronizationText().isEmpty(), !shown);
    if (!shown) return;
    const QString text = w.synchronizationText();
    QVERIFY2(text.startsWith(QStringLiteral("Collectives here are mostly thread "
                                            "synchronization on this ")),
             qPrintable(text));
    // Six steps of compute + collective + 1 µs, 5 µs apart: the run lasts 6 steps less a gap.
    const double share = 100.0 * 6 * collective / (6 * (compute + collective + 6.0) - 5.0);
    QVERIFY2(text.contains(QStringLiteral("%1% of each step").arg(share, 0, 'f', 0)),
             qPrintable(text));
    const double modelled = predict_step(in, this_machine()).communication_s * 1e6;
    QVERIFY2(text.contains(DeviceTimelineView::durationText(modelled)), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("see Modelled")));
    // Not in modelled time, which has no thread synchronization.
    QTest::mouseClick(w.modelledButton(), Qt::LeftButton);
    QVERIFY(!note->isVisible());
    QVERIFY(w.synchronizationText().isEmpty());
  }

  // A run in the window hands its plan to the timeline: after the 2 x 2 example every kept step
  // has its modelled copy, and --show's timeline-modelled and timeline choose the time.
  void windowRunHandsThePlanToTheTimeline() {
    auto w = fixtures::makeWindow();
    QVERIFY(w->openFile(fixtures::example("model_parallel_2x2.json"), nullptr, true));
    QVERIFY(fixtures::runToEnd(*w));
    DeviceTimelineView* t = w->timelineView();
    QTRY_VERIFY(t->store().size() > 0);
    w->showView(QStringLiteral("timeline-modelled"));
    QCOMPARE(t->timeMode(), DeviceTimelineView::TimeMode::kModelled);
    QCOMPARE(t->shownStore().size(), t->store().size());
    QCOMPARE(t->shownStore().devices(), 4);
    QVERIFY2(t->modeText().startsWith(QStringLiteral("Modelled time: compute at")),
             qPrintable(t->modeText()));
    w->showView(QStringLiteral("timeline"));
    QCOMPARE(t->timeMode(), DeviceTimelineView::TimeMode::kMeasured);
  }

  // Without the run's plan there is no modelled time, and the view says why.
  void noPlanNoModelledTime() {
    DeviceTimelineView w;
    feed(w, measuredSteps(3, {8, 8}, 4.0, 30.0));
    w.setTimeMode(DeviceTimelineView::TimeMode::kModelled);
    QCOMPARE(w.shownStore().size(), size_t{0});
    QVERIFY2(w.modeText().contains(QStringLiteral("press Run")), qPrintable(w.modeText()));
    QVERIFY(w.synchronizationText().isEmpty());
  }
};

QTEST_MAIN(TestModelledTime)
#include "tst_modelled_time.moc"
