// A run that would not fit in the memory the process may take is refused by plan_run before the
// model is built, with the estimate and the setting to change: the two bare
// std::bad_alloc cases (a Dense of 40,000,000 units with Adam under 4 GB; 64 DataParallel
// devices of a 24M-float model), with an injected limit. The real limits are read.
#include <sys/resource.h>

#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/base/memory_limit.h"
#include "core/base/sanitized.h"
#include "core/io/experiment.h"
#include "core/run/run_plan.h"

using namespace fitbench;
using nlohmann::json;

namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

json experiment(int features, int units, int batch, const json& distribution) {
  json layers = json::array();
  layers.push_back({{"class_name", "InputLayer"},
                    {"config", {{"batch_shape", {nullptr, features}}, {"name", "input_layer"}}}});
  layers.push_back({{"class_name", "Dense"},
                    {"config", {{"name", "wide"}, {"units", units}, {"activation", "relu"}}}});
  layers.push_back({{"class_name", "Dense"},
                    {"config", {{"name", "output"}, {"units", 1}, {"activation", "sigmoid"}}}});
  return {{"name", "big"},
          {"seed", 1},
          {"distribution", distribution},
          {"data", {{"generator", "seed"}, {"samples", 64}, {"features", features}, {"seed", 1}}},
          {"model", {{"class_name", "Sequential"}, {"config", {{"layers", layers}}}}},
          {"compile", {{"optimizer", "adam"}, {"loss", "binary_crossentropy"}}},
          {"fit", {{"epochs", 1}, {"batch_size", batch}, {"verbose", 0}}}};
}

// The problem plan_run reports (fails the test when it plans the run).
PlanProblem refusal(const json& doc, const RunOverrides& o, int64_t limit) {
  PlanContext c;
  c.source = "big.json";
  c.memory_limit = MemoryLimit{limit, "a test's limit"};
  try {
    plan_run(parse_experiment(doc, "big.json", {}), o, c);
  } catch (const PlanError& e) {
    return e.problems().front();
  }
  return {};
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

class TestMemoryCheck : public QObject {
  Q_OBJECT
 private slots:
  // Dense(40,000,000) on 4 features, then Dense(1): 240M parameters, 16 bytes each with Adam
  // (3.84 GB), more than 4 GB with the activations of a batch of one (0.32 GB); the place is the
  // layer's units.
  void wideDenseWithAdamIsRefusedAtItsUnits() {
    const PlanProblem p = refusal(experiment(4, 40'000'000, 1, nullptr), {}, 4'000'000'000);
    QVERIFY2(p.place == "big.json: model.config.layers[1].config.units", p.text().c_str());
    QVERIFY2(has(p.sentence, "this run needs about"), p.sentence.c_str());
    QVERIFY2(has(p.sentence, "a test's limit"), p.sentence.c_str());
    QVERIFY2(has(p.sentence, "make it narrower"), p.sentence.c_str());
  }

  // The same layer at a batch of 64: its activations (64 rows x 80M floats) are most of it.
  void largeBatchIsRefusedAtTheBatchSize() {
    RunOverrides o;
    o.batch_size = 64;
    const PlanProblem p = refusal(experiment(4, 40'000'000, 1, nullptr), o, 8 * kGiB);
    QVERIFY2(p.place == "--batch-size", p.text().c_str());
    QVERIFY2(has(p.sentence, "smaller batch"), p.sentence.c_str());
  }

  // 64 DataParallel devices of a 24M-float model (23 features x 1M units): each holds a replica
  // of ~96 MB of weights and as much of gradients; the device count is the setting to change,
  // with how many would fit.
  void manyReplicasAreRefusedAtTheDeviceCount() {
    RunOverrides o;
    o.devices = 64;
    const PlanProblem p =
        refusal(experiment(23, 1'000'000, 16, {{"class_name", "DataParallel"}}), o, 4 * kGiB);
    QVERIFY2(p.place == "--devices", p.text().c_str());
    QVERIFY2(has(p.sentence, "64 devices"), p.sentence.c_str());
    QVERIFY2(has(p.sentence, "so use at most "), p.sentence.c_str());
    // The count it names fits; one more does not.
    const size_t at = p.sentence.find("at most ") + 8;
    const int fit = std::stoi(p.sentence.substr(at));
    QVERIFY(fit >= 1 && fit < 64);
    o.devices = fit;
    QCOMPARE(
        refusal(experiment(23, 1'000'000, 16, {{"class_name", "DataParallel"}}), o, 4 * kGiB).place,
        std::string());
    o.devices = fit + 1;
    QCOMPARE(
        refusal(experiment(23, 1'000'000, 16, {{"class_name", "DataParallel"}}), o, 4 * kGiB).place,
        std::string("--devices"));
  }

  // A small run under the real limits is planned.
  void smallRunFits() {
    PlanContext c;
    const RunPlan plan =
        plan_run(parse_experiment(experiment(4, 8, 16, nullptr), "t.json", {}), {}, c);
    QVERIFY(plan.model != nullptr);
  }

  // RLIMIT_AS counts: the limit the process reads is no more than it, less what is mapped.
  void readsRlimitAs() {
#ifdef FITBENCH_SANITIZED
    QSKIP("a sanitizer's shadow memory does not fit under an RLIMIT_AS");
#endif
    rlimit old{};
    QVERIFY(getrlimit(RLIMIT_AS, &old) == 0);
    const MemoryLimit before = process_memory_limit();
    QVERIFY(before.bytes > 0);
    rlimit lower = old;
    lower.rlim_cur = static_cast<rlim_t>(64) * kGiB;
    if (old.rlim_max != RLIM_INFINITY && lower.rlim_cur > old.rlim_max) QSKIP("hard limit below");
    QVERIFY(setrlimit(RLIMIT_AS, &lower) == 0);
    const MemoryLimit under = process_memory_limit();
    QVERIFY(setrlimit(RLIMIT_AS, &old) == 0);
    QVERIFY(under.bytes < 64 * kGiB);
    QVERIFY(under.bytes <= before.bytes);
  }
};

QTEST_GUILESS_MAIN(TestMemoryCheck)
#include "tst_memory_check.moc"
