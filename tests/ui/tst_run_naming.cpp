// Runs named by what differs: the settings read from an experiment (the optimizer and its rate,
// momentum, the model's widths and activations, batch, epochs, devices and strategy, data) and
// labels that keep only the settings in which the runs differ.
#include <QtTest>

#include "core/io/experiment.h"
#include "ui/common/run_naming.h"

using namespace fitbench;
namespace {

ExperimentSpec example(const char* name) {
  return read_experiment(std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/" + name);
}

QStringList texts(const std::vector<RunSetting>& settings) {
  QStringList out;
  for (const RunSetting& s : settings) out << QString::fromStdString(s.text);
  return out;
}

QStringList labels(const std::vector<ExperimentSpec>& docs) {
  std::vector<std::vector<RunSetting>> runs;
  std::vector<std::string> fallback;
  for (const ExperimentSpec& doc : docs) {
    runs.push_back(run_settings(doc));
    fallback.push_back("run " + std::to_string(fallback.size() + 1));
  }
  QStringList out;
  for (const std::string& label : labels_by_difference(runs, fallback))
    out << QString::fromStdString(label);
  return out;
}

}  // namespace

class TestRunNaming : public QObject {
  Q_OBJECT
 private slots:
  void settingsOfAnExample() {
    const QStringList spiral = texts(run_settings(example("spiral.json")));
    QCOMPARE(spiral, QStringList({"Adam 0.01", "binary_crossentropy", "2-16-16-8-1 tanh",
                                  "batch 16", "150 epochs", "val 0.2", "spiral", "500 samples",
                                  "noise 0.0", "data seed 3", "seed 3"}));
    const QStringList mesh = texts(run_settings(example("model_parallel_2x2.json")));
    QVERIFY2(mesh.filter(QRegularExpression("^4 devices ModelParallel 2x2$")).size() == 1,
             qPrintable(mesh.join(" | ")));
  }

  void labelsKeepWhatDiffers() {
    const ExperimentSpec adam = example("xor.json");
    ExperimentSpec sgd = adam;
    sgd.compile.optimizer = OptimizerSpec{};
    sgd.compile.optimizer.class_name = "SGD";
    sgd.compile.optimizer.learning_rate = 0.1;
    sgd.compile.optimizer.momentum = 0.9;
    QCOMPARE(labels({adam, sgd}), QStringList({"Adam 0.03", "SGD 0.1 m0.9"}));

    // Two settings differ: both named, in the settings' order.
    ExperimentSpec wide = adam;
    wide.model.layers[1].units = 32;
    wide.fit.batch_size = 64;
    QCOMPARE(labels({adam, wide}), QStringList({"2-8-1 tanh batch 16", "2-32-1 tanh batch 64"}));

    // A setting only one run has (a validation split) names it; the other has none to show
    // and is named by its number.
    ExperimentSpec validated = adam;
    validated.fit.validation_split = 0.2;
    QCOMPARE(labels({adam, validated}), QStringList({"run 1", "val 0.2"}));

    // Nothing differs: each run is its number. Two alike among others: told apart by it.
    QCOMPARE(labels({adam, adam}), QStringList({"run 1", "run 2"}));
    QCOMPARE(labels({adam, sgd, adam}),
             QStringList({"Adam 0.03 (run 1)", "SGD 0.1 m0.9", "Adam 0.03 (run 3)"}));

    // Devices and the strategy.
    ExperimentSpec four = adam;
    four.devices.count = 4;
    four.distribution.class_name = "DataParallel";
    QCOMPARE(labels({adam, four}).at(1), QStringLiteral("4 devices DataParallel"));
  }

  // Other options read as name=value, and only where they are not the default.
  void otherOptionsReadAsNameValue() {
    const ExperimentSpec a = example("xor.json");
    ExperimentSpec b = a;
    b.compile.optimizer.beta_1 = 0.8;
    QCOMPARE(labels({a, b}), QStringList({"run 1", "beta_1=0.8"}));
    ExperimentSpec c = a;
    c.model.layers[1].use_bias = false;
    QCOMPARE(labels({a, c}), QStringList({"run 1", "hidden.use_bias=false"}));
    ExperimentSpec d = a;
    d.data.standardize = true;
    QCOMPARE(labels({a, d}), QStringList({"run 1", "standardize=true"}));
  }

  void settingsText() {
    const std::vector<RunSetting> s{{"optimizer", "Adam 0.03"}, {"fit.batch", "batch 16"}};
    QCOMPARE(QString::fromStdString(settings_text(s)), QStringLiteral("Adam 0.03, batch 16"));
    QCOMPARE(QString::fromStdString(settings_text({})), QString());
  }
};

QTEST_GUILESS_MAIN(TestRunNaming)
#include "tst_run_naming.moc"
