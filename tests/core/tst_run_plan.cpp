// RunPlan and execute_run: overrides applied and checked together, the defaults decided once
// (ModelParallel without a layout map), relative paths from the experiment's folder, a listener
// told of every state change, and the output files written by the run itself.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/distribution/collectives/collective_schedule.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/spec/strategies.h"
#include "core/io/experiment.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"

using namespace fitbench;

namespace {

ExperimentSpec seed_experiment() {
  return read_experiment(std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/seed.json");
}

// Each problem's place up to its first colon ("--trace" of "--trace: t.json").
std::vector<std::string> places(const PlanError& e) {
  std::vector<std::string> out;
  for (const PlanProblem& p : e.problems()) out.push_back(p.place.substr(0, p.place.find(':')));
  return out;
}

// Records what a run tells its listener, in order.
class Recorder : public RunListener {
 public:
  std::vector<std::string> events;
  int traces = 0;
  void on_run_begin(const RunPlan& plan) override {
    events.push_back("begin " + std::to_string(plan.devices));
  }
  void on_epoch_end(int epoch, Logs&) override {
    events.push_back("epoch " + std::to_string(epoch));
  }
  void on_step_trace(const StepTrace&) override { ++traces; }
  void on_run_end(const RunResult& r) override {
    events.push_back("end " + std::to_string(r.history.epoch.size()));
  }
};

}  // namespace

class TestRunPlan : public QObject {
  Q_OBJECT
 private slots:
  // Every problem is reported at once, options first, each at its place.
  void everyProblemAtOnce() {
    QTemporaryDir dir;
    RunOverrides o;
    o.strategy = "model_paralel";
    o.allreduce = "tree";
    o.history_file = (dir.path() + "/h.txt").toStdString();
    o.trace_file = (dir.path() + "/no/such/folder/t.json").toStdString();
    PlanContext c;
    c.source = "seed.json";
    try {
      plan_run(seed_experiment(), o, c, {{"--epochs", "must be an integer"}});
      QFAIL("planned a run with five problems");
    } catch (const PlanError& e) {
      const std::vector<std::string> expected = {"--epochs", "--strategy", "--allreduce",
                                                 "--history", "--trace"};
      QVERIFY2(places(e) == expected, e.what());
      QVERIFY(e.problems()[1].sentence.find("none, data_parallel or model_parallel") !=
              std::string::npos);
      // what() holds every problem, one per line; place() is the first's.
      const std::string what = e.what();
      QCOMPARE(std::count(what.begin(), what.end(), '\n'), 4L);
      QCOMPARE(e.place(), std::string("--epochs"));
    }
  }

  // A problem inside the experiment is named with its file; the data and the model still are
  // checked when an option is wrong.
  void experimentProblemsNameTheFile() {
    ExperimentSpec spec = seed_experiment();
    spec.data.generator = "seed";
    spec.data.features = 3;  // the model's Input takes 4
    RunOverrides o;
    o.mesh = std::array<int, 2>{2, 1};
    PlanContext c;
    c.source = "exp.json";
    try {
      plan_run(spec, o, c);
      QFAIL("planned a run with a mismatched input");
    } catch (const PlanError& e) {
      QCOMPARE(e.problems().size(), size_t(2));
      QCOMPARE(e.problems()[0].place, std::string("--mesh"));
      QVERIFY2(e.problems()[1].place.rfind("exp.json: ", 0) == 0, e.problems()[1].place.c_str());
    }
  }

  // ModelParallel without a layout map: one answer, decided by the plan and said in a note.
  void modelParallelDefaultLayout() {
    ExperimentSpec spec = seed_experiment();
    LayerSpec hidden = dense_layer(8, "relu");
    hidden.name = "hidden";
    spec.model.layers.insert(spec.model.layers.begin() + 1, hidden);
    RunOverrides o;
    o.strategy = "model_parallel";
    o.devices = 2;
    const RunPlan plan = plan_run(spec, o, {});
    QCOMPARE(plan.devices, 2);
    QCOMPARE(plan.spec.distribution.mesh_shape, (std::vector<int>{1, 2}));
    QVERIFY(plan.default_layout);
    // The 4x8 kernel divides by the model axis; the 8x1 one does not.
    QCOMPARE(plan.spec.distribution.layout_map.size(), size_t(1));
    QCOMPARE(plan.spec.distribution.layout_map[0].second, (std::vector<std::string>{"", "model"}));
    bool noted = false;
    for (const PlanNotice& n : plan.notices)
      noted |= n.text.find("distribution.layout_map: none given") != std::string::npos;
    QVERIFY(noted);
  }

  // A file's mesh with no device count anywhere makes the devices it needs; a count from the
  // environment is kept, and then must fit the mesh.
  void meshMakesItsDevices() {
    qunsetenv("FITBENCH_CPU_DEVICES");
    qunsetenv("XLA_FLAGS");
    ExperimentSpec spec = seed_experiment();
    spec.distribution = DistributionSpec{};
    spec.distribution.class_name = "ModelParallel";
    spec.distribution.mesh_shape = {2, 1};
    spec.distribution.axis_names = {"batch", "model"};
    QCOMPARE(plan_run(spec, {}, {}).devices, 2);
    qputenv("FITBENCH_CPU_DEVICES", "3");
    try {
      plan_run(spec, {}, {});
      QFAIL("a 2x1 mesh ran on 3 devices");
    } catch (const PlanError& e) {
      QCOMPARE(e.problems().size(), size_t(1));
      QCOMPARE(e.place(), std::string("distribution.mesh.shape"));
    }
    qunsetenv("FITBENCH_CPU_DEVICES");
  }

  // A bad device count in the environment is named as the variable, not as the experiment.
  void environmentProblemsNameTheVariable() {
    qputenv("FITBENCH_CPU_DEVICES", "zero");
    PlanContext c;
    c.source = "exp.json";
    try {
      plan_run(seed_experiment(), {}, c);
      QFAIL("planned a run with FITBENCH_CPU_DEVICES=zero");
    } catch (const PlanError& e) {
      QVERIFY2(e.problems().front().place.rfind("FITBENCH_CPU_DEVICES", 0) == 0, e.what());
    }
    qunsetenv("FITBENCH_CPU_DEVICES");
  }

  // --devices without a distribution trains on one device, and says so.
  void devicesWithoutDistribution() {
    RunOverrides o;
    o.strategy = "none";
    o.devices = 3;
    const RunPlan plan = plan_run(seed_experiment(), o, {});
    QCOMPARE(plan.devices, 1);
    QCOMPARE(plan.device_names, std::vector<std::string>{"cpu:0"});
    QCOMPARE(plan.notices.size(), size_t(1));
    QVERIFY(plan.notices[0].text.find("--devices 3 has no effect") != std::string::npos);
  }

  // Relative data paths start from the experiment's folder, not the working one.
  void relativePathsFromBaseDir() {
    QTemporaryDir dir;
    {
      std::ofstream csv((dir.path() + "/d.csv").toStdString());
      csv << "a,b,y\n";
      for (int i = 0; i < 20; ++i) csv << i << "," << (i % 3) << "," << (i % 2) << "\n";
    }
    ExperimentSpec spec = seed_experiment();
    spec.data = DataSpec{};
    spec.data.generator.clear();
    spec.data.csv = "d.csv";
    spec.data.target = {"y"};
    spec.model.layers[0] = input_layer(2);
    PlanContext c;
    c.base_dir = dir.path().toStdString();
    const RunPlan plan = plan_run(spec, {}, c);
    QCOMPARE(plan.data.size(), Index(20));
    QCOMPARE(plan.spec.data.csv, (dir.path() + "/d.csv").toStdString());
  }

  // A run tells its listener begin, each epoch, each step's trace and end; it writes the history
  // and trace files itself, and its usage has one entry per device.
  void runReportsAndWritesOutputs() {
    QTemporaryDir dir;
    RunOverrides o;
    o.strategy = "data_parallel";
    o.devices = 2;
    o.epochs = 2;
    o.history_file = (dir.path() + "/h.json").toStdString();
    o.trace_file = (dir.path() + "/t.json").toStdString();
    RunPlan plan = plan_run(seed_experiment(), o, {});
    std::ostringstream out;
    RunIO io;
    io.out = &out;
    Recorder listener;
    const RunResult r = execute_run(plan, io, &listener);
    const std::vector<std::string> expected = {"begin 2", "epoch 0", "epoch 1", "end 2"};
    QCOMPARE(listener.events, expected);
    QCOMPARE(listener.traces, 16);  // 8 steps an epoch
    QVERIFY(out.str().rfind("Devices: ['cpu:0', 'cpu:1']\nDistribution: DataParallel\n", 0) == 0);
    QCOMPARE(r.usage.size(), size_t(2));
    QCOMPARE(r.steps_seen, size_t(16));
    std::ifstream h(o.history_file);
    const auto doc = nlohmann::json::parse(h);
    QCOMPARE(doc["history"]["loss"].size(), size_t(2));
    QCOMPARE(doc["history"]["loss"][1].get<double>(), r.history.last("loss"));
    QVERIFY(QFileInfo::exists(QString::fromStdString(o.trace_file)));
  }

  // What the batch split and collectives views draw before a run (batch_parts, the
  // CollectiveSchedule of the gradient all-reduce) is what every traced step of the run did.
  void devicePicturesAreWhatTheStepsDid_data() {
    QTest::addColumn<QString>("algorithm");
    QTest::newRow("ring") << "ring";
    QTest::newRow("naive") << "naive";
  }
  void devicePicturesAreWhatTheStepsDid() {
    QFETCH(QString, algorithm);
    class Steps : public RunListener {
     public:
      std::vector<StepTrace> steps;
      void on_step_trace(const StepTrace& t) override { steps.push_back(t); }
    } listener;
    RunOverrides o;
    o.strategy = "data_parallel";
    o.devices = 3;
    o.batch_size = 10;  // 128 rows: 12 batches of 10, then 8
    o.epochs = 1;
    o.allreduce = algorithm.toStdString();
    RunPlan plan = plan_run(seed_experiment(), o, {});
    std::ostringstream out;
    RunIO io;
    io.out = &out;
    execute_run(plan, io, &listener);
    QCOMPARE(listener.steps.size(), size_t(13));
    const CollectiveSchedule schedule(parse_algorithm(algorithm.toStdString(), "test"), 3,
                                      5);  // Dense(1) on 4 features: 4 + 1 gradient floats
    for (const StepTrace& step : listener.steps) {
      const int64_t rows = step.batch == 12 ? 8 : 10;
      QCOMPARE(step.shard_rows, batch_parts(rows, 3));
      for (int d = 0; d < 3; ++d) {
        int collectives = 0;
        for (const TraceSpan& span : step.spans[size_t(d)]) {
          if (span.kind != SpanKind::kCollective) continue;
          ++collectives;
          QCOMPARE(span.bytes_sent, schedule.bytes_sent(d));
          QCOMPARE(span.bytes_received, schedule.bytes_received(d));
        }
        QCOMPARE(collectives, 1);
      }
    }
  }

  // The strategies registry names each strategy once; the plan takes its option names.
  void strategiesRegistry() {
    QCOMPARE(strategy_option_names(), std::string("none, data_parallel or model_parallel"));
    QCOMPARE(find_strategy_by_option("data_parallel")->class_name, kDataParallel);
    QVERIFY(find_strategy_by_class(kModelParallel)->has_mesh);
    QCOMPARE(find_strategy_by_class("")->option_name, std::string_view("none"));
    QVERIFY(find_strategy_by_class("Mirrored") == nullptr);
  }
};

QTEST_GUILESS_MAIN(TestRunPlan)
#include "tst_run_plan.moc"
