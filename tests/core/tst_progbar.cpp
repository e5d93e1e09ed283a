// Progress text against Keras 3's output. Expected lines are worked out by hand from
// keras/src/utils/progbar.py and keras/src/callbacks/progbar_logger.py (the arithmetic is in the
// comments), or quoted from real Keras 3 runs (source named at each).
#include <QTest>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "core/training/progbar.h"

using fitbench::Logs;
using fitbench::Progbar;

namespace {

const std::string kBold = "\x1b[1m";
const std::string kReset = "\x1b[0m";
const std::string kGreen = "\x1b[32m";
const std::string kWhite = "\x1b[37m";

std::string bars(int n) {
  std::string s;
  for (int i = 0; i < n; ++i) s += "\u2501";  // ━
  return s;
}

// A Progbar writing to a string, with a clock the test sets.
struct Run {
  std::ostringstream out;
  double now = 0.0;
  Progbar bar;
  Run(int verbose, bool interactive) : bar(out, verbose, interactive, [this] { return now; }) {}
  std::string text() const { return out.str(); }
};

// One epoch of `steps` batches: begin at t=0, batch k at times[k-1], end at times.back().
std::string one_epoch(int verbose, bool interactive, const std::vector<double>& times,
                      const Logs& batch_logs, const Logs& end_logs, int epochs = 1) {
  Run run(verbose, interactive);
  run.bar.begin_epoch(0, epochs);
  const int steps = static_cast<int>(times.size());
  for (int k = 1; k <= steps; ++k) {
    run.now = times[k - 1];
    run.bar.update(k, steps, batch_logs);
  }
  run.bar.end_epoch(steps, end_logs);
  return run.text();
}

}  // namespace

class TestProgbar : public QObject {
  Q_OBJECT

 private slots:
  void verbose2_epoch_line() {
    // The seed run of DESIGN.md: 8 steps, 0.408 s: elapsed "0s", 0.408 / 8 = 51 ms per step
    // (verbose=2 divides by all steps). accuracy 0.7734375 -> "0.7734" (half-even at 5e-5).
    Run run(2, false);
    run.now = 10.0;
    run.bar.begin_epoch(0, 4);
    for (int k = 1; k <= 8; ++k) run.bar.update(k, 8, {{"accuracy", 0.5}, {"loss", 0.7}});
    run.now = 10.408;
    run.bar.end_epoch(8, {{"accuracy", 0.7734375}, {"loss", 0.46604}});
    QCOMPARE(run.text(),
             std::string("Epoch 1/4\n8/8 - 0s - 51ms/step - accuracy: 0.7734 - loss: 0.4660\n"));
  }

  void time_per_step_units_data() {
    QTest::addColumn<double>("elapsed");
    QTest::addColumn<int>("steps");
    QTest::addColumn<QString>("expected");
    // Progbar._format_time: >= 1 s or exactly 0 in s, >= 1e-3 in ms, else us; {:.0f} rounds half
    // to even, so 2.5 s prints "2s" and 1.5 s "2s".
    QTest::newRow("us") << 0.0002 << 4 << "4/4 - 0s - 50us/step\n";
    QTest::newRow("ms") << 0.2 << 4 << "4/4 - 0s - 50ms/step\n";
    QTest::newRow("1ms boundary") << 0.004 << 4 << "4/4 - 0s - 1ms/step\n";
    QTest::newRow("just under 1 s") << 3.9984 << 4 << "4/4 - 4s - 1000ms/step\n";
    QTest::newRow("s half up") << 6.0 << 4 << "4/4 - 6s - 2s/step\n";
    QTest::newRow("s half even") << 10.0 << 4 << "4/4 - 10s - 2s/step\n";
    QTest::newRow("zero") << 0.0 << 4 << "4/4 - 0s - 0s/step\n";
    QTest::newRow("count padded") << 0.05 << 10 << "10/10 - 0s - 5ms/step\n";
  }

  void time_per_step_units() {
    QFETCH(double, elapsed);
    QFETCH(int, steps);
    QFETCH(QString, expected);
    Run run(2, false);
    run.bar.begin_epoch(0, 1);
    run.now = elapsed;
    run.bar.end_epoch(steps, {});
    QCOMPARE(QString::fromStdString(run.text()), expected);
  }

  void value_format_data() {
    QTest::addColumn<double>("value");
    QTest::addColumn<QString>("verbose1");
    QTest::addColumn<QString>("verbose2");
    // {:.4f} when abs(v) > 1e-3 else {:.4e}; the verbose=2 branch tests v > 1e-3 (no abs).
    QTest::newRow("plain") << 0.46604 << "0.4660"
                           << "0.4660";
    QTest::newRow("small") << 1.234e-4 << "1.2340e-04"
                           << "1.2340e-04";
    QTest::newRow("1e-3 is not above 1e-3") << 1e-3 << "1.0000e-03"
                                            << "1.0000e-03";
    QTest::newRow("float32 0.001 is") << static_cast<double>(0.001f) << "0.0010"
                                      << "0.0010";
    QTest::newRow("negative") << -0.5 << "-0.5000"
                              << "-5.0000e-01";
    QTest::newRow("zero") << 0.0 << "0.0000e+00"
                          << "0.0000e+00";
    QTest::newRow("large") << 12345.678 << "12345.6780"
                           << "12345.6780";
    QTest::newRow("nan") << std::numeric_limits<double>::quiet_NaN() << "nan"
                         << "nan";
    QTest::newRow("-nan") << -std::numeric_limits<double>::quiet_NaN() << "nan"
                          << "nan";
    QTest::newRow("inf") << std::numeric_limits<double>::infinity() << "inf"
                         << "inf";
  }

  void value_format() {
    QFETCH(double, value);
    QFETCH(QString, verbose1);
    QFETCH(QString, verbose2);
    // Both final lines end with " - loss: <value>\n".
    std::string v1 = one_epoch(1, false, {0.001, 0.002}, {{"loss", 1.0}}, {{"loss", value}});
    std::string v2 = one_epoch(2, false, {0.001, 0.002}, {{"loss", 1.0}}, {{"loss", value}});
    QVERIFY2(QString::fromStdString(v1).endsWith(" - loss: " + verbose1 + "\n"), v1.c_str());
    QVERIFY2(QString::fromStdString(v2).endsWith(" - loss: " + verbose2 + "\n"), v2.c_str());
  }

  void epoch_lines() {
    // "Epoch e/E" only when epochs > 1, numbered from 1, for verbose 1 and 2; verbose=0 is silent.
    Run two(2, false);
    two.bar.begin_epoch(2, 4);
    two.bar.end_epoch(1, {{"loss", 0.5}});
    QCOMPARE(two.text(), std::string("Epoch 3/4\n1/1 - 0s - 0s/step - loss: 0.5000\n"));

    Run one(1, false);
    one.bar.begin_epoch(0, 1);
    one.bar.update(1, 1, {{"loss", 0.5}});
    one.bar.end_epoch(1, {{"loss", 0.5}});
    QCOMPARE(one.text(), "1/1 " + bars(20) + " 0s 0s/step - loss: 0.5000\n");

    Run silent(0, true);
    silent.bar.begin_epoch(0, 4);
    silent.bar.update(1, 1, {{"loss", 0.5}});
    silent.bar.end_epoch(1, {{"loss", 0.5}});
    silent.bar.begin_evaluate();
    silent.bar.end_evaluate(1, {{"loss", 0.5}});
    silent.bar.begin_predict();
    silent.bar.end_predict(1);
    QCOMPARE(silent.text(), std::string());
  }

  void verbose1_not_interactive_prints_the_final_line_only() {
    // Step 1 takes 1 s, the next three 0.1 s each. verbose=1 leaves the first step out once a
    // later one is seen: (1.3 - 1.0) / 3 = 100 ms; verbose=2 divides the whole epoch: 1.3 / 4 =
    // 325 ms. Batch logs are not shown: the final line has the end logs.
    const std::vector<double> times = {1.0, 1.1, 1.2, 1.3};
    const Logs batch = {{"accuracy", 0.25}, {"loss", 0.9}};
    const Logs end = {{"accuracy", 0.75}, {"loss", 0.5}};
    std::string v1 = one_epoch(1, false, times, batch, end, 2);
    QCOMPARE(v1,
             "Epoch 1/2\n4/4 " + bars(20) + " 1s 100ms/step - accuracy: 0.7500 - loss: 0.5000\n");
    QVERIFY(v1.find('\r') == std::string::npos);
    QVERIFY(v1.find('\b') == std::string::npos);
    QVERIFY(v1.find('\x1b') == std::string::npos);
    std::string v2 = one_epoch(2, false, times, batch, end, 2);
    QCOMPARE(v2,
             std::string("Epoch 1/2\n4/4 - 1s - 325ms/step - accuracy: 0.7500 - loss: 0.5000\n"));
  }

  void interactive_redraws_the_bar() {
    Run run(1, true);
    run.bar.begin_epoch(0, 1);  // t = 0
    run.now = 0.5;
    run.bar.update(1, 3, {{"loss", 0.9}});
    run.now = 0.52;  // 0.02 s after the last drawing: not drawn, but averaged
    run.bar.update(2, 3, {{"loss", 0.6}});
    run.now = 1.0;
    run.bar.update(3, 3, {{"loss", 0.3}});
    run.bar.end_epoch(3, {{"loss", 0.4}});

    // Step 1: 0.5 s per step, ETA 0.5 * 2 = 1 s, int(20 * 1/3) = 6 green of 20; visible width
    // 3 + 1 + 20 + 3 (" 1s") + 11 (" 500ms/step") + 15 (" - loss: 0.9000") = 53.
    std::string first = "\r" + kBold + "1/3" + kReset + " " + kGreen + bars(6) + kReset + kWhite +
                        bars(14) + kReset + " " + kBold + "1s" + kReset +
                        " 500ms/step - loss: 0.9000";
    // Step 3: (1.0 - 0.5) / 2 = 250 ms, ETA 0 s; loss shown is the mean of the three batch logs
    // (0.9 + 0.6 + 0.3) / 3 = 0.6. Width 53 again: no padding.
    std::string third = std::string(53, '\b') + "\r" + kBold + "3/3" + kReset + " " + kGreen +
                        bars(20) + kReset + kWhite + kReset + " " + kBold + "0s" + kReset +
                        " 250ms/step - loss: 0.6000";
    // End: elapsed 1 s and the end logs as given.
    std::string last = std::string(53, '\b') + "\r" + kBold + "3/3" + kReset + " " + kGreen +
                       bars(20) + kReset + kWhite + kReset + " " + kBold + "1s" + kReset +
                       " 250ms/step - loss: 0.4000\n";
    QCOMPARE(run.text(), first + third + last);
  }

  void interactive_pads_a_shorter_last_line() {
    Run run(1, true);
    run.bar.begin_epoch(0, 1);
    run.now = 3700.0;
    run.bar.update(1, 2, {{"loss", 0.5}});
    run.now = 3700.01;
    run.bar.update(2, 2, {{"loss", 0.5}});  // within 0.05 s: not drawn
    run.bar.end_epoch(2, {{"loss", 0.5}});
    // Step 1: 3700 s per step, ETA 3700 s = 1:01:40; width 3 + 1 + 20 + 8 + 11 + 15 = 58.
    std::string first = "\r" + kBold + "1/2" + kReset + " " + kGreen + bars(10) + kReset + kWhite +
                        bars(10) + kReset + " " + kBold + "1:01:40" + kReset +
                        " 3700s/step - loss: 0.5000";
    // End: (3700.01 - 3700) / 1 = 10 ms, elapsed 3700 s; width 3 + 1 + 20 + 6 + 10 + 15 = 55,
    // so 3 spaces wipe the end of the longer line.
    std::string last = std::string(58, '\b') + "\r" + kBold + "2/2" + kReset + " " + kGreen +
                       bars(20) + kReset + kWhite + kReset + " " + kBold + "3700s" + kReset +
                       " 10ms/step - loss: 0.5000   \n";
    QCOMPARE(run.text(), first + last);
  }

  void eta_format_data() {
    QTest::addColumn<double>("first_step");
    QTest::addColumn<int>("steps");
    QTest::addColumn<QString>("eta");
    // ETA = time per step * steps left: "%ds" up to 60 s, "%d:%02d" up to an hour, then h:mm:ss.
    QTest::newRow("seconds truncated") << 5.5 << 2 << "5s";
    QTest::newRow("under 1 s") << 0.25 << 5 << "1s";
    QTest::newRow("60 s is still seconds") << 20.0 << 4 << "60s";
    QTest::newRow("61 s") << 30.5 << 3 << "1:01";
    QTest::newRow("minutes") << 65.0 << 2 << "1:05";
    QTest::newRow("hours") << 3700.0 << 2 << "1:01:40";
  }

  void eta_format() {
    QFETCH(double, first_step);
    QFETCH(int, steps);
    QFETCH(QString, eta);
    Run run(1, true);
    run.bar.begin_epoch(0, 1);
    run.now = first_step;
    run.bar.update(1, steps, {});
    const std::string shown = " " + kBold + eta.toStdString() + kReset + " ";
    QVERIFY2(run.text().find(shown) != std::string::npos, run.text().c_str());
  }

  void count_is_right_aligned_and_bar_truncates() {
    // "%2d/%d" for 10 steps; int(20 * 3/10) = 6 green.
    Run run(1, true);
    run.bar.begin_epoch(0, 1);
    run.now = 0.3;
    run.bar.update(3, 10, {});
    const std::string start = "\r" + kBold + " 3/10" + kReset + " " + kGreen + bars(6) + kReset +
                              kWhite + bars(14) + kReset;
    QVERIFY2(run.text().rfind(start, 0) == 0, run.text().c_str());
  }

  void evaluate_lines() {
    // evaluate(verbose=1) to a log: 4 batches 2 ms apart after a 2 ms first one:
    // (0.008 - 0.002) / 3 = 2 ms.
    Run v1(1, false);
    v1.bar.begin_evaluate();
    for (int k = 1; k <= 4; ++k) {
      v1.now = 0.002 * k;
      v1.bar.update(k, 4, {{"accuracy", 0.5}, {"loss", 0.7}});
    }
    v1.bar.end_evaluate(4, {{"accuracy", 0.7734375}, {"loss", 0.46604}});
    QCOMPARE(v1.text(), "4/4 " + bars(20) + " 0s 2ms/step - accuracy: 0.7734 - loss: 0.4660\n");

    // evaluate(verbose=2); the line is quoted from a Keras 3 run (a README of a GTSRB traffic-sign
    // classifier): "333/333 - 1s - 2ms/step - accuracy: 0.9588 - loss: 0.1843". 0.7 s / 333 steps
    // = 2.1 ms; elapsed 0.7 s rounds to 1 s.
    Run v2(2, false);
    v2.bar.begin_evaluate();
    v2.now = 0.7;
    v2.bar.end_evaluate(333, {{"accuracy", 0.9588}, {"loss", 0.1843}});
    QCOMPARE(v2.text(), std::string("333/333 - 1s - 2ms/step - accuracy: 0.9588 - loss: 0.1843\n"));
  }

  void predict_line() {
    // predict() shows no values. Quoted from a Keras 3 run (an XOR example's comment):
    // "1/1 ━━━━━━━━━━━━━━━━━━━━ 0s 33ms/step". One step of 33 ms.
    Run run(1, false);
    run.bar.begin_predict();
    run.now = 0.033;
    run.bar.update(1, 1, {{"outputs", 0.25}});
    run.bar.end_predict(1);
    QCOMPARE(run.text(), "1/1 " + bars(20) + " 0s 33ms/step\n");
  }

  void validation_and_learning_rate_follow_training_keys() {
    // Quoted from a Keras 3 run with ReduceLROnPlateau (a training log in a public repository):
    // "198/198 ━━━━━━━━━━━━━━━━━━━━ 17s 68ms/step - accuracy: 0.9076 - loss: 0.4960 -
    //  val_accuracy: 0.9173 - val_loss: 0.3759 - learning_rate: 0.0010".
    // Timing: first step done at 3.6 s, then 68 ms per step: (13.396) / 197 = 68 ms, elapsed
    // 16.996 s -> "17s". The learning rate is a float32 0.001, just above 1e-3, hence "0.0010".
    std::vector<double> times;
    for (int k = 1; k <= 198; ++k) times.push_back(3.6 + 0.068 * (k - 1));
    const Logs end = {{"accuracy", 0.9076},
                      {"learning_rate", static_cast<double>(0.001f)},
                      {"loss", 0.4960},
                      {"val_accuracy", 0.9173},
                      {"val_loss", 0.3759}};
    std::string line = one_epoch(1, false, times, {{"accuracy", 0.9}, {"loss", 0.5}}, end);
    QCOMPARE(line, "198/198 " + bars(20) +
                       " 17s 68ms/step - accuracy: 0.9076 - loss: 0.4960 - val_accuracy: 0.9173 "
                       "- val_loss: 0.3759 - learning_rate: 0.0010\n");
  }

  void each_epoch_starts_a_fresh_bar() {
    // The second epoch's time is measured from its own start (t = 5), and its line does not
    // carry values from the first epoch.
    Run run(2, false);
    run.bar.begin_epoch(0, 2);
    run.now = 4.0;
    run.bar.end_epoch(2, {{"loss", 0.5}, {"mse", 0.25}});
    run.now = 5.0;
    run.bar.begin_epoch(1, 2);
    run.now = 5.5;
    run.bar.end_epoch(2, {{"loss", 0.25}});
    QCOMPARE(run.text(), std::string("Epoch 1/2\n2/2 - 4s - 2s/step - loss: 0.5000 - mse: 0.2500\n"
                                     "Epoch 2/2\n2/2 - 0s - 250ms/step - loss: 0.2500\n"));
  }
};

QTEST_GUILESS_MAIN(TestProgbar)
#include "tst_progbar.moc"
