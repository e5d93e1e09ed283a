// The Training panel: round trips for every optimizer, loss and callback layout, the rows shown
// per optimizer, unset values staying unset, the clipping and metric checks, callbacks the panel
// does not edit, and read-only mode.
#include <QCheckBox>
#include <QComboBox>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTest>

#include "ui/panels/layer_editor.h"
#include "ui/panels/training_panel.h"

using namespace fitbench;

namespace {

bool sameSchedule(const std::optional<ScheduleSpec>& a, const std::optional<ScheduleSpec>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  return a->class_name == b->class_name && a->initial_learning_rate == b->initial_learning_rate &&
         a->decay_steps == b->decay_steps && a->decay_rate == b->decay_rate &&
         a->staircase == b->staircase && a->alpha == b->alpha &&
         a->warmup_target == b->warmup_target && a->warmup_steps == b->warmup_steps &&
         a->boundaries == b->boundaries && a->values == b->values;
}

bool sameOptimizer(const OptimizerSpec& a, const OptimizerSpec& b) {
  return a.class_name == b.class_name && a.learning_rate == b.learning_rate &&
         sameSchedule(a.schedule, b.schedule) && a.momentum == b.momentum &&
         a.nesterov == b.nesterov && a.beta_1 == b.beta_1 && a.beta_2 == b.beta_2 &&
         a.epsilon == b.epsilon && a.amsgrad == b.amsgrad && a.weight_decay == b.weight_decay &&
         a.rho == b.rho && a.centered == b.centered &&
         a.initial_accumulator_value == b.initial_accumulator_value && a.clipnorm == b.clipnorm &&
         a.clipvalue == b.clipvalue && a.global_clipnorm == b.global_clipnorm;
}

bool sameCallback(const CallbackSpec& a, const CallbackSpec& b) {
  return a.class_name == b.class_name && a.monitor == b.monitor && a.mode == b.mode &&
         a.min_delta == b.min_delta && a.min_delta_set == b.min_delta_set &&
         a.patience == b.patience && a.patience_set == b.patience_set &&
         a.restore_best_weights == b.restore_best_weights &&
         a.start_from_epoch == b.start_from_epoch && a.baseline == b.baseline &&
         a.filepath == b.filepath && a.save_best_only == b.save_best_only &&
         a.separator == b.separator && a.append == b.append && a.factor == b.factor &&
         a.cooldown == b.cooldown && a.min_lr == b.min_lr && sameSchedule(a.schedule, b.schedule);
}

bool sameFit(const FitOptions& a, const FitOptions& b) {
  if (a.epochs != b.epochs || a.batch_size != b.batch_size ||
      a.validation_split != b.validation_split || a.shuffle != b.shuffle ||
      a.verbose != b.verbose || a.initial_epoch != b.initial_epoch ||
      a.callbacks.size() != b.callbacks.size()) {
    return false;
  }
  for (size_t i = 0; i < a.callbacks.size(); ++i) {
    if (!sameCallback(a.callbacks[i], b.callbacks[i])) return false;
  }
  return true;
}

bool sameCompile(const CompileOptions& a, const CompileOptions& b) {
  return sameOptimizer(a.optimizer, b.optimizer) && a.loss.name == b.loss.name &&
         a.loss.from_logits == b.loss.from_logits && a.loss.delta == b.loss.delta &&
         a.metrics == b.metrics;
}

CallbackSpec callback(const std::string& className) {
  CallbackSpec cb;
  cb.class_name = className;
  return cb;
}

template <typename T>
T* child(const QWidget& panel, const char* name) {
  T* w = panel.findChild<T*>(QLatin1String(name));
  if (!w) qFatal("no child %s", name);
  return w;
}

bool shown(const QWidget& panel, const char* name) {
  return child<QWidget>(panel, name)->isVisibleTo(&panel);
}

QListWidgetItem* metricItem(const QWidget& panel, const QString& name) {
  auto* list = child<QListWidget>(panel, "metrics");
  for (int i = 0; i < list->count(); ++i) {
    if (list->item(i)->text() == name) return list->item(i);
  }
  return nullptr;
}

}  // namespace

class TestTrainingPanel : public QObject {
  Q_OBJECT

 private slots:
  void optimizerRoundTrip_data() {
    QTest::addColumn<int>("variant");
    QTest::newRow("SGD, momentum, nesterov, clipnorm") << 0;
    QTest::newRow("Adam, default learning rate, amsgrad") << 1;
    QTest::newRow("AdamW, default weight decay, global_clipnorm") << 2;
    QTest::newRow("AdamW, weight decay set") << 3;
    QTest::newRow("RMSprop, centered, clipvalue") << 4;
    QTest::newRow("Adagrad") << 5;
    QTest::newRow("SGD with a schedule") << 6;
    QTest::newRow("RMSprop, compile's default") << 7;
  }
  void optimizerRoundTrip() {
    QFETCH(int, variant);
    OptimizerSpec o;
    switch (variant) {
      case 0:
        o.class_name = "SGD";
        o.learning_rate = 0.05;
        o.momentum = 0.9;
        o.nesterov = true;
        o.clipnorm = 1.5;
        break;
      case 1:
        o.class_name = "Adam";
        o.beta_1 = 0.8;
        o.beta_2 = 0.99;
        o.epsilon = 1e-6;
        o.amsgrad = true;
        break;
      case 2:
        o.class_name = "AdamW";
        o.learning_rate = 3e-4;
        o.global_clipnorm = 2.0;
        break;
      case 3:
        o.class_name = "AdamW";
        o.weight_decay = 0.01;
        break;
      case 4:
        o.class_name = "RMSprop";
        o.learning_rate = 0.002;
        o.rho = 0.8;
        o.momentum = 0.1;
        o.centered = true;
        o.clipvalue = 0.5;
        break;
      case 5:
        o.class_name = "Adagrad";
        o.learning_rate = 0.1;
        o.initial_accumulator_value = 0.2;
        o.epsilon = 1e-5;
        break;
      case 6:
        o.class_name = "SGD";
        o.schedule = ScheduleSpec{.class_name = "ExponentialDecay",
                                  .initial_learning_rate = 0.1,
                                  .decay_steps = 100,
                                  .decay_rate = 0.5,
                                  .staircase = true};
        break;
      case 7:
        o.class_name = "RMSprop";
        break;
    }
    CompileOptions compile;
    compile.optimizer = o;
    compile.loss.name = "binary_crossentropy";
    compile.metrics = {"accuracy"};
    TrainingPanel panel;
    QSignalSpy spy(&panel, &TrainingPanel::changed);
    panel.setSpec(compile, FitOptions{}, std::nullopt);
    QVERIFY(sameCompile(panel.compileOptions(), compile));
    QCOMPARE(spy.count(), 0);
    QCOMPARE(panel.errorText(), QString());
  }

  void lossRoundTrip_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<bool>("fromLogits");
    QTest::addColumn<double>("delta");
    QTest::newRow("binary") << "binary_crossentropy" << false << 1.0;
    QTest::newRow("binary, logits") << "binary_crossentropy" << true << 1.0;
    QTest::newRow("categorical, logits") << "categorical_crossentropy" << true << 1.0;
    QTest::newRow("sparse") << "sparse_categorical_crossentropy" << false << 1.0;
    QTest::newRow("mse") << "mean_squared_error" << false << 1.0;
    QTest::newRow("mae") << "mean_absolute_error" << false << 1.0;
    QTest::newRow("huber, delta 0.25") << "huber" << false << 0.25;
  }
  void lossRoundTrip() {
    QFETCH(QString, name);
    QFETCH(bool, fromLogits);
    QFETCH(double, delta);
    CompileOptions compile;
    compile.loss = {name.toStdString(), fromLogits, delta};
    TrainingPanel panel;
    panel.setSpec(compile, FitOptions{}, std::nullopt);
    QVERIFY(sameCompile(panel.compileOptions(), compile));
    QCOMPARE(child<QComboBox>(panel, "loss")->currentText(), name);
    QCOMPARE(shown(panel, "from_logits"), name.contains(QStringLiteral("crossentropy")));
    QCOMPARE(shown(panel, "delta"), name == QStringLiteral("huber"));
  }

  void choosingALoss() {
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
    QSignalSpy spy(&panel, &TrainingPanel::changed);
    child<QComboBox>(panel, "loss")->setCurrentText(QStringLiteral("huber"));
    child<NumberSpinBox>(panel, "delta")->setValue(2.5);
    QCOMPARE(panel.compileOptions().loss.name, std::string("huber"));
    QCOMPARE(panel.compileOptions().loss.delta, 2.5);
    QCOMPARE(spy.count(), 2);
  }

  void rowsPerOptimizer_data() {
    QTest::addColumn<QString>("optimizer");
    QTest::addColumn<QStringList>("rows");
    // Keras's constructor arguments per optimizer (keras/src/optimizers/*.py).
    QTest::newRow("SGD") << "SGD" << QStringList{"momentum", "nesterov"};
    QTest::newRow("Adam") << "Adam" << QStringList{"beta_1", "beta_2", "epsilon", "amsgrad"};
    QTest::newRow("AdamW") << "AdamW" << QStringList{"beta_1", "beta_2", "epsilon", "amsgrad"};
    QTest::newRow("RMSprop") << "RMSprop" << QStringList{"rho", "momentum", "epsilon", "centered"};
    QTest::newRow("Adagrad") << "Adagrad" << QStringList{"initial_accumulator_value", "epsilon"};
  }
  void rowsPerOptimizer() {
    QFETCH(QString, optimizer);
    QFETCH(QStringList, rows);
    const QStringList all = {"momentum", "nesterov", "beta_1",
                             "beta_2",   "epsilon",  "amsgrad",
                             "rho",      "centered", "initial_accumulator_value"};
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
    child<QComboBox>(panel, "optimizer")->setCurrentText(optimizer);  // as a user would
    for (const QString& row : all) {
      QVERIFY2(shown(panel, qPrintable(row)) == rows.contains(row), qPrintable(row));
    }
    // Every optimizer has these.
    QVERIFY(shown(panel, "learning_rate"));
    QVERIFY(shown(panel, "weight_decay"));
    QVERIFY(shown(panel, "clipnorm"));
    QVERIFY(!shown(panel, "schedule"));
    QCOMPARE(panel.compileOptions().optimizer.class_name, optimizer.toStdString());
  }

  void unsetValuesShowKerasDefaults() {
    TrainingPanel panel;
    CompileOptions compile;
    compile.optimizer.class_name = "SGD";
    panel.setSpec(compile, FitOptions{}, std::nullopt);
    auto* lr = child<NumberSpinBox>(panel, "learning_rate");
    auto* wd = child<NumberSpinBox>(panel, "weight_decay");
    QCOMPARE(lr->value(), 0.01);  // keras/src/optimizers/sgd.py
    QCOMPARE(lr->text(), QStringLiteral("0.01"));
    child<QComboBox>(panel, "optimizer")->setCurrentText(QStringLiteral("AdamW"));
    QCOMPARE(lr->value(), 0.001);  // keras/src/optimizers/adamw.py
    QCOMPARE(wd->value(), 0.004);
    // Still unset: the file keeps relying on Keras's defaults.
    QVERIFY(!panel.compileOptions().optimizer.learning_rate.has_value());
    QVERIFY(!panel.compileOptions().optimizer.weight_decay.has_value());
    lr->setValue(0.02);
    QCOMPARE(panel.compileOptions().optimizer.learning_rate, std::optional<double>(0.02));
    // An epsilon in %g form.
    QCOMPARE(child<NumberSpinBox>(panel, "epsilon")->text(), QStringLiteral("1e-07"));
  }

  void scheduleIsKeptAndRemovable() {
    CompileOptions compile;
    compile.optimizer.schedule =
        ScheduleSpec{.class_name = "ExponentialDecay", .initial_learning_rate = 0.1};
    TrainingPanel panel;
    panel.setSpec(compile, FitOptions{}, std::nullopt);
    QVERIFY(shown(panel, "schedule"));
    QVERIFY(!shown(panel, "learning_rate"));
    QVERIFY(panel.findChild<QWidget*>("schedule")
                ->findChild<QLabel*>()
                ->text()
                .contains(
                    QStringLiteral("ExponentialDecay (from file): from 0.1, ×0.96 every 1 step")));
    QSignalSpy spy(&panel, &TrainingPanel::changed);
    panel.findChild<QWidget*>("schedule")->findChild<QPushButton*>()->click();
    QCOMPARE(spy.count(), 1);
    QVERIFY(!panel.compileOptions().optimizer.schedule.has_value());
    QCOMPARE(panel.compileOptions().optimizer.learning_rate, std::optional<double>(0.1));
    QVERIFY(shown(panel, "learning_rate"));
  }

  void clippingIsOneAtATime() {
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
    child<QCheckBox>(panel, "clipnorm_set")->setChecked(true);
    child<NumberSpinBox>(panel, "clipnorm")->setValue(2.0);
    QCOMPARE(panel.compileOptions().optimizer.clipnorm, std::optional<double>(2.0));
    child<QCheckBox>(panel, "clipvalue_set")->setChecked(true);
    QVERIFY(!child<QCheckBox>(panel, "clipnorm_set")->isChecked());
    QVERIFY(!panel.compileOptions().optimizer.clipnorm.has_value());
    QCOMPARE(panel.compileOptions().optimizer.clipvalue, std::optional<double>(1.0));
    QCOMPARE(panel.errorText(), QString());
    // A spec with two of them (not from a file, which core rejects) is an error.
    CompileOptions both;
    both.optimizer.clipnorm = 1.0;
    both.optimizer.global_clipnorm = 1.0;
    panel.setSpec(both, FitOptions{}, std::nullopt);
    QCOMPARE(panel.errorText(),
             QStringLiteral("Only one of clipnorm, clipvalue and global_clipnorm can be set."));
  }

  void metrics() {
    CompileOptions compile;
    compile.loss.name = "sparse_categorical_crossentropy";
    compile.metrics = {"mean_squared_error", "accuracy"};  // an alias the list does not offer
    TrainingPanel panel;
    panel.setSpec(compile, FitOptions{}, std::nullopt);
    QVERIFY(sameCompile(panel.compileOptions(), compile));
    QListWidgetItem* extra = metricItem(panel, QStringLiteral("mean_squared_error"));
    QVERIFY(extra);
    QCOMPARE(extra->checkState(), Qt::Checked);
    QCOMPARE(metricItem(panel, QStringLiteral("mse"))->checkState(), Qt::Unchecked);
    QSignalSpy spy(&panel, &TrainingPanel::changed);
    metricItem(panel, QStringLiteral("precision"))->setCheckState(Qt::Checked);
    QCOMPARE(spy.count(), 1);
    QCOMPARE(panel.compileOptions().metrics,
             std::vector<std::string>({"mean_squared_error", "accuracy", "precision"}));
    QVERIFY2(panel.errorText().contains(
                 QStringLiteral("precision needs one target column per output unit, but "
                                "sparse_categorical_crossentropy trains on class labels")),
             qPrintable(panel.errorText()));
    QVERIFY(child<QListWidget>(panel, "metrics")->toolTip().contains(QStringLiteral("precision")));
    extra->setCheckState(Qt::Unchecked);
    metricItem(panel, QStringLiteral("precision"))->setCheckState(Qt::Unchecked);
    QCOMPARE(panel.compileOptions().metrics, std::vector<std::string>({"accuracy"}));
    QCOMPARE(panel.errorText(), QString());
  }

  void fitRoundTripKeepsHiddenFields() {
    FitOptions fit;
    fit.epochs = 150;
    fit.batch_size = 16;
    fit.validation_split = 0.2;
    fit.shuffle = false;
    fit.verbose = 2;
    fit.initial_epoch = 3;
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, fit, 7);
    QVERIFY(sameFit(panel.fitOptions(), fit));
    QCOMPARE(panel.seed(), std::optional<uint64_t>(7));
    child<QSpinBox>(panel, "epochs")->setValue(20);
    child<QCheckBox>(panel, "seed_set")->setChecked(false);
    QCOMPARE(panel.fitOptions().epochs, 20);
    QCOMPARE(panel.fitOptions().verbose, 2);
    QCOMPARE(panel.fitOptions().validation_split, 0.2);
    QCOMPARE(panel.seed(), std::nullopt);
    panel.setSpec(CompileOptions{}, fit, std::nullopt);
    QCOMPARE(panel.seed(), std::nullopt);
    QVERIFY(!child<QSpinBox>(panel, "seed")->isEnabled());
  }

  void fitCountsUpToTheFilesLimitAreShown() {
    // The fields take what an experiment file takes: a file's 200000 epochs are shown and run as
    // they are, not clamped to a smaller range in the field while the run keeps the file's.
    FitOptions fit;
    fit.epochs = 200000;
    fit.batch_size = kMaxFitCount;
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, fit, std::nullopt);
    QCOMPARE(child<QSpinBox>(panel, "epochs")->value(), 200000);
    QCOMPARE(child<QSpinBox>(panel, "batch_size")->value(), kMaxFitCount);
    QVERIFY(sameFit(panel.fitOptions(), fit));
    QVERIFY(panel.errorText().isEmpty());
    // One more than a file may hold is shown as it is and refused with a sentence.
    child<QSpinBox>(panel, "epochs")->setValue(kMaxFitCount + 1);
    QCOMPARE(child<QSpinBox>(panel, "epochs")->value(), kMaxFitCount + 1);
    QVERIFY2(panel.errorText().startsWith("Epochs must be from 1 to "),
             qPrintable(panel.errorText()));
  }

  void callbacksRoundTrip() {
    FitOptions fit;
    CallbackSpec csv = callback("CSVLogger");
    csv.filepath = "log.csv";
    csv.separator = ";";
    CallbackSpec es = callback("EarlyStopping");
    es.monitor = "val_mse";  // not in the combo: added to it
    es.mode = "min";
    es.patience_set = 3;
    es.patience = 3;
    es.baseline = 0.5;
    es.start_from_epoch = 2;
    CallbackSpec checkpoint = callback("ModelCheckpoint");
    checkpoint.filepath = "best.json";
    checkpoint.save_best_only = true;
    CallbackSpec rlr = callback("ReduceLROnPlateau");
    rlr.factor = 0.5;
    rlr.cooldown = 1;
    CallbackSpec second = callback("EarlyStopping");
    second.monitor = "loss";
    fit.callbacks = {csv, es, checkpoint, rlr, second};
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, fit, std::nullopt);
    QVERIFY(sameFit(panel.fitOptions(), fit));
    QCOMPARE(child<QLabel>(panel, "other_callbacks")->text(),
             QStringLiteral("Also from file: CSVLogger, ModelCheckpoint, EarlyStopping"));
    QVERIFY(child<QCheckBox>(panel, "early_stopping")->isChecked());
    QCOMPARE(child<QComboBox>(panel, "es_monitor")->currentText(), QStringLiteral("val_mse"));
    QCOMPARE(child<QSpinBox>(panel, "rlr_patience")->value(), 10);  // Keras's default
    // Editing the RLR patience writes it (and its "set" twin) in place; turning early stopping
    // off removes only that callback.
    child<QSpinBox>(panel, "rlr_patience")->setValue(4);
    child<QCheckBox>(panel, "early_stopping")->setChecked(false);
    const FitOptions out = panel.fitOptions();
    QCOMPARE(out.callbacks.size(), size_t(4));
    QVERIFY(sameCallback(out.callbacks[0], csv));
    QVERIFY(sameCallback(out.callbacks[1], checkpoint));
    QCOMPARE(out.callbacks[2].class_name, std::string("ReduceLROnPlateau"));
    QCOMPARE(out.callbacks[2].patience_set, std::optional<int>(4));
    QCOMPARE(out.callbacks[2].factor, 0.5);
    QCOMPARE(out.callbacks[2].cooldown, 1);
    QVERIFY(sameCallback(out.callbacks[3], second));
  }

  void enablingACallback() {
    TrainingPanel panel;
    panel.setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
    panel.setValidationSplit(0.2);  // val_ values exist
    QVERIFY(panel.fitOptions().callbacks.empty());
    QVERIFY(!shown(panel, "es_patience"));
    child<QCheckBox>(panel, "early_stopping")->setChecked(true);
    QVERIFY(shown(panel, "es_patience"));
    child<QSpinBox>(panel, "es_patience")->setValue(5);
    child<QCheckBox>(panel, "es_restore_best_weights")->setChecked(true);
    child<QComboBox>(panel, "es_monitor")->setCurrentText(QStringLiteral("val_accuracy"));
    const FitOptions out = panel.fitOptions();
    QCOMPARE(out.callbacks.size(), size_t(1));
    const CallbackSpec& es = out.callbacks[0];
    QCOMPARE(es.class_name, std::string("EarlyStopping"));
    QCOMPARE(es.patience_set, std::optional<int>(5));
    QVERIFY(es.restore_best_weights);
    QCOMPARE(es.monitor, std::string("val_accuracy"));
    // EarlyStopping watching accuracy without an accuracy metric is an error (its "auto" mode
    // cannot tell the direction: Keras raises ValueError, fitbench's Run refuses it).
    QVERIFY2(panel.errorText().contains(QStringLiteral("cannot tell whether val_accuracy")),
             qPrintable(panel.errorText()));
    metricItem(panel, QStringLiteral("accuracy"))->setCheckState(Qt::Checked);
    QVERIFY(panel.issues().isEmpty());
    // ReduceLROnPlateau's own rule ("acc" in the name is "max") needs no metric: a warning only.
    metricItem(panel, QStringLiteral("accuracy"))->setCheckState(Qt::Unchecked);
    child<QComboBox>(panel, "es_monitor")->setCurrentText(QStringLiteral("val_loss"));
    child<QCheckBox>(panel, "reduce_lr")->setChecked(true);
    child<QComboBox>(panel, "rlr_monitor")->setCurrentText(QStringLiteral("val_accuracy"));
    QCOMPARE(panel.errorText(), QString());
    QVERIFY(!panel.issues().isEmpty());
    QVERIFY(panel.issues().front().text.contains(QStringLiteral("no accuracy metric")));
  }

  // A val_ monitor without a validation split never acts: said before the run.
  void valMonitorWithoutSplitWarns() {
    TrainingPanel panel;
    FitOptions fit;
    fit.callbacks = {callback("EarlyStopping")};  // monitor val_loss
    panel.setSpec(CompileOptions{}, fit, std::nullopt);
    QVERIFY(!panel.issues().isEmpty());
    QVERIFY2(panel.issues().front().text.contains(QStringLiteral("exists only with a validation "
                                                                 "split")),
             qPrintable(panel.issues().front().text));
    panel.setValidationSplit(0.25);
    QVERIFY(panel.issues().isEmpty());
  }

  // The callbacks' settings without a field are named under them, kept, and a new monitor takes
  // mode auto; initial_epoch is named under Epochs.
  void settingsWithoutAFieldAreShown() {
    TrainingPanel panel;
    panel.setValidationSplit(0.2);
    FitOptions fit;
    fit.epochs = 10;
    fit.initial_epoch = 3;
    CallbackSpec es = callback("EarlyStopping");
    es.monitor = "val_accuracy";
    es.mode = "max";
    es.baseline = 0.9;
    es.start_from_epoch = 2;
    CallbackSpec rlr = callback("ReduceLROnPlateau");
    rlr.cooldown = 4;
    rlr.min_delta_set = 0.001;
    fit.callbacks = {es, rlr};
    panel.setSpec(CompileOptions{}, fit, std::nullopt);
    QVERIFY(shown(panel, "es_more"));
    QCOMPARE(child<QLabel>(panel, "es_more")->text(),
             QStringLiteral("Also from file: mode max, baseline 0.9, start_from_epoch 2"));
    QCOMPARE(child<QLabel>(panel, "rlr_more")->text(),
             QStringLiteral("Also from file: min_delta 0.001, cooldown 4"));
    QVERIFY(shown(panel, "initial_epoch"));
    QCOMPARE(child<QLabel>(panel, "initial_epoch")->text(),
             QStringLiteral("Starts at epoch 4 (initial_epoch 3 from file)"));
    QCOMPARE(panel.fitOptions().callbacks[0].mode, std::string("max"));  // kept
    QCOMPARE(panel.fitOptions().initial_epoch, 3);
    child<QComboBox>(panel, "es_monitor")->setCurrentText(QStringLiteral("val_loss"));
    QCOMPARE(panel.fitOptions().callbacks[0].mode, std::string("auto"));
    QCOMPARE(child<QLabel>(panel, "es_more")->text(),
             QStringLiteral("Also from file: baseline 0.9, start_from_epoch 2"));
    QCOMPARE(panel.fitOptions().callbacks[0].baseline, std::optional<double>(0.9));
    // Epochs that leave initial_epoch nothing to run: an error, in red under Epochs.
    QVERIFY(panel.errorText().isEmpty());
    child<QSpinBox>(panel, "epochs")->setValue(3);
    QCOMPARE(panel.errorText(),
             QStringLiteral("initial_epoch 3 from the file needs at least 4 epochs"));
    QCOMPARE(child<QLabel>(panel, "initial_epoch")->text(), panel.errorText());
  }

  void readOnly() {
    TrainingPanel panel;
    FitOptions fit;
    fit.callbacks = {callback("EarlyStopping")};
    panel.setSpec(CompileOptions{}, fit, 3);
    panel.setReadOnly(true);
    QVERIFY(!child<QComboBox>(panel, "optimizer")->isEnabled());
    QVERIFY(child<NumberSpinBox>(panel, "learning_rate")->isReadOnly());
    QVERIFY(child<QSpinBox>(panel, "epochs")->isReadOnly());
    QVERIFY(!child<QCheckBox>(panel, "shuffle")->isEnabled());
    QVERIFY(!child<QCheckBox>(panel, "early_stopping")->isEnabled());
    QVERIFY(!(metricItem(panel, QStringLiteral("accuracy"))->flags() & Qt::ItemIsUserCheckable));
    panel.setReadOnly(false);
    QVERIFY(child<QComboBox>(panel, "optimizer")->isEnabled());
    QVERIFY(!child<NumberSpinBox>(panel, "learning_rate")->isReadOnly());
    QVERIFY(child<QCheckBox>(panel, "early_stopping")->isEnabled());
    QVERIFY(metricItem(panel, QStringLiteral("accuracy"))->flags() & Qt::ItemIsUserCheckable);
    // The optional values keep their own enabled state.
    QVERIFY(!child<NumberSpinBox>(panel, "clipnorm")->isEnabled());
    QVERIFY(child<QSpinBox>(panel, "seed")->isEnabled());
  }
};

QTEST_MAIN(TestTrainingPanel)
#include "tst_training_panel.moc"
