// fit() as Keras runs it: determinism, sample-weighted epoch logs with a partial last batch, the
// validation split, callbacks and stopping.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QTest>
#include <atomic>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/base/error.h"
#include "core/io/model_file.h"
#include "core/python/python_format.h"
#include "core/python/python_repr.h"
#include "core/python/random.h"
#include "core/training/callbacks.h"
#include "core/training/sequential.h"

using namespace fitbench;

namespace {

ModelSpec mlp(const std::string& hidden_activation = "tanh") {
  ModelSpec spec;
  LayerSpec in;
  in.class_name = "InputLayer";
  in.shape = {3};
  LayerSpec h;
  h.class_name = "Dense";
  h.units = 6;
  h.activation = hidden_activation;
  LayerSpec d;
  d.class_name = "Dropout";
  d.rate = 0.2;
  LayerSpec out;
  out.class_name = "Dense";
  out.units = 1;
  out.activation = "sigmoid";
  spec.layers = {in, h, d, out};
  return spec;
}

CompileOptions bce(const std::string& optimizer = "Adam", double lr = 0.01) {
  CompileOptions c;
  c.optimizer.class_name = optimizer;
  c.optimizer.learning_rate = lr;
  c.loss.name = "binary_crossentropy";
  c.metrics = {"accuracy"};
  return c;
}

void make_data(Index n, Matrix& x, Matrix& y, uint64_t seed = 1) {
  Rng rng(seed);
  x.resize(n, 3);
  y.resize(n, 1);
  for (Index i = 0; i < n; ++i) {
    for (Index j = 0; j < 3; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = x(i, 0) + 0.5f * x(i, 1) > 0 ? 1.0f : 0.0f;
  }
}

struct StopAfter : Callback {
  TrainingControl* control;
  int after;
  std::atomic<int> seen{0};  // read by the controlling thread
  void on_train_batch_end(int, const Logs&) override {
    if (++seen == after) control->request_stop();
  }
};

}  // namespace

class TestFit : public QObject {
  Q_OBJECT
 private slots:
  void same_seed_same_run();
  void epoch_logs_are_sample_weighted();
  void validation_split_from_the_end();
  void learns();
  void early_stopping();
  void callbacks_warn_of_a_missing_monitor();
  void callbacks_refuse_what_keras_fails_on();
  void model_checkpoint_fills_its_filepath();
  void learning_rate_scheduler();
  void repeated_metrics_get_suffixes();
  void logs_hold_float32_values();
  void reduce_lr_on_plateau();
  void csv_logger();
  void terminate_on_nan();
  void training_control_stops_within_a_batch();
  void training_control_paces_batches();
  void initial_epoch();
  void shape_errors();
  void sizes_beyond_memory_are_input_errors();
};

void TestFit::same_seed_same_run() {
  Matrix x, y;
  make_data(70, x, y);
  auto run = [&](uint64_t seed) {
    set_random_seed(seed);
    Sequential m(mlp());
    m.compile(bce());
    FitOptions o{.epochs = 3, .batch_size = 16, .verbose = 0};
    const History h = m.fit(x, y, o);
    return std::make_pair(h.history, m.get_weights());
  };
  const auto a = run(7), b = run(7), c = run(8);
  QVERIFY(a.first == b.first);  // bitwise-identical logs
  for (size_t i = 0; i < a.second.size(); ++i) QVERIFY(a.second[i].values == b.second[i].values);
  QVERIFY(a.second[0].values != c.second[0].values);
}

void TestFit::epoch_logs_are_sample_weighted() {
  // With a zero learning rate the weights never move, so the epoch loss must equal the loss over
  // all samples at once; an unweighted mean of batch means would differ (50 = 3 x 16 + 2).
  Matrix x, y;
  make_data(50, x, y);
  set_random_seed(3);
  ModelSpec spec = mlp();
  spec.layers.erase(spec.layers.begin() + 2);  // no dropout
  Sequential m(spec);
  m.compile(bce("SGD", 0.0));
  const History h = m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 16, .verbose = 0});
  const Logs all = m.evaluate(x, y, 50);
  QVERIFY(std::abs(h.last("loss") - all.at("loss")) < 1e-6);
  QVERIFY(std::abs(h.last("accuracy") - all.at("accuracy")) < 1e-12);
  QCOMPARE(h.params_steps, 4);
}

void TestFit::validation_split_from_the_end() {
  Matrix x, y;
  make_data(40, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce("SGD", 0.0));
  const History h =
      m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 8, .validation_split = 0.25, .verbose = 0});
  // The last 10 rows validate (floor(40 * 0.75) = 30 train).
  const Logs last = m.evaluate(x.bottomRows(10), y.bottomRows(10), 32);
  QVERIFY(std::abs(h.last("val_loss") - last.at("loss")) < 1e-6);
  QCOMPARE(h.params_steps, 4);
  // A fraction that empties one side names the side, as the experiment file's path does.
  for (const auto& [fraction, side] :
       {std::pair{0.99, "no training rows"}, std::pair{1e-17, "no validation rows"}}) {
    try {
      m.fit(x, y, FitOptions{.epochs = 1, .validation_split = fraction, .verbose = 0});
      QFAIL("expected an error");
    } catch (const InputError& e) {
      QCOMPARE(e.place(), std::string("fit.validation_split"));
      QVERIFY2(std::string(e.message()).find(side) != std::string::npos, e.what());
    }
  }
}

void TestFit::learns() {
  Matrix x, y;
  make_data(256, x, y);
  set_random_seed(1);
  Sequential m(mlp("relu"));
  m.compile(bce("Adam", 0.02));
  const History h = m.fit(x, y, FitOptions{.epochs = 20, .batch_size = 32, .verbose = 0});
  QVERIFY2(h.last("accuracy") > 0.93, qPrintable(QString::number(h.last("accuracy"))));
  QVERIFY(h.history.at("loss").front() > h.history.at("loss").back());
}

void TestFit::early_stopping() {
  Matrix x, y;
  make_data(32, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce("SGD", 0.0));
  CallbackSpec es;
  es.class_name = "EarlyStopping";
  es.monitor = "loss";
  es.patience_set = 2;
  FitOptions o{.epochs = 10, .batch_size = 8, .shuffle = false, .verbose = 0, .callbacks = {es}};
  // Dropout makes the loss vary a little; with min_delta large nothing counts as improvement.
  o.callbacks[0].min_delta_set = 10.0;
  const History h = m.fit(x, y, o);
  // Epoch 0 sets the best; epochs 1 and 2 do not improve; stop at epoch 2.
  QCOMPARE(h.epoch.size(), size_t(3));
  QCOMPARE(m.stop_reason, std::string("early_stopping"));
  QVERIFY(!m.restored_epoch);
  // verbose 1 prints Keras's lines when training ends; restore_best_weights puts epoch 0's
  // weights back (the first epoch is the best when nothing improves on it).
  o.callbacks[0].verbose = 1;
  o.callbacks[0].restore_best_weights = true;
  std::ostringstream out;
  RunOptions run;
  run.out = &out;
  m.fit(x, y, o, run);
  QCOMPARE(out.str(), std::string("Epoch 3: early stopping\n"
                                  "Restoring model weights from the end of the best epoch: 1.\n"));
  QCOMPARE(m.restored_epoch, std::optional<int>(0));
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 8, .verbose = 0});
  QVERIFY(!m.restored_epoch);
}

void TestFit::logs_hold_float32_values() {
  // Keras's metrics are float32 variables: every logged value is a float32 widened to a double
  // (so a History written to a file shows Keras's digits, 0.4261484146118164).
  Matrix x, y;
  make_data(40, x, y);
  Sequential m(mlp());
  m.compile(bce());
  const History h =
      m.fit(x, y, FitOptions{.epochs = 3, .batch_size = 8, .validation_split = 0.25, .verbose = 0});
  QCOMPARE(h.history.size(), size_t(4));  // accuracy, loss, val_accuracy, val_loss
  for (const auto& [key, values] : h.history)
    for (double v : values) QVERIFY2(static_cast<double>(static_cast<float>(v)) == v, key.c_str());
}

void TestFit::callbacks_warn_of_a_missing_monitor() {
  // As Keras: EarlyStopping and ReduceLROnPlateau watching a metric the logs do not have (a
  // typo with an explicit mode, or val_loss without validation data) warn, once per fit(), and
  // training goes on. (With mode "auto", EarlyStopping refuses the typo: see the next test.)
  Matrix x, y;
  make_data(32, x, y);
  Sequential m(mlp());
  m.compile(bce());
  CallbackSpec es;
  es.class_name = "EarlyStopping";
  es.monitor = "losss";
  es.mode = "min";
  CallbackSpec rlr;
  rlr.class_name = "ReduceLROnPlateau";
  rlr.monitor = "val_loss";
  std::ostringstream warnings;
  RunOptions run;
  run.warnings = &warnings;
  const History h = m.fit(
      x, y, FitOptions{.epochs = 3, .batch_size = 8, .verbose = 0, .callbacks = {es, rlr}}, run);
  QCOMPARE(h.epoch.size(), size_t(3));
  QCOMPARE(warnings.str(),
           std::string("UserWarning: Early stopping conditioned on metric `losss` which is not "
                       "available. Available metrics are: accuracy,loss\n"
                       "UserWarning: Learning rate reduction is conditioned on metric `val_loss` "
                       "which is not available. Available metrics are: accuracy,learning_rate,"
                       "loss.\n"));
}

void TestFit::callbacks_refuse_what_keras_fails_on() {
  // What Keras raises at the end of the first epoch (or at a reduction), fitbench refuses before
  // training, naming the place.
  Matrix x, y;
  make_data(32, x, y);
  Sequential m(mlp());
  CompileOptions c = bce();
  c.metrics = {"accuracy", "mae"};
  m.compile(c);
  const auto refusal = [&](const CallbackSpec& cb, const FitOptions& base = {}) -> std::string {
    FitOptions o = base;
    o.epochs = 2;
    o.batch_size = 8;
    o.verbose = 0;
    o.callbacks = {cb};
    try {
      m.fit(x, y, o);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  CallbackSpec es;
  es.class_name = "EarlyStopping";
  // "auto" knows the loss and the compiled metrics, with or without val_.
  for (const char* known : {"loss", "accuracy", "mae", "val_accuracy"}) {
    es.monitor = known;
    QCOMPARE(refusal(es), std::string());
  }
  es.monitor = "losss";
  QCOMPARE(refusal(es),
           std::string("fit.callbacks[0].config.monitor: \"losss\" is not the loss or a compiled "
                       "metric (loss, accuracy, mae, with or without val_), so EarlyStopping "
                       "cannot tell whether it should be minimized or maximized; set mode to "
                       "\"min\" or \"max\""));
  es.monitor = "precision";  // a direction fitbench knows, but not a compiled metric: as Keras
  QVERIFY(!refusal(es).empty());

  CallbackSpec ck;
  ck.class_name = "ModelCheckpoint";
  ck.monitor = "loss";
  QTemporaryDir dir;
  ck.filepath = dir.filePath("ck-{epoch:02d}-{val_loss:.2f}.json").toStdString();
  QCOMPARE(refusal(ck),
           "fit.callbacks[0].config.filepath: {val_loss} names no value of the "
           "logs, which hold epoch, accuracy,loss,mae (val_ values need a "
           "validation split)");
  ck.filepath = dir.filePath("ck-{loss:d}.json").toStdString();
  QCOMPARE(refusal(ck),
           "fit.callbacks[0].config.filepath: {loss:d}: Unknown format code 'd' for "
           "object of type 'float'");
  ck.filepath = dir.filePath("ck-{epoch}}.json").toStdString();
  QVERIFY(refusal(ck).find("Single '}' encountered in format string") != std::string::npos);
  // The training loop writes no file format itself: without RunOptions::write_model it refuses.
  ck.filepath = dir.filePath("ck-{epoch}.json").toStdString();
  QCOMPARE(refusal(ck), std::string("fit.callbacks[0]: ModelCheckpoint needs a model writer: pass "
                                    "RunOptions::write_model (write_model_file) to fit()"));
  QVERIFY(QDir(dir.path()).isEmpty());

  CompileOptions scheduled = c;
  ScheduleSpec decay;
  decay.class_name = "ExponentialDecay";
  decay.initial_learning_rate = 0.01;
  decay.decay_steps = 10;
  decay.decay_rate = 0.5;
  scheduled.optimizer.schedule = decay;
  m.compile(scheduled);
  CallbackSpec rlr;
  rlr.class_name = "ReduceLROnPlateau";
  rlr.monitor = "loss";
  QVERIFY2(refusal(rlr).starts_with("fit.callbacks[0]: ReduceLROnPlateau sets the learning rate, "
                                    "but the optimizer's learning_rate is a schedule"),
           refusal(rlr).c_str());
  CallbackSpec lrs;
  lrs.class_name = "LearningRateScheduler";
  lrs.schedule = decay;
  QVERIFY(refusal(lrs).starts_with("fit.callbacks[0]: LearningRateScheduler sets"));
}

void TestFit::model_checkpoint_fills_its_filepath() {
  // filepath.format(epoch=epoch + 1, **logs), as Keras fills it, with its verbose messages.
  Matrix x, y;
  make_data(40, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce());
  QTemporaryDir dir;
  CallbackSpec ck;
  ck.class_name = "ModelCheckpoint";
  ck.filepath = dir.filePath("ck-{epoch:03}-{val_loss:.2f}-{accuracy}.json").toStdString();
  ck.verbose = 1;
  std::ostringstream out;
  RunOptions run;
  run.out = &out;
  run.write_model = [](const ModelFile& m, const std::filesystem::path& f) {
    write_model_file(m, f);
  };
  const History h = m.fit(
      x, y,
      FitOptions{
          .epochs = 2, .batch_size = 8, .validation_split = 0.25, .verbose = 0, .callbacks = {ck}},
      run);
  std::string expected;
  for (int e = 0; e < 2; ++e) {
    char name[128];
    std::snprintf(name, sizeof name, "ck-%03d-%.2f-%s.json", e + 1, h.history.at("val_loss")[e],
                  python_repr(h.history.at("accuracy")[e]).c_str());
    const std::string file = dir.filePath(name).toStdString();
    QVERIFY2(QFileInfo::exists(QString::fromStdString(file)), name);
    const std::string at = "\nEpoch " + std::to_string(e + 1) + ": ";
    expected +=
        at + "saving model to " + file + "\n" + at + "finished saving model to " + file + "\n";
  }
  QCOMPARE(out.str(), expected);

  // save_best_only: the messages of an improvement and of none; the best starts at inf.
  QTemporaryDir best_dir;
  ck.filepath = best_dir.filePath("best.json").toStdString();
  ck.save_best_only = true;
  ck.monitor = "loss";
  ModelSpec still = mlp();
  still.layers.erase(still.layers.begin() + 2);  // no dropout
  Sequential s(still);
  s.compile(bce("SGD", 0.0));  // a zero rate: the loss stays, so epoch 2 does not improve
  out.str("");
  const History flat =
      s.fit(x, y, FitOptions{.epochs = 2, .batch_size = 40, .verbose = 0, .callbacks = {ck}}, run);
  const std::string loss = python_format(flat.history.at("loss")[0], ".5f");
  QVERIFY2(out.str() == "\nEpoch 1: loss improved from inf to " + loss + ", saving model to " +
                            ck.filepath + "\n\nEpoch 1: finished saving model to " + ck.filepath +
                            "\n\nEpoch 2: loss did not improve from " + loss + "\n",
           out.str().c_str());

  // save_best_only with a monitor the logs lack: Keras warns and saves every epoch.
  QTemporaryDir every_dir;
  ck.filepath = every_dir.filePath("e{epoch}.json").toStdString();
  ck.monitor = "val_loss";
  ck.verbose = 0;
  std::ostringstream warnings;
  run.warnings = &warnings;
  m.fit(x, y, FitOptions{.epochs = 2, .batch_size = 8, .verbose = 0, .callbacks = {ck}}, run);
  QVERIFY(QFileInfo::exists(every_dir.filePath("e1.json")));
  QVERIFY(QFileInfo::exists(every_dir.filePath("e2.json")));
  QCOMPARE(warnings.str(), std::string("UserWarning: Can save best model only with val_loss "
                                       "available.\n"));
}

void TestFit::learning_rate_scheduler() {
  // verbose 1 prints Keras's line at each epoch's start, with the schedule's value as Python
  // prints it; the logs hold the optimizer's float32 rate.
  Matrix x, y;
  make_data(32, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce("SGD", 0.1));
  CallbackSpec lrs;
  lrs.class_name = "LearningRateScheduler";
  lrs.verbose = 1;
  ScheduleSpec decay;
  decay.class_name = "ExponentialDecay";
  decay.initial_learning_rate = 0.2;
  decay.decay_steps = 2;
  decay.decay_rate = 0.5;
  lrs.schedule = decay;
  std::ostringstream out;
  RunOptions run;
  run.out = &out;
  const History h =
      m.fit(x, y, FitOptions{.epochs = 2, .batch_size = 8, .verbose = 0, .callbacks = {lrs}}, run);
  // 0.2 * 0.5 ** (1 / 2) = 0.14142135623730953 in Python; float32: 0.1414213627576828.
  QCOMPARE(out.str(), std::string("\nEpoch 1: LearningRateScheduler setting learning rate to "
                                  "0.2.\n\nEpoch 2: LearningRateScheduler setting learning rate "
                                  "to 0.14142135623730953.\n"));
  QCOMPARE(h.history.at("learning_rate")[1], 0.1414213627576828);
}

void TestFit::repeated_metrics_get_suffixes() {
  // Keras's CompileMetrics.result(): a repeated name's later uses are name_1, name_2, ...
  Matrix x, y;
  make_data(32, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  CompileOptions c = bce();
  c.metrics = {"accuracy", "mae", "accuracy", "mae", "accuracy"};
  m.compile(c);
  const History h = m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 8, .verbose = 0});
  std::vector<std::string> keys;
  for (const auto& [key, values] : h.history) keys.push_back(key);
  QCOMPARE(keys, (std::vector<std::string>{"accuracy", "accuracy_1", "accuracy_2", "loss", "mae",
                                           "mae_1"}));
  QCOMPARE(h.last("accuracy_2"), h.last("accuracy"));
  QCOMPARE(h.last("mae_1"), h.last("mae"));
  // A metric object's own name is its key (Precision(name="p")), and EarlyStopping's "auto"
  // takes its direction from the metric, whatever its name.
  c.metrics = {"precision", "precision"};
  c.metric_names = {"p", ""};
  m.compile(c);
  CallbackSpec es;
  es.class_name = "EarlyStopping";
  es.monitor = "p";
  const History named =
      m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 8, .verbose = 0, .callbacks = {es}});
  keys.clear();
  for (const auto& [key, values] : named.history) keys.push_back(key);
  QCOMPARE(keys, (std::vector<std::string>{"loss", "p", "precision"}));
}

void TestFit::reduce_lr_on_plateau() {
  Matrix x, y;
  make_data(32, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce("SGD", 0.0));
  CallbackSpec r;
  r.class_name = "ReduceLROnPlateau";
  r.monitor = "loss";
  r.patience_set = 1;
  r.min_delta_set = 10.0;
  r.factor = 0.5;
  // A zero rate cannot shrink, so start from a positive rate on a model that learns slowly.
  CompileOptions c = bce("SGD", 1e-6);
  m.compile(c);
  const History h =
      m.fit(x, y, FitOptions{.epochs = 4, .batch_size = 8, .verbose = 0, .callbacks = {r}});
  const auto& lr = h.history.at("learning_rate");
  QCOMPARE(lr.size(), size_t(4));
  // Logged before that epoch's reduction: epoch 0 sets the best, epoch 1 does not improve and
  // halves the rate (logged 1e-6), epochs 2 and 3 log the halved rates.
  const double expected[] = {1e-6, 1e-6, 0.5e-6, 0.25e-6};
  for (int i = 0; i < 4; ++i)
    QVERIFY2(std::abs(lr[i] - expected[i]) < 1e-6 * expected[i],
             qPrintable(QString::number(lr[i])));
  // verbose 1: Keras's line for each reduction, the new rate as Python prints the float:
  // float(np.float32(1e-6)) * 0.5 is 4.999999987376214e-07.
  r.verbose = 1;
  m.compile(c);
  std::ostringstream out;
  RunOptions run;
  run.out = &out;
  m.fit(x, y, FitOptions{.epochs = 2, .batch_size = 8, .verbose = 0, .callbacks = {r}}, run);
  const std::string expected_line =
      "\nEpoch 2: ReduceLROnPlateau reducing learning rate to 4.999999987376214e-07.\n";
  QVERIFY2(out.str() == expected_line, out.str().c_str());
}

void TestFit::csv_logger() {
  QTemporaryDir dir;
  const std::string file = dir.filePath("log.csv").toStdString();
  Matrix x, y;
  make_data(20, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce());
  CallbackSpec c;
  c.class_name = "CSVLogger";
  c.filepath = file;
  const History h = m.fit(
      x, y,
      FitOptions{
          .epochs = 3, .batch_size = 8, .validation_split = 0.2, .verbose = 0, .callbacks = {c}});
  std::ifstream in(file);
  std::string header, line;
  std::getline(in, header);
  // csv.excel's "\r\n" ends every line, as Keras's DictWriter writes them.
  QCOMPARE(header, std::string("epoch,accuracy,loss,val_accuracy,val_loss\r"));
  int rows = 0;
  while (std::getline(in, line)) {
    QCOMPARE(line.substr(0, 2), std::to_string(rows) + ",");
    QCOMPARE(line.back(), '\r');
    ++rows;
  }
  QCOMPARE(rows, 3);
}

void TestFit::terminate_on_nan() {
  Matrix x, y;
  make_data(64, x, y);
  x *= 1e30f;
  set_random_seed(3);
  ModelSpec spec = mlp("linear");
  spec.layers.back().activation = "linear";
  Sequential m(spec);
  CompileOptions c = bce("SGD", 1e10);
  c.loss.name = "mean_squared_error";
  c.metrics.clear();
  m.compile(c);
  CallbackSpec t;
  t.class_name = "TerminateOnNaN";
  std::ostringstream out;  // Keras's line goes where the progress goes (the window's log)
  RunOptions run;
  run.out = &out;
  const History h =
      m.fit(x, y, FitOptions{.epochs = 5, .batch_size = 8, .verbose = 0, .callbacks = {t}}, run);
  QCOMPARE(m.stop_reason, std::string("invalid_loss"));
  QCOMPARE(h.epoch.size(), size_t(1));
  QVERIFY2(out.str().find(": Invalid loss, terminating training\n") != std::string::npos,
           out.str().c_str());
}

void TestFit::training_control_stops_within_a_batch() {
  Matrix x, y;
  make_data(400, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce());
  TrainingControl control;
  StopAfter stop;
  stop.control = &control;
  stop.after = 5;
  RunOptions run;
  run.control = &control;
  run.callbacks = {&stop};
  const History h = m.fit(x, y, FitOptions{.epochs = 50, .batch_size = 10, .verbose = 0}, run);
  QCOMPARE(stop.seen.load(), 5);  // no batch ran after the request
  QCOMPARE(h.epoch.size(), size_t(1));

  // Pause from another thread, then step once, then stop: exactly one batch runs while paused.
  control.reset();
  stop.after = -1;
  stop.seen = 0;
  control.pause();
  std::thread t([&] {
    control.step_once();
    while (stop.seen < 1) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    control.request_stop();
  });
  m.fit(x, y, FitOptions{.epochs = 50, .batch_size = 10, .verbose = 0}, run);
  t.join();
  QCOMPARE(stop.seen.load(), 1);
}

// The pace: at least the interval between two batches' starts (a lower bound only: a loaded
// machine makes it longer, never shorter); a stop ends the wait at once; step_once() while
// paused does not wait.
void TestFit::training_control_paces_batches() {
  using Clock = std::chrono::steady_clock;
  Matrix x, y;
  make_data(40, x, y);
  set_random_seed(3);
  Sequential m(mlp());
  m.compile(bce());
  TrainingControl control;
  control.set_min_step_interval(0.04);
  QCOMPARE(control.min_step_interval(), 0.04);
  RunOptions run;
  run.control = &control;
  auto start = Clock::now();
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 10, .verbose = 0}, run);  // 4 batches
  QVERIFY(Clock::now() - start >= std::chrono::milliseconds(120));

  // A pace of 5 s, stopped from another thread while waiting: ends within the wait.
  control.reset();
  control.set_min_step_interval(5.0);
  StopAfter stop;
  stop.control = nullptr;
  stop.after = -1;
  run.callbacks = {&stop};
  std::thread t([&] {
    while (stop.seen < 1) std::this_thread::yield();
    control.request_stop();
  });
  start = Clock::now();
  m.fit(x, y, FitOptions{.epochs = 5, .batch_size = 10, .verbose = 0}, run);
  t.join();
  QCOMPARE(stop.seen.load(), 1);
  QVERIFY(Clock::now() - start < std::chrono::seconds(4));

  // Paused, step_once() lets a batch through without the pace.
  control.reset();
  stop.seen = 0;
  control.pause();
  std::thread s([&] {
    for (int i = 1; i <= 3; ++i) {
      control.step_once();
      while (stop.seen < i) std::this_thread::yield();
    }
    control.request_stop();
  });
  start = Clock::now();
  m.fit(x, y, FitOptions{.epochs = 5, .batch_size = 10, .verbose = 0}, run);
  s.join();
  QCOMPARE(stop.seen.load(), 3);
  QVERIFY(Clock::now() - start < std::chrono::seconds(4));
}

void TestFit::initial_epoch() {
  Matrix x, y;
  make_data(20, x, y);
  Sequential m(mlp());
  m.compile(bce());
  std::ostringstream out;
  RunOptions run;
  run.out = &out;
  const History h =
      m.fit(x, y, FitOptions{.epochs = 4, .batch_size = 10, .verbose = 2, .initial_epoch = 2}, run);
  QCOMPARE(h.epoch, (std::vector<int>{2, 3}));
  QVERIFY(out.str().rfind("Epoch 3/4\n2/2 - ", 0) == 0);
  QVERIFY(out.str().find("Epoch 4/4\n2/2 - ") != std::string::npos);
  // initial_epoch = epochs would train nothing in Keras: refused, saying what epochs means.
  try {
    m.fit(x, y, FitOptions{.epochs = 4, .verbose = 0, .initial_epoch = 4});
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("fit.initial_epoch"));
    QVERIFY2(std::string(e.message())
                     .find("must be from 0 to epochs - 1 = 3, got 4: epochs is "
                           "the epoch to end at") == 0,
             e.what());
  }
}

void TestFit::shape_errors() {
  Matrix x, y;
  make_data(20, x, y);
  Sequential m(mlp());
  m.compile(bce());
  Matrix y2 = Matrix::Zero(20, 2);
  try {
    m.fit(x, y2, FitOptions{.verbose = 0});
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("model"));
    QVERIFY(std::string(e.what()).find("1 unit but the targets have 2 columns") !=
            std::string::npos);
  }
  Matrix x4 = Matrix::Zero(20, 4);
  QVERIFY_THROWS_EXCEPTION(InputError, m.fit(x4, y, FitOptions{.verbose = 0}));
}

void TestFit::sizes_beyond_memory_are_input_errors() {
  // A model or a batch that would need more than 1 GiB of floats fails with the place, before
  // anything is allocated (instead of std::bad_alloc, or the kernel's OOM killer).
  ModelSpec wide = mlp();
  wide.layers[1].units = 1'000'000'000'000;  // 10^12 units: their bias alone is 4 TB
  try {
    Sequential m(wide);
    m.build(3);
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("model.config.layers[1].config.units"));
    QVERIFY2(std::string(e.message()).find("is too large: 1000000000000 units") == 0, e.what());
  }
  wide.layers[1].units = 60'000'000;  // 1.8 x 10^8 + 6 x 10^7 floats, then a 6 x 10^7 kernel
  try {
    Sequential m(wide);
    m.build(3);
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("model.config.layers[3].config.units"));
    QVERIFY2(std::string(e.message()).find("model's variables hold 300000000 floats") !=
                 std::string::npos,
             e.what());
  }
  wide.layers[1].units = 200'000;  // 2.4 MB of kernel; 400 rows of activations hold 3.2 x 10^8
  Sequential m(wide);
  m.compile(bce());
  Matrix x, y;
  make_data(400, x, y);
  try {
    m.fit(x, y, FitOptions{.epochs = 1, .batch_size = 400, .verbose = 0});
    QFAIL("expected an error");
  } catch (const InputError& e) {
    QCOMPARE(e.place(), std::string("fit.batch_size"));
  }
  QVERIFY(
      m.fit(x.topRows(16), y.topRows(16), FitOptions{.epochs = 1, .batch_size = 16, .verbose = 0})
          .epoch.size() == 1);
}

QTEST_GUILESS_MAIN(TestFit)
#include "tst_fit.moc"
