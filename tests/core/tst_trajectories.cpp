// Replays the golden training trajectories of tests/reference/keras_reference.py (an independent
// float64 implementation of Keras 3's training rules, one JSON file per case in
// tests/data/trajectories) through Sequential::fit with shuffle=false, and compares every epoch's
// loss and metrics and every final weight to 1e-4 relative: |a - b| <= 1e-4 * max(1, |b|).
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/io/experiment.h"
#include "core/training/sequential.h"

using namespace fitbench;
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr double kTolerance = 1e-4;
// The cases keras_reference.py writes; each must be present.
const char* const kExpectedCases[] = {"sgd_bce_sigmoid",
                                      "sgd_momentum_mse",
                                      "sgd_nesterov_huber",
                                      "adam_cce_softmax",
                                      "adam_amsgrad_scce",
                                      "adamw_mae",
                                      "rmsprop_bce_logits",
                                      "rmsprop_centered_momentum_mse_l2",
                                      "adagrad_tanh_l1",
                                      "adam_deep_activations",
                                      "sgd_cce_logits",
                                      "adam_conv_maxpool_scce",
                                      "sgd_rescaling_avgpool_gap_mse",
                                      "rmsprop_layer_normalization_cce",
                                      "adam_batch_normalization_scce"};

fs::path trajectory_dir() { return fs::path(FITBENCH_SOURCE_DIR) / "tests/data/trajectories"; }

std::vector<fs::path> trajectory_files() {
  std::vector<fs::path> files;
  if (!fs::is_directory(trajectory_dir())) return files;
  for (const auto& entry : fs::directory_iterator(trajectory_dir())) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file.string());
  return json::parse(in);
}

Matrix to_matrix(const json& rows) {
  const Index n = static_cast<Index>(rows.size());
  const Index cols = n > 0 ? static_cast<Index>(rows[0].size()) : 0;
  Matrix m(n, cols);
  for (Index r = 0; r < n; ++r) {
    for (Index c = 0; c < cols; ++c) m(r, c) = rows[r][c].get<float>();
  }
  return m;
}

std::vector<NamedWeight> to_weights(const json& list) {
  std::vector<NamedWeight> out;
  for (const json& w : list) {
    out.push_back({w.at("path").get<std::string>(), w.at("shape").get<Shape>(),
                   w.at("values").get<std::vector<float>>()});
  }
  return out;
}

// The largest |actual - expected| / max(1, |expected|) over one replay, and where it occurred.
// A value missing from the engine's results counts as an infinite error.
struct Comparison {
  double max_error = 0.0;
  std::string where;

  void add(double actual, double expected, const std::string& what) {
    double error = std::abs(actual - expected) / std::max(1.0, std::abs(expected));
    if (!std::isfinite(error)) error = std::numeric_limits<double>::infinity();
    if (error > max_error || where.empty()) {
      max_error = std::max(max_error, error);
      std::ostringstream s;
      s << what << ": engine " << actual << ", reference " << expected;
      where = s.str();
    }
  }
  void missing(const std::string& what) {
    max_error = std::numeric_limits<double>::infinity();
    where = what + " is missing from the engine's results";
  }
};

// Builds the case's model, sets its initial weights, fits it with the learning rate scaled by
// `lr_scale` and compares the history and the final weights with the reference's.
Comparison replay(const json& doc, double lr_scale) {
  Sequential model(parse_model_config(doc.at("model"), "model"));
  CompileOptions compile = parse_compile(doc.at("compile"), "compile");
  if (!compile.optimizer.learning_rate) throw std::runtime_error("the case has no learning_rate");
  compile.optimizer.learning_rate = *compile.optimizer.learning_rate * lr_scale;
  model.compile(compile);
  model.set_weights(to_weights(doc.at("initial_weights")), "initial_weights");

  const json& fit = doc.at("fit");
  FitOptions options;
  options.epochs = fit.at("epochs").get<int>();
  options.batch_size = fit.at("batch_size").get<int>();
  options.shuffle = false;
  options.verbose = 0;
  const History history = model.fit(to_matrix(doc.at("x")), to_matrix(doc.at("y")), options);

  Comparison cmp;
  auto compare_series = [&](const std::string& key, const json& expected) {
    auto it = history.history.find(key);
    if (it == history.history.end() || it->second.size() != expected.size()) {
      cmp.missing("history[\"" + key + "\"] with " + std::to_string(expected.size()) + " epochs");
      return;
    }
    for (size_t e = 0; e < expected.size(); ++e) {
      cmp.add(it->second[e], expected[e].get<double>(), key + " of epoch " + std::to_string(e + 1));
    }
  };
  compare_series("loss", doc.at("epoch_loss"));
  if (doc.contains("epoch_metrics")) {
    for (const auto& [key, values] : doc.at("epoch_metrics").items()) compare_series(key, values);
  }
  const std::vector<NamedWeight> weights = model.get_weights();
  for (const json& expected : doc.at("final_weights")) {
    const std::string path = expected.at("path").get<std::string>();
    auto it = std::find_if(weights.begin(), weights.end(),
                           [&](const NamedWeight& w) { return w.path == path; });
    const json& values = expected.at("values");
    if (it == weights.end() || it->values.size() != values.size()) {
      cmp.missing("final weight " + path);
      continue;
    }
    for (size_t i = 0; i < values.size(); ++i) {
      cmp.add(it->values[i], values[i].get<double>(), path + "[" + std::to_string(i) + "]");
    }
  }
  return cmp;
}

}  // namespace

class TstTrajectories : public QObject {
  Q_OBJECT

 private slots:
  // A missing or renamed file would silently drop its row from matches_reference.
  void every_case_is_present() {
    const std::vector<fs::path> files = trajectory_files();
    for (const char* name : kExpectedCases) {
      const bool found = std::any_of(files.begin(), files.end(),
                                     [&](const fs::path& f) { return f.stem() == name; });
      QVERIFY2(found, (std::string(name) + ".json is missing from " + trajectory_dir().string() +
                       "; run tests/reference/keras_reference.py")
                          .c_str());
    }
  }

  void matches_reference_data() {
    QTest::addColumn<QString>("file");
    for (const fs::path& f : trajectory_files()) {
      QTest::newRow(f.stem().string().c_str()) << QString::fromStdString(f.string());
    }
  }

  void matches_reference() {
    QFETCH(QString, file);
    const json doc = read_json(file.toStdString());
    const Comparison cmp = replay(doc, 1.0);
    qInfo("max relative error %.3g (%s)", cmp.max_error, cmp.where.c_str());
    QVERIFY2(cmp.max_error <= kTolerance, cmp.where.c_str());
  }

  // The comparison can fail: a learning rate 10% off moves the trajectory far past the tolerance
  // (keras_reference.py asserts the same of its own values for every case).
  void perturbed_learning_rate_is_caught_data() {
    QTest::addColumn<QString>("name");
    QTest::newRow("sgd") << "sgd_bce_sigmoid";
    QTest::newRow("adam") << "adam_cce_softmax";
    QTest::newRow("convolutions") << "adam_conv_maxpool_scce";
    QTest::newRow("layer normalization") << "rmsprop_layer_normalization_cce";
  }

  void perturbed_learning_rate_is_caught() {
    QFETCH(QString, name);
    const json doc = read_json(trajectory_dir() / (name.toStdString() + ".json"));
    QVERIFY(replay(doc, 1.0).max_error <= kTolerance);
    const Comparison perturbed = replay(doc, 1.1);
    qInfo("lr * 1.1: max relative error %.3g (%s)", perturbed.max_error, perturbed.where.c_str());
    QVERIFY2(perturbed.max_error > 1e-3, perturbed.where.c_str());
  }
};

QTEST_GUILESS_MAIN(TstTrajectories)
#include "tst_trajectories.moc"
