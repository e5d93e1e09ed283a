// Sweeps: Keras Tuner's hyperparameters and the grid and random samplers (values against NumPy's
// default_rng, log sampling's distribution), paths into the experiment, every problem of a bad
// sweep section at once, and running: each trial's History equals its experiment run alone,
// whatever the number of jobs, with pruning, repeats, a stop request and the files.
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <cmath>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/io/experiment.h"
#include "core/io/history_file.h"
#include "core/io/json_file.h"
#include "core/python/random.h"
#include "core/run/run.h"
#include "core/run/sweep.h"
#include "core/run/sweep_paths.h"

using namespace fitbench;
using Json = nlohmann::ordered_json;

namespace {

std::string example_path(const std::string& name) {
  return std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/" + name;
}

// The xor example with a sweep section.
ExperimentSpec xor_with(const Json& sweep, int epochs = 6) {
  ExperimentSpec spec = read_experiment(example_path("xor.json"));
  spec.fit.epochs = epochs;
  spec.fit.validation_split = 0.25;
  spec.sweep = sweep;
  return spec;
}

Json lr_units_sweep(const std::string& method) {
  return Json::parse(R"({"method": ")" + method + R"(", "max_trials": 6, "seed": 3,
    "objective": "val_loss",
    "parameters": {
      "compile.optimizer.config.learning_rate":
        {"class_name": "Float", "config": {"min_value": 0.001, "max_value": 0.1, "step": 10, "sampling": "log"}},
      "model.layers[1].config.units": {"class_name": "Choice", "config": {"values": [2, 4]}}}})");
}

std::vector<std::string> problem_texts(const PlanError& e) {
  std::vector<std::string> out;
  for (const PlanProblem& p : e.problems()) out.push_back(p.text());
  return out;
}

bool any_contains(const std::vector<std::string>& texts, const std::string& part) {
  for (const std::string& t : texts)
    if (t.find(part) != std::string::npos) return true;
  return false;
}

// A trial run alone, as `fitbench-cli run trial_NNN/experiment.json` runs it.
History run_alone(const SweepTrial& trial, uint64_t seed_offset = 0) {
  RandomScope scope;  // a fresh sequence, as a new process has
  RunOverrides o = trial.overrides;
  o.verbose = 0;
  o.seed = trial.spec.seed.value_or(0) + seed_offset;
  RunPlan plan = plan_run(trial.spec, o, PlanContext{});
  std::ostringstream sink;
  RunIO io;
  io.out = &sink;
  return execute_run(plan, io).history;
}

class StopAfterFirst : public SweepListener {
 public:
  explicit StopAfterFirst(SweepControl& c) : control_(c) {}
  void on_trial_end(const SweepTrial&, const TrialResult&) override { control_.request_stop(); }

 private:
  SweepControl& control_;
};

class EpochCounter : public SweepListener {
 public:
  std::mutex mutex;
  int epochs = 0, begun = 0, ended = 0;
  void on_trial_begin(const SweepTrial&) override {
    std::lock_guard lock(mutex);
    ++begun;
  }
  void on_trial_epoch(const SweepTrial&, int, int, const Logs&) override {
    std::lock_guard lock(mutex);
    ++epochs;
  }
  void on_trial_end(const SweepTrial&, const TrialResult&) override {
    std::lock_guard lock(mutex);
    ++ended;
  }
};

}  // namespace

class TestSweep : public QObject {
  Q_OBJECT
 private slots:
  // The grid walks the parameters in order, the last fastest; log steps multiply.
  void gridOrderAndValues() {
    const SweepPlan plan = plan_sweep(xor_with(lr_units_sweep("grid")), {});
    QCOMPARE(plan.trials.size(), size_t{6});
    const double lrs[] = {0.001, 0.001, 0.01, 0.01, 0.1, 0.1};
    const int units[] = {2, 4, 2, 4, 2, 4};
    for (size_t t = 0; t < 6; ++t) {
      QVERIFY(std::abs(plan.trials[t].values[0].get<double>() - lrs[t]) < 1e-15);
      QCOMPARE(plan.trials[t].values[1].get<int>(), units[t]);
      QCOMPARE(plan.trials[t].spec.model.layers[1].units, static_cast<int64_t>(units[t]));
      QVERIFY(std::abs(*plan.trials[t].spec.compile.optimizer.learning_rate - lrs[t]) < 1e-15);
    }
    QCOMPARE(describe_values(plan.spec, plan.trials[2]),
             std::string("learning_rate=0.01, units=2"));
    // max_trials cuts the grid; Int steps by 1 by default; Boolean and Fixed.
    Json sweep = Json::parse(R"({"method": "grid", "max_trials": 5, "parameters": {
      "fit.batch_size": {"class_name": "Int", "config": {"min_value": 8, "max_value": 10}},
      "fit.shuffle": {"class_name": "Boolean"},
      "fit.epochs": {"class_name": "Fixed", "config": {"value": 2}}}})");
    const SweepPlan cut = plan_sweep(xor_with(sweep), {});
    QCOMPARE(cut.trials.size(), size_t{5});
    QCOMPARE(cut.trials[4].spec.fit.batch_size, 10);
    QCOMPARE(cut.trials[4].spec.fit.shuffle, false);
    QCOMPARE(cut.trials[3].spec.fit.shuffle, true);
    QCOMPARE(cut.trials[3].spec.fit.epochs, 2);
  }

  // Random values are Keras Tuner's prob_to_value of np.random.default_rng(seed).random(), one
  // draw per parameter in order (NumPy 1.24: `rng = default_rng(3)`; lr = 0.0003 * 1000 **
  // rng.random(); units = [8, 16][int(rng.random() * 2)]).
  void randomMatchesNumpy() {
    const SweepPlan plan =
        plan_sweep(read_experiment(example_path("spiral_lr_sweep.json")), PlanContext{});
    QCOMPARE(plan.trials.size(), size_t{12});
    const double lrs[] = {0.0005420867050882701, 0.07602293815801817, 0.0005747873233803787,
                          0.008208714462646514};
    const int units[] = {8, 16, 8, 8};
    for (size_t t = 0; t < 4; ++t) {
      QCOMPARE(plan.trials[t].values[0].get<double>(), lrs[t]);
      QCOMPARE(plan.trials[t].values[1].get<int>(), units[t]);
    }
    QVERIFY(!plan.spec.objective.maximize);
    QCOMPARE(plan.spec.pruning->min_epochs, 15);
  }

  // Log sampling spreads draws evenly over decades; reverse_log crowds them at the top; linear
  // Int covers its range evenly.
  void samplingDistributions() {
    SweepParameter p;
    p.class_name = "Float";
    p.min_value = 1e-4;
    p.max_value = 1.0;
    p.sampling = "log";
    int decades[4] = {0, 0, 0, 0};
    const int n = 4000;
    for (int i = 0; i < n; ++i) {
      const double u = (i + 0.5) / n;  // a uniform stream, evenly spaced
      const double v = p.value_for(u).get<double>();
      QVERIFY(v >= 1e-4 && v <= 1.0);
      ++decades[std::min(3, static_cast<int>(std::floor(std::log10(v) + 4)))];
    }
    for (int d : decades) QVERIFY2(std::abs(d - n / 4) <= 2, qPrintable(QString::number(d)));
    // Keras Tuner: reverse_log = max + min - min * (max / min) ** (1 - u).
    p.sampling = "reverse_log";
    QVERIFY(std::abs(p.value_for(0.25).get<double>() - (1.0 + 1e-4 - 1e-4 * std::pow(1e4, 0.75))) <
            1e-12);
    QVERIFY(p.value_for(0.9).get<double>() > 0.99);
    SweepParameter i;
    i.class_name = "Int";
    i.min_value = 1;
    i.max_value = 4;
    i.step = 1.0;
    QCOMPARE(i.value_for(0.0).get<int>(), 1);
    QCOMPARE(i.value_for(0.26).get<int>(), 2);
    QCOMPARE(i.value_for(0.999).get<int>(), 4);
    // Random search draws from a generator: over many trials, every Choice value appears.
    Json sweep = Json::parse(R"({"method": "random", "max_trials": 200, "seed": 11,
      "objective": "loss", "parameters": {
        "compile.optimizer.config.learning_rate":
          {"class_name": "Float", "config": {"min_value": 1e-4, "max_value": 1, "sampling": "log"}}}})");
    const SweepPlan plan = plan_sweep(xor_with(sweep), {});
    int low = 0;
    for (const SweepTrial& t : plan.trials) low += t.values[0].get<double>() < 1e-2;
    QVERIFY2(low > 70 && low < 130, qPrintable(QString::number(low)));  // half below 1e-2
  }

  // A space smaller than max_trials: repeats are redrawn, then the sampler stops with a note.
  void smallRandomSpace() {
    Json sweep = Json::parse(R"({"max_trials": 5, "objective": "loss", "parameters": {
      "fit.shuffle": {"class_name": "Boolean"}}})");
    const SweepPlan plan = plan_sweep(xor_with(sweep), {});
    QCOMPARE(plan.trials.size(), size_t{2});
    QCOMPARE(plan.notices.size(), size_t{1});
    QVERIFY(plan.notices[0].text.find("only 2 different trials") != std::string::npos);
  }

  // Paths: "model.layers[1]" reaches model.config.layers[1]; an optimizer given as a string opens
  // up; a missing section is made; what names nothing says which part.
  void paths() {
    Json doc = Json::parse(R"({"model": {"class_name": "Sequential", "config": {"layers": [
      {"class_name": "InputLayer", "config": {}}, {"class_name": "Dense", "config": {"units": 3}}]}},
      "compile": {"optimizer": "sgd"}})");
    set_json_path(doc, "model.layers[1].units", 7);
    QCOMPARE(doc["model"]["config"]["layers"][1]["config"]["units"].get<int>(), 7);
    set_json_path(doc, "compile.optimizer.config.learning_rate", 0.5);
    QCOMPARE(doc["compile"]["optimizer"]["class_name"].get<std::string>(), std::string("sgd"));
    QCOMPARE(doc["compile"]["optimizer"]["config"]["learning_rate"].get<double>(), 0.5);
    set_json_path(doc, "devices.count", 2);
    QCOMPARE(doc["devices"]["count"].get<int>(), 2);
    // A new key of a Keras object goes into its config.
    set_json_path(doc, "model.layers[1].use_bias", false);
    QCOMPARE(doc["model"]["config"]["layers"][1]["config"]["use_bias"].get<bool>(), false);
    const auto message = [&](const std::string& path) {
      try {
        set_json_path(doc, path, 1);
      } catch (const InputError& e) {
        return e.message();
      }
      return std::string("no error");
    };
    QCOMPARE(message("model.layers[5].units"),
             std::string("model.config.layers has 2 entries, so [5] names nothing"));
    QVERIFY(message("devices.count.x").find("devices.count is 2, not an object") == 0);
    QVERIFY(message("fit..epochs").find("is not a path into the experiment") == 0);
    QVERIFY(message("[0]").find("is not a path") == 0);
  }

  // The strategy takes names: an Int, Float or Boolean over it is refused with a sentence (a
  // fuzz finding: an Int drew numbers and the trial threw a JSON type error).
  void strategyParameterTakesNames() {
    for (
        const char* parameter :
        {R"({"class_name": "Int", "config": {"min_value": 1, "max_value": 64, "sampling": "log"}})",
         R"({"class_name": "Float", "config": {"min_value": 0.5, "max_value": 2}})",
         R"({"class_name": "Boolean"})"}) {
      Json sweep = Json::parse(R"({"method": "random", "max_trials": 3, "seed": 1})");
      sweep["parameters"]["distribution.strategy"] = Json::parse(parameter);
      try {
        plan_sweep(xor_with(sweep), PlanContext{});
        QFAIL(parameter);
      } catch (const PlanError& e) {
        const auto texts = problem_texts(e);
        QVERIFY2(any_contains(texts,
                              "sweep.parameters[\"distribution.strategy\"]: takes strategy "
                              "names (a Choice or a Fixed of "),
                 parameter);
      }
    }
  }

  // Every problem of a bad section at once, each placed in the file.
  void badSectionsSaidTogether() {
    Json sweep = Json::parse(R"({"method": "grid", "max_trial": 3, "executions_per_trial": 0,
      "objective": {"name": "val_los", "direction": "up"},
      "parameters": {
        "compile.optimizer.config.learning_rate":
          {"class_name": "Float", "config": {"min_value": 0.1, "max_value": 0.01}},
        "model.layers[9].config.units": {"class_name": "Choice", "config": {"values": [1, "a"]}},
        "model.layers[1].config.units": {"class_name": "Int", "config": {"min_value": 0, "max_value": 4, "sampling": "log"}},
        "fit.epochs": {"class_name": "Range"},
        "fit.batch_size": {"class_name": "Float", "config": {"min_value": 1, "max_value": 4}},
        "distribution.strategy": {"class_name": "Choice", "config": {"values": ["data_paralel"]}}}})");
    PlanContext context;
    context.source = "x.json";
    try {
      plan_sweep(xor_with(sweep), context);
      QFAIL("no error");
    } catch (const PlanError& e) {
      const auto texts = problem_texts(e);
      for (const char* part :
           {"x.json: sweep.max_trial: is not a key",
            "x.json: sweep.executions_per_trial: must be a whole number from 1 to 100",
            "x.json: sweep.objective.direction: must be \"min\" or \"max\"",
            "sweep.parameters[\"compile.optimizer.config.learning_rate\"].config.max_value: must "
            "be greater than min_value",
            "sweep.parameters[\"model.layers[9].config.units\"].config.values[1]",
            "sweep.parameters[\"model.layers[1].config.units\"].config.min_value: must be above 0 "
            "for log sampling",
            "sweep.parameters[\"fit.epochs\"].class_name: must be one of Choice",
            "sweep.parameters[\"fit.batch_size\"].config.step: is needed for a grid over a Float",
            "sweep.parameters[\"distribution.strategy\"]: takes strategy names"})
        QVERIFY2(any_contains(texts, part), part);
      QCOMPARE(texts.size(), size_t{9});
    }
    // A path that names nothing, a value the experiment refuses (per trial), an objective the
    // History does not have.
    Json second = Json::parse(R"({"method": "grid", "objective": "val_accuracy", "parameters": {
      "model.layers[7].config.units": {"class_name": "Choice", "config": {"values": [1]}},
      "fit.batch_size": {"class_name": "Choice", "config": {"values": [4, -1]}}}})");
    ExperimentSpec no_validation = xor_with(second);
    no_validation.fit.validation_split = 0;
    try {
      plan_sweep(no_validation, context);
      QFAIL("no error");
    } catch (const PlanError& e) {
      const auto texts = problem_texts(e);
      QVERIFY(any_contains(texts,
                           "sweep.parameters[\"model.layers[7].config.units\"]: "
                           "model.config.layers has 3 entries, so [7] names nothing"));
      QCOMPARE(texts.size(), size_t{1});
    }
    second["parameters"].erase("model.layers[7].config.units");
    try {
      plan_sweep(xor_with(second), context);
      QFAIL("no error");
    } catch (const PlanError& e) {
      const auto texts = problem_texts(e);
      QVERIFY(any_contains(texts, "x.json: trial 1 (batch_size=-1): fit.batch_size"));
    }
    second["parameters"]["fit.batch_size"]["config"]["values"] = Json::array({4});
    no_validation.sweep = second;
    try {
      plan_sweep(no_validation, context);
      QFAIL("no error");
    } catch (const PlanError& e) {
      const auto texts = problem_texts(e);
      QVERIFY2(any_contains(texts,
                            "x.json: sweep.objective: \"val_accuracy\" is not in the History "
                            "of trial 0, which has no validation_split; its keys are "
                            "loss, accuracy"),
               qPrintable(QString::fromStdString(texts[0])));
    }
  }

  // A trial the run plan refuses (a mesh its device count cannot make) stops the sweep before
  // anything runs, named by its trial.
  void trialPlansCheckedFirst() {
    Json sweep = Json::parse(R"({"method": "grid", "objective": "loss", "parameters": {
      "devices.count": {"class_name": "Choice", "config": {"values": [2, 3]}},
      "distribution.strategy": {"class_name": "Fixed", "config": {"value": "model_parallel"}}}})");
    ExperimentSpec spec = xor_with(sweep);
    spec.distribution.class_name = "ModelParallel";
    spec.distribution.mesh_shape = {1, 2};
    spec.distribution.axis_names = {"batch", "model"};
    EpochCounter counter;
    const SweepPlan plan = plan_sweep(spec, {});
    try {
      run_sweep(plan, SweepOptions{}, &counter);
      QFAIL("no error");
    } catch (const PlanError& e) {
      QVERIFY2(problem_texts(e)[0].rfind("trial 1 (count=3, strategy=model_parallel)", 0) == 0,
               e.what());
    }
    QCOMPARE(counter.begun, 0);
  }

  // A trial of 2 devices takes both of 2 cores: never two at once; with --oversubscribe each
  // counts as one. Either way the histories are those of the trials alone.
  void devicesCountAgainstCores() {
    Json sweep = Json::parse(R"({"method": "grid", "objective": "loss", "parameters": {
      "fit.batch_size": {"class_name": "Choice", "config": {"values": [8, 16, 32, 64]}}}})");
    ExperimentSpec spec = xor_with(sweep, 3);
    spec.devices.count = 2;
    spec.distribution.class_name = "DataParallel";
    const SweepPlan plan = plan_sweep(spec, {});
    struct Concurrency : SweepListener {
      std::atomic<int> now{0}, most{0};
      void on_trial_begin(const SweepTrial&) override {
        const int n = ++now;
        int m = most.load();
        while (n > m && !most.compare_exchange_weak(m, n)) {
        }
      }
      void on_trial_end(const SweepTrial&, const TrialResult&) override { --now; }
    } counted;
    SweepOptions options;
    options.jobs = 2;
    const SweepResult r = run_sweep(plan, options, &counted);
    QCOMPARE(counted.most.load(), 1);
    options.oversubscribe = true;
    const SweepResult o = run_sweep(plan, options);
    for (size_t t = 0; t < plan.trials.size(); ++t) {
      QCOMPARE(r.trials[t].histories[0].history, o.trials[t].histories[0].history);
      QCOMPARE(r.trials[t].histories[0].history, run_alone(plan.trials[t]).history);
    }
  }

  // A swept strategy is an option, not a place in the file: the trial's experiment.json still
  // says it, and run alone it gives the sweep's History.
  void writtenExperimentRunsAlone() {
    QTemporaryDir dir;
    Json sweep = Json::parse(R"({"method": "grid", "objective": "loss", "parameters": {
      "distribution.strategy": {"class_name": "Choice", "config": {"values": ["none", "data_parallel"]}}}})");
    ExperimentSpec spec = xor_with(sweep, 3);
    spec.devices.count = 2;
    const SweepPlan plan = plan_sweep(spec, {});
    SweepOptions options;
    options.out_dir = dir.path().toStdString();
    const SweepResult r = run_sweep(plan, options);
    for (int t = 0; t < 2; ++t) {
      const std::filesystem::path file =
          options.out_dir / ("trial_00" + std::to_string(t)) / "experiment.json";
      const ExperimentSpec again = read_experiment(file);
      QCOMPARE(again.distribution.class_name, std::string(t == 0 ? "" : "DataParallel"));
      QCOMPARE(again.fit.verbose, spec.fit.verbose);
      RandomScope scope;
      RunOverrides quiet;
      quiet.verbose = 0;
      RunPlan alone = plan_run(again, quiet, PlanContext{});
      std::ostringstream sink;
      RunIO io;
      io.out = &sink;
      QCOMPARE(execute_run(alone, io).history.history, r.trials[t].histories[0].history);
    }
  }

  // Each trial's History equals its experiment run alone, and 1 or 2 jobs give the same.
  void deterministicAcrossJobs() {
    const SweepPlan plan = plan_sweep(xor_with(lr_units_sweep("random")), {});
    SweepOptions one;
    one.jobs = 1;
    SweepOptions two;
    two.jobs = 2;
    EpochCounter counter;
    const SweepResult a = run_sweep(plan, one);
    const SweepResult b = run_sweep(plan, two, &counter);
    QCOMPARE(counter.begun, 6);
    QCOMPARE(counter.ended, 6);
    QCOMPARE(counter.epochs, 36);
    for (size_t t = 0; t < plan.trials.size(); ++t) {
      QCOMPARE(a.trials[t].status, TrialResult::Status::kCompleted);
      QCOMPARE(a.trials[t].histories[0].history, b.trials[t].histories[0].history);
      QCOMPARE(a.trials[t].histories[0].history, run_alone(plan.trials[t]).history);
      const auto& v = a.trials[t].histories[0].history.at("val_loss");
      QCOMPARE(a.trials[t].objective, *std::min_element(v.begin(), v.end()));
      QCOMPARE(a.trials[t].best_epoch,
               static_cast<int>(std::min_element(v.begin(), v.end()) - v.begin()));
    }
    // Ranked best first.
    const std::vector<int> order = a.ranking();
    for (size_t i = 1; i < order.size(); ++i)
      QVERIFY(a.trials[order[i - 1]].objective <= a.trials[order[i]].objective);
  }

  // Pruning: the median rule against the trials before, the same whatever the jobs; a pruned
  // trial's History is the start of its full run.
  void pruningIsDeterministic() {
    Json sweep = lr_units_sweep("random");
    sweep["max_trials"] = 8;
    sweep["parameters"]["compile.optimizer.config.learning_rate"]["config"].erase("step");
    sweep["pruning"] = {{"min_epochs", 2}, {"startup_trials", 2}};
    const SweepPlan plan = plan_sweep(xor_with(sweep, 10), {});
    SweepOptions one;
    SweepOptions two;
    two.jobs = 2;
    const SweepResult a = run_sweep(plan, one);
    const SweepResult b = run_sweep(plan, two);
    int pruned = 0;
    for (size_t t = 0; t < plan.trials.size(); ++t) {
      QCOMPARE(a.trials[t].status, b.trials[t].status);
      QCOMPARE(a.trials[t].histories[0].history, b.trials[t].histories[0].history);
      if (a.trials[t].status != TrialResult::Status::kPruned) continue;
      ++pruned;
      QVERIFY(t >= 2);  // never before startup_trials earlier trials reached the epoch
      const History full = run_alone(plan.trials[t]);
      const auto& part = a.trials[t].histories[0].history.at("val_loss");
      QVERIFY(part.size() >= 2 && part.size() < 10);
      QVERIFY(std::equal(part.begin(), part.end(), full.history.at("val_loss").begin()));
      // At the epoch it stopped, its best was worse than the earlier trials' median there.
      std::vector<double> earlier;
      for (size_t j = 0; j < t; ++j) {
        const auto& v = a.trials[j].histories[0].history.at("val_loss");
        if (v.size() >= part.size()) earlier.push_back(v[part.size() - 1]);
      }
      std::sort(earlier.begin(), earlier.end());
      const size_t m = earlier.size();
      const double median = m % 2 ? earlier[m / 2] : 0.5 * (earlier[m / 2 - 1] + earlier[m / 2]);
      QVERIFY(*std::min_element(part.begin(), part.end()) > median);
    }
    QVERIFY2(pruned > 0, "the example should prune something");
  }

  // Repeats: execution e runs with the experiment's seed + e; mean and sample spread.
  void executionsPerTrial() {
    Json sweep = Json::parse(R"({"method": "grid", "executions_per_trial": 3, "objective": "loss",
      "parameters": {"fit.batch_size": {"class_name": "Choice", "config": {"values": [32]}}}})");
    const SweepPlan plan = plan_sweep(xor_with(sweep, 3), {});
    const SweepResult r = run_sweep(plan, SweepOptions{});
    const TrialResult& t = r.trials[0];
    QCOMPARE(t.histories.size(), size_t{3});
    QCOMPARE(t.objectives.size(), size_t{3});
    for (int e = 0; e < 3; ++e)
      QCOMPARE(t.histories[e].history, run_alone(plan.trials[0], e).history);
    QVERIFY(t.objectives[0] != t.objectives[1]);
    const double mean = (t.objectives[0] + t.objectives[1] + t.objectives[2]) / 3;
    QVERIFY(std::abs(t.objective - mean) < 1e-12);
    double ss = 0;
    for (double v : t.objectives) ss += (v - mean) * (v - mean);
    QVERIFY(std::abs(t.spread - std::sqrt(ss / 2)) < 1e-12);
  }

  // A folder that cannot be written ends the sweep with its error, whatever the jobs: no trial
  // waits forever for cores or for the pruning rule.
  void unwritableFolderEndsTheSweep() {
    for (int jobs : {1, 2}) {
      QTemporaryDir dir;
      const std::filesystem::path out = dir.path().toStdString();
      std::ofstream(out / "trial_002") << "a file where a trial's folder goes";
      Json sweep = lr_units_sweep("grid");
      sweep["pruning"] = {{"min_epochs", 1}, {"startup_trials", 1}};
      const SweepPlan plan = plan_sweep(xor_with(sweep), {});
      SweepOptions options;
      options.jobs = jobs;
      options.out_dir = out;
      try {
        run_sweep(plan, options);
        QFAIL("no error");
      } catch (const InputError& e) {
        QVERIFY2(e.place() == (out / "trial_002").string(), e.what());
        QVERIFY(e.message().rfind("cannot be made a folder for the trial's files", 0) == 0);
      }
      QVERIFY(std::filesystem::exists(out / "trial_000" / "history.json"));
    }
  }

  // The files: each trial's experiment (which runs to the same History) and History, and the
  // tables; a stop keeps what finished and runs nothing more.
  void filesAndStop() {
    QTemporaryDir dir;
    const SweepPlan plan = plan_sweep(xor_with(lr_units_sweep("grid")), {});
    SweepOptions options;
    options.out_dir = dir.path().toStdString();
    SweepControl control;
    StopAfterFirst stopper(control);
    const SweepResult r = run_sweep(plan, options, &stopper, &control);
    QVERIFY(r.stopped);
    QCOMPARE(r.trials[0].status, TrialResult::Status::kCompleted);
    // The stop came as trial 0 ended: the others never started, and stay pending.
    int pending = 0;
    for (const TrialResult& t : r.trials) pending += t.status == TrialResult::Status::kPending;
    QCOMPARE(pending, 5);
    const std::filesystem::path out = options.out_dir;
    const ExperimentSpec again = read_experiment(out / "trial_000" / "experiment.json");
    QVERIFY(again.sweep.is_null());
    QCOMPARE(again.model.layers[1].units, int64_t{2});
    const Json history = json_io::read_json_file(out / "trial_000" / "history.json");
    QCOMPARE(history["history"]["val_loss"].size(), size_t{6});
    const Json trials = json_io::read_json_file(out / "trials.json");
    QCOMPARE(trials.size(), size_t{6});
    QCOMPARE(trials[0]["status"].get<std::string>(), std::string("completed"));
    QCOMPARE(trials[0]["parameters"]["model.layers[1].config.units"].get<int>(), 2);
    QCOMPARE(trials[0]["experiment"].get<std::string>(), std::string("trial_000/experiment.json"));
    QCOMPARE(trials[1]["status"].get<std::string>(), std::string("pending"));
    std::ifstream csv(out / "trials.csv");
    std::string header, first;
    std::getline(csv, header);
    std::getline(csv, first);
    QCOMPARE(header, std::string("trial,status,compile.optimizer.config.learning_rate,"
                                 "model.layers[1].config.units,val_loss,best_epoch,epochs,"
                                 "seconds,error"));
    QVERIFY(first.rfind("0,completed,0.001,2,", 0) == 0);
    QVERIFY(!std::filesystem::exists(out / "trial_001" / "history.json"));
  }
};

QTEST_GUILESS_MAIN(TestSweep)
#include "tst_sweep.moc"
