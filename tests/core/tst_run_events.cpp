// A run's events as JSON lines (core/run/run_events.h): a seed run on 2 DataParallel devices
// written by RunEventWriter reads back with parse_run_event into what the run reported (its
// History, every step's spans, the Keras text, the usage), and a line that is not an event is
// refused with a sentence naming the line and the field.
#include <QTest>
#include <cmath>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/io/experiment.h"
#include "core/run/run.h"
#include "core/run/run_events.h"
#include "core/run/run_plan.h"

using namespace fitbench;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Keeps every step trace fit() reports, to compare with the step events.
class Steps : public Callback {
 public:
  void on_step_trace(const StepTrace& t) override { steps.push_back(t); }
  std::vector<StepTrace> steps;
};

}  // namespace

class TestRunEvents : public QObject {
  Q_OBJECT
 private slots:
  void seed_run_reads_back();
  void text_lines_are_the_keras_text();
  void bad_lines_data();
  void bad_lines();
  void not_finite_is_null();
  void redrawn_lines_keep_their_last_drawing();
};

void TestRunEvents::seed_run_reads_back() {
  RunOverrides o;
  o.strategy = "data_parallel";
  o.devices = 2;
  o.epochs = 2;
  RunPlan plan = plan_run(
      read_experiment(std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/seed.json"), o, {});
  std::ostringstream stream;
  RunEventWriter writer(stream);
  Steps steps;
  RunIO io;
  io.out = &writer.text_stream();
  io.callbacks = {&steps};
  const RunResult result = execute_run(plan, io, &writer);
  writer.write_end(result);
  QVERIFY(writer.good());

  std::vector<RunEvent> events;
  const std::vector<std::string> lines = lines_of(stream.str());
  for (size_t i = 0; i < lines.size(); ++i)
    events.push_back(parse_run_event(lines[i], "events:" + std::to_string(i + 1)));
  QVERIFY(events.size() > 3);
  const RunEvent& begin = events.front();
  QCOMPARE(int(begin.kind), int(RunEvent::Kind::kBegin));
  QCOMPARE(begin.devices, 2);
  QCOMPARE(begin.device_names, (std::vector<std::string>{"cpu:0", "cpu:1"}));
  QCOMPARE(begin.distribution, std::string("DataParallel"));
  QCOMPARE(begin.processes, 1);
  QCOMPARE(begin.epochs, 2);
  QCOMPARE(begin.steps, 8);  // 128 rows in batches of 16
  QCOMPARE(begin.batch_size, 16);
  QCOMPARE(begin.train_rows, int64_t{128});
  const RunEvent& end = events.back();
  QCOMPARE(int(end.kind), int(RunEvent::Kind::kEnd));
  QCOMPARE(end.stop_reason, std::string());
  QCOMPARE(end.epochs_run, 2);
  QCOMPARE(end.usage.size(), size_t{2});
  QVERIFY(std::abs(end.usage[1].busy_percent() - result.usage[1].busy_percent()) < 1e-9);

  // Epoch logs: the History, value for value; batch logs: 8 per epoch, in order.
  std::map<std::string, std::vector<double>> history;
  int batches = 0;
  size_t step = 0;
  for (const RunEvent& e : events) {
    if (e.kind == RunEvent::Kind::kEpoch) {
      QCOMPARE(e.epoch, static_cast<int>(history["loss"].size()));
      for (const auto& [key, value] : e.logs) history[key].push_back(value.value());
    } else if (e.kind == RunEvent::Kind::kBatch) {
      QCOMPARE(e.batch, batches % 8);
      QCOMPARE(e.epoch, batches / 8);
      QVERIFY(e.logs.count("loss"));
      ++batches;
    } else if (e.kind == RunEvent::Kind::kStep) {
      // Every span of every device, as fit() reported it.
      QVERIFY(step < steps.steps.size());
      const StepTrace& t = steps.steps[step++];
      QCOMPARE(e.step.step, t.step);
      QCOMPARE(e.step.epoch, t.epoch);
      QCOMPARE(e.step.batch, t.batch);
      QCOMPARE(e.step.shard_rows, t.shard_rows);
      QCOMPARE(e.step.spans.size(), t.spans.size());
      for (size_t d = 0; d < t.spans.size(); ++d) {
        QCOMPARE(e.step.spans[d].size(), t.spans[d].size());
        for (size_t k = 0; k < t.spans[d].size(); ++k) {
          const TraceSpan &a = e.step.spans[d][k], &b = t.spans[d][k];
          QCOMPARE(int(a.kind), int(b.kind));
          QCOMPARE(std::string(span_label(a)), std::string(span_label(b)));
          QCOMPARE(a.begin_us, b.begin_us);
          QCOMPARE(a.duration_us, b.duration_us);
          QCOMPARE(a.bytes_sent, b.bytes_sent);
          QCOMPARE(a.bytes_received, b.bytes_received);
        }
      }
    }
  }
  QCOMPARE(history, result.history.history);
  QCOMPARE(batches, 16);
  QCOMPARE(step, steps.steps.size());
  QCOMPARE(step, size_t{16});
}

void TestRunEvents::text_lines_are_the_keras_text() {
  RunOverrides o;
  o.epochs = 2;
  o.verbose = 2;
  const std::string file = std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/xor.json";
  std::ostringstream plain;
  {
    RunPlan plan = plan_run(read_experiment(file), o, {});
    RunIO io;
    io.out = &plain;
    (void)execute_run(plan, io);
  }
  std::ostringstream stream;
  {
    RunPlan plan = plan_run(read_experiment(file), o, {});
    RunEventWriter writer(stream);
    RunIO io;
    io.out = &writer.text_stream();
    (void)execute_run(plan, io, &writer);
  }
  std::vector<std::string> texts;
  for (const std::string& line : lines_of(stream.str())) {
    const RunEvent e = parse_run_event(line, "events");
    if (e.kind == RunEvent::Kind::kText) texts.push_back(e.text);
  }
  // The same lines, apart from the measured time of each epoch ("- 0s - 12us/step").
  const auto untimed = [](const std::string& s) {
    static const std::regex timing(" - \\d+m?s - [\\d.]+[mu]?s/step");
    return std::regex_replace(s, timing, " - T");
  };
  const std::vector<std::string> expected = lines_of(plain.str());
  QCOMPARE(texts.size(), expected.size());
  QVERIFY(texts.size() >= 4);
  QCOMPARE(texts[0], std::string("Epoch 1/2"));
  for (size_t i = 0; i < texts.size(); ++i) QCOMPARE(untimed(texts[i]), untimed(expected[i]));
}

void TestRunEvents::bad_lines_data() {
  QTest::addColumn<QString>("line");
  QTest::addColumn<QString>("error");
  QTest::newRow("not json") << "{\"event\": "
                            << "events:3: is not one JSON object (an event)";
  QTest::newRow("a list") << "[1, 2]"
                          << "events:3: must be a JSON object (an event), got an array";
  QTest::newRow("no event")
      << "{\"epoch\": 1}"
      << "events:3: has no \"event\" (begin, text, batch, epoch, step or end)";
  QTest::newRow("unknown event")
      << "{\"event\": \"lunch\"}"
      << "events:3.event: is not an event: \"lunch\"; expected begin, text, batch, epoch, step "
         "or end";
  QTest::newRow("batch without logs")
      << "{\"event\": \"batch\", \"epoch\": 0, \"batch\": 1}"
      << "events:3.logs: is required (the logs, an object of numbers)";
  QTest::newRow("a log that is text")
      << "{\"event\": \"epoch\", \"epoch\": 0, \"logs\": {\"loss\": \"low\"}}"
      << "events:3.logs.loss: must be a number or null, got \"low\"";
  QTest::newRow("a span that is not one")
      << "{\"event\": \"step\", \"step\": 0, \"spans\": [[{\"name\": \"nap\"}]]}"
      << "events:3.spans[0][0].name: is not a span name: shard_copy, forward, backward, update, "
         "waiting, all_reduce, all_gather, reduce_scatter or broadcast";
  QTest::newRow("shard rows for other devices")
      << "{\"event\": \"step\", \"step\": 0, \"shard_rows\": [8], \"spans\": [[], []]}"
      << "events:3.shard_rows: must be a list of row counts, one per device of \"spans\", got "
         "an array";
  QTest::newRow("names for other devices")
      << "{\"event\": \"begin\", \"devices\": 2, \"device_names\": [\"cpu:0\"]}"
      << "events:3.device_names: names 1 devices, not 2";
  QTest::newRow("usage over 100%")
      << "{\"event\": \"end\", \"usage\": [{\"busy_percent\": 140}]}"
      << "events:3.usage[0].busy_percent: must be a percentage, got 140";
}

void TestRunEvents::bad_lines() {
  QFETCH(QString, line);
  QFETCH(QString, error);
  try {
    (void)parse_run_event(line.toStdString(), "events:3");
    QFAIL("read a line that is not an event");
  } catch (const InputError& e) {
    QCOMPARE(QString::fromStdString(e.what()), error);
  }
}

void TestRunEvents::not_finite_is_null() {
  std::ostringstream stream;
  RunEventWriter writer(stream);
  Logs logs = {{"loss", std::nan("")}, {"accuracy", 0.5}};
  writer.on_epoch_end(0, logs);
  QCOMPARE(stream.str(), std::string("{\"event\":\"epoch\",\"epoch\":0,\"logs\":{\"accuracy\":0.5,"
                                     "\"loss\":null}}\n"));
  const RunEvent e = parse_run_event(lines_of(stream.str())[0], "events");
  QVERIFY(!e.logs.at("loss").has_value());
  QCOMPARE(e.logs.at("accuracy").value(), 0.5);
}

// An interactive progress bar draws a line again after a carriage return: the text event is its
// last drawing, what a terminal shows.
void TestRunEvents::redrawn_lines_keep_their_last_drawing() {
  std::ostringstream stream;
  RunEventWriter writer(stream);
  writer.on_train_begin({});
  writer.text_stream() << "\r1/2 [==    ]\r2/2 [======] - loss: 0.5\nFinal loss: 0.5\n";
  writer.text_stream().flush();
  std::vector<std::string> texts;
  for (const std::string& line : lines_of(stream.str())) {
    const RunEvent e = parse_run_event(line, "events");
    if (e.kind == RunEvent::Kind::kText) texts.push_back(e.text);
  }
  QCOMPARE(texts, (std::vector<std::string>{"2/2 [======] - loss: 0.5", "Final loss: 0.5"}));
}

QTEST_GUILESS_MAIN(TestRunEvents)
#include "tst_run_events.moc"
