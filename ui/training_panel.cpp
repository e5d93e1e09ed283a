#include "ui/training_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>
#include <algorithm>
#include <limits>

#include "ui/layer_editor.h"

namespace fitbench {

namespace {

constexpr int kMaxSeed = std::numeric_limits<int>::max();
constexpr int kMaxPatience = 100000;
// ReduceLROnPlateau's defaults when the file leaves them unset (keras/src/callbacks/
// reduce_lr_on_plateau.py); EarlyStopping's are CallbackSpec's in-class defaults.
constexpr int kRlrPatience = 10;

const QStringList kOptimizers = {QStringLiteral("SGD"), QStringLiteral("Adam"),
                                 QStringLiteral("AdamW"), QStringLiteral("RMSprop"),
                                 QStringLiteral("Adagrad")};
const QStringList kLosses = {QStringLiteral("binary_crossentropy"),
                             QStringLiteral("categorical_crossentropy"),
                             QStringLiteral("sparse_categorical_crossentropy"),
                             QStringLiteral("mean_squared_error"),
                             QStringLiteral("mean_absolute_error"),
                             QStringLiteral("huber")};
const QStringList kMonitors = {QStringLiteral("val_loss"), QStringLiteral("loss"),
                               QStringLiteral("val_accuracy"), QStringLiteral("accuracy")};

// A schedule's figures in a line: "from 0.1, ×0.96 every 1000 steps", "from 0.1 to 0 over 1000
// steps", "0.1, then 0.01 after step 1000".
QString scheduleText(const ScheduleSpec& s) {
  const auto num = [](double v) { return QString::number(v, 'g', 6); };
  const auto steps = [&](double n) {
    return n == 1.0 ? QObject::tr("1 step") : QObject::tr("%1 steps").arg(num(n));
  };
  if (s.class_name == "ExponentialDecay")
    return QObject::tr("from %1, ×%2 every %3%4")
        .arg(num(s.initial_learning_rate), num(s.decay_rate), steps(s.decay_steps),
             s.staircase ? QObject::tr(" (staircase)") : QString());
  if (s.class_name == "CosineDecay") {
    const double peak = s.warmup_target.value_or(s.initial_learning_rate);
    QString text = QObject::tr("from %1 to %2 over %3")
                       .arg(num(peak), num(s.alpha * peak), steps(s.decay_steps));
    if (s.warmup_target && s.warmup_steps > 0)
      text = QObject::tr("%1 to %2 in a warm-up of %3, then ")
                 .arg(num(s.initial_learning_rate), num(peak), steps(s.warmup_steps)) +
             text;
    return text;
  }
  QStringList parts;
  for (size_t i = 0; i < s.values.size(); ++i) {
    if (i == 0)
      parts << num(s.values[i]);
    else if (i - 1 < s.boundaries.size())
      parts << QObject::tr("%1 after step %2").arg(num(s.values[i]), num(s.boundaries[i - 1]));
  }
  return parts.join(QStringLiteral(", then "));
}

NumberSpinBox* makeNumber(QWidget* parent, const char* name, double lo, double hi) {
  auto* spin = new NumberSpinBox(parent);
  spin->setObjectName(QLatin1String(name));
  spin->setRange(lo, hi);
  return spin;
}

QSpinBox* makeInteger(QWidget* parent, const char* name, int lo, int hi) {
  auto* spin = new QSpinBox(parent);
  spin->setObjectName(QLatin1String(name));
  spin->setRange(lo, hi);
  return spin;
}

QCheckBox* makeCheck(QWidget* parent, const char* name, const QString& text) {
  auto* check = new QCheckBox(text, parent);
  check->setObjectName(QLatin1String(name));
  return check;
}

QComboBox* makeCombo(QWidget* parent, const char* name, const QStringList& items) {
  auto* combo = new QComboBox(parent);
  combo->setObjectName(QLatin1String(name));
  combo->addItems(items);
  // Long names ("sparse_categorical_crossentropy") must not widen the panel past a narrow dock.
  combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  combo->setMinimumContentsLength(12);
  return combo;
}

// "[x] [ value ]" in one form row: an optional value.
QWidget* optionalRow(QWidget* parent, QCheckBox* check, QWidget* field) {
  auto* row = new QWidget(parent);
  auto* layout = new QHBoxLayout(row);
  layout->setContentsMargins(0, 0, 0, 0);
  check->setParent(row);
  field->setParent(row);
  layout->addWidget(check);
  layout->addWidget(field, 1);
  return row;
}

QLabel* makeIssueLabel(QWidget* parent) {
  auto* label = new QLabel(parent);
  label->setWordWrap(true);
  label->setVisible(false);
  return label;
}

// A grey note of a file's settings the panel keeps but has no field for.
QLabel* makeFromFileLabel(QWidget* parent, const char* name) {
  auto* label = new QLabel(parent);
  label->setObjectName(QLatin1String(name));
  label->setWordWrap(true);
  label->setStyleSheet(QStringLiteral("color: palette(mid);"));
  label->setToolTip(
      QObject::tr("Kept from the file and used as it is; edit the file to change it."));
  label->setVisible(false);
  return label;
}

void setComboText(QComboBox* combo, const QString& text) {
  if (combo->findText(text) < 0) combo->addItem(text);
  combo->setCurrentText(text);
}

// The names core/metrics make_metric accepts.
bool isKnownMetric(const QString& name) {
  static const QStringList kKnown = {QStringLiteral("binary_accuracy"),
                                     QStringLiteral("BinaryAccuracy"),
                                     QStringLiteral("categorical_accuracy"),
                                     QStringLiteral("CategoricalAccuracy"),
                                     QStringLiteral("sparse_categorical_accuracy"),
                                     QStringLiteral("SparseCategoricalAccuracy"),
                                     QStringLiteral("mean_squared_error"),
                                     QStringLiteral("MeanSquaredError"),
                                     QStringLiteral("mse"),
                                     QStringLiteral("MSE"),
                                     QStringLiteral("mean_absolute_error"),
                                     QStringLiteral("MeanAbsoluteError"),
                                     QStringLiteral("mae"),
                                     QStringLiteral("MAE"),
                                     QStringLiteral("precision"),
                                     QStringLiteral("Precision"),
                                     QStringLiteral("recall"),
                                     QStringLiteral("Recall")};
  const QString lower = name.toLower();
  return lower == QLatin1String("accuracy") || lower == QLatin1String("acc") ||
         kKnown.contains(name);
}

}  // namespace

QStringList standardMetricNames() {
  return {QStringLiteral("accuracy"),
          QStringLiteral("binary_accuracy"),
          QStringLiteral("categorical_accuracy"),
          QStringLiteral("sparse_categorical_accuracy"),
          QStringLiteral("mse"),
          QStringLiteral("mae"),
          QStringLiteral("precision"),
          QStringLiteral("recall")};
}

double TrainingPanel::defaultLearningRate(const std::string& optimizer) {
  return optimizer == "SGD" ? 0.01 : 0.001;  // keras/src/optimizers/{sgd,adam,...}.py
}

TrainingPanel::TrainingPanel(QWidget* parent) : QWidget(parent) {
  auto* layout = new QVBoxLayout(this);
  buildOptimizerBox();
  buildLossBox();
  buildFitBox();
  buildCallbackBoxes();
  layout->addStretch(1);
  // One label column width for every group, so the fields line up down the panel.
  const QList<QFormLayout*> forms = findChildren<QFormLayout*>();
  int labelWidth = 0;
  for (QFormLayout* form : forms) {
    for (int row = 0; row < form->rowCount(); ++row) {
      if (QLayoutItem* item = form->itemAt(row, QFormLayout::LabelRole); item && item->widget())
        labelWidth = std::max(labelWidth, item->widget()->sizeHint().width());
    }
  }
  for (QFormLayout* form : forms) {
    for (int row = 0; row < form->rowCount(); ++row) {
      if (QLayoutItem* item = form->itemAt(row, QFormLayout::LabelRole); item && item->widget())
        item->widget()->setMinimumWidth(labelWidth);
    }
  }
  connectSignals();
  setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
}

void TrainingPanel::buildOptimizerBox() {
  auto* box = new QGroupBox(tr("Optimizer"), this);
  m_optForm = new QFormLayout(box);
  m_optimizer = makeCombo(box, "optimizer", kOptimizers);
  m_optForm->addRow(tr("Optimizer"), m_optimizer);
  m_learningRate = makeNumber(box, "learning_rate", 1e-9, 100.0);
  m_learningRate->setToolTip(
      tr("The step size of each update. Unchanged, it is the optimizer's "
         "Keras default (SGD 0.01, the others 0.001)."));
  m_optForm->addRow(tr("Learning rate"), m_learningRate);
  m_scheduleRow = new QWidget(box);
  m_scheduleRow->setObjectName(QStringLiteral("schedule"));
  // The schedule's name and figures on lines of their own, Remove under them: a long class name
  // (PiecewiseConstantDecay) beside the button made the tab wider than its dock.
  auto* scheduleLayout = new QVBoxLayout(m_scheduleRow);
  scheduleLayout->setContentsMargins(0, 0, 0, 0);
  m_schedule = new QLabel(m_scheduleRow);
  m_schedule->setWordWrap(true);
  m_removeSchedule = new QPushButton(tr("Remove"), m_scheduleRow);
  m_removeSchedule->setToolTip(tr("Use a constant learning rate (the schedule's initial one)."));
  scheduleLayout->addWidget(m_schedule);
  scheduleLayout->addWidget(m_removeSchedule, 0, Qt::AlignLeft);
  m_optForm->addRow(tr("Learning rate"), m_scheduleRow);

  m_momentum = makeNumber(box, "momentum", 0.0, 1.0);
  m_momentum->setToolTip(tr("Keeps a running velocity of past updates; 0 = plain gradient steps."));
  m_optForm->addRow(tr("Momentum"), m_momentum);
  m_nesterov = makeCheck(box, "nesterov", tr("Nesterov momentum"));
  m_optForm->addRow(QString(), m_nesterov);
  m_beta1 = makeNumber(box, "beta_1", 0.0, 0.999999999);
  m_beta1->setToolTip(tr("Decay rate of the running mean of gradients."));
  m_optForm->addRow(tr("Beta 1"), m_beta1);
  m_beta2 = makeNumber(box, "beta_2", 0.0, 0.999999999);
  m_beta2->setToolTip(tr("Decay rate of the running mean of squared gradients."));
  m_optForm->addRow(tr("Beta 2"), m_beta2);
  m_rho = makeNumber(box, "rho", 0.0, 0.999999999);
  m_rho->setToolTip(tr("Decay rate of the running mean of squared gradients."));
  m_optForm->addRow(tr("Rho"), m_rho);
  m_epsilon = makeNumber(box, "epsilon", 0.0, 1.0);
  m_epsilon->setToolTip(tr("Added to the denominator so that it is never zero."));
  m_optForm->addRow(tr("Epsilon"), m_epsilon);
  m_amsgrad = makeCheck(box, "amsgrad", tr("AMSGrad"));
  m_amsgrad->setToolTip(tr("Divide by the largest squared-gradient mean seen so far."));
  m_optForm->addRow(QString(), m_amsgrad);
  m_centered = makeCheck(box, "centered", tr("Centered"));
  m_centered->setToolTip(
      tr("Divide by the estimated variance of the gradients instead of their "
         "mean square."));
  m_optForm->addRow(QString(), m_centered);
  m_initialAccumulator = makeNumber(box, "initial_accumulator_value", 0.0, 1000.0);
  m_initialAccumulator->setToolTip(tr("The starting value of the sum of squared gradients."));
  m_optForm->addRow(tr("Initial accumulator"), m_initialAccumulator);
  m_weightDecay = makeNumber(box, "weight_decay", 0.0, 10.0);
  m_weightDecay->setToolTip(
      tr("Each step shrinks the weights by weight_decay × learning rate. "
         "Unchanged, it is the default: 0.004 for AdamW, none for the "
         "others."));
  m_optForm->addRow(tr("Weight decay"), m_weightDecay);

  const auto clipRow = [&](const char* checkName, const char* spinName, QCheckBox** check,
                           NumberSpinBox** spin, const QString& label, const QString& tip) {
    *check = makeCheck(box, checkName, QString());
    *spin = makeNumber(box, spinName, 1e-9, 1e6);
    (*spin)->setToolTip(tip);
    (*check)->setToolTip(tip);
    m_optForm->addRow(label, optionalRow(box, *check, *spin));
  };
  clipRow("clipnorm_set", "clipnorm", &m_clipnormSet, &m_clipnorm, tr("Clip norm"),
          tr("Scale each weight's gradient down so that its norm is at most this value."));
  clipRow("clipvalue_set", "clipvalue", &m_clipvalueSet, &m_clipvalue, tr("Clip value"),
          tr("Clip every gradient element into [-value, value]."));
  clipRow("global_clipnorm_set", "global_clipnorm", &m_globalClipnormSet, &m_globalClipnorm,
          tr("Global clip norm"),
          tr("Scale all gradients together so that their joint norm is at most this value."));
  m_clipIssue = makeIssueLabel(box);
  m_optForm->addRow(QString(), m_clipIssue);
  layout()->addWidget(box);
}

void TrainingPanel::buildLossBox() {
  auto* box = new QGroupBox(tr("Loss and metrics"), this);
  m_lossForm = new QFormLayout(box);
  m_loss = makeCombo(box, "loss", kLosses);
  m_loss->setToolTip(tr("What training minimizes."));
  m_lossForm->addRow(tr("Loss"), m_loss);
  m_fromLogits = makeCheck(box, "from_logits", tr("From logits"));
  m_fromLogits->setToolTip(
      tr("The model outputs raw scores (a linear last layer); the loss "
         "applies sigmoid or softmax itself, which is more stable."));
  m_lossForm->addRow(QString(), m_fromLogits);
  m_delta = makeNumber(box, "delta", 1e-9, 1e6);
  m_delta->setToolTip(tr("Errors smaller than delta are squared, larger ones count linearly."));
  m_lossForm->addRow(tr("Delta"), m_delta);
  m_metrics = new QListWidget(box);
  m_metrics->setObjectName(QStringLiteral("metrics"));
  m_metrics->setToolTip(tr("Values reported after each batch and epoch (not trained on)."));
  m_metrics->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  m_lossForm->addRow(tr("Metrics"), m_metrics);
  m_metricsIssue = makeIssueLabel(box);
  m_lossForm->addRow(QString(), m_metricsIssue);
  layout()->addWidget(box);
}

void TrainingPanel::buildFitBox() {
  auto* box = new QGroupBox(tr("Fit"), this);
  auto* form = new QFormLayout(box);
  m_epochs = makeInteger(box, "epochs", 1, 100000);
  m_epochs->setToolTip(tr("Passes over the training data."));
  form->addRow(tr("Epochs"), m_epochs);
  m_initialEpoch = makeFromFileLabel(box, "initial_epoch");
  form->addRow(QString(), m_initialEpoch);
  m_batchSize = makeInteger(box, "batch_size", 1, 65536);
  m_batchSize->setToolTip(
      tr("Samples per training step; each step's batch is split across the "
         "devices."));
  form->addRow(tr("Batch size"), m_batchSize);
  m_shuffle = makeCheck(box, "shuffle", tr("Shuffle before each epoch"));
  form->addRow(QString(), m_shuffle);
  m_seedSet = makeCheck(box, "seed_set", tr("Fixed"));
  m_seedValue = makeInteger(box, "seed", 0, kMaxSeed);
  const QString seedTip =
      tr("keras.utils.set_random_seed: the same seed gives the same initial "
         "weights, shuffles and dropout masks, so a run can be repeated.");
  m_seedSet->setToolTip(seedTip);
  m_seedValue->setToolTip(seedTip);
  form->addRow(tr("Seed"), optionalRow(box, m_seedSet, m_seedValue));
  layout()->addWidget(box);
}

void TrainingPanel::buildCallbackBoxes() {
  auto* box = new QGroupBox(tr("Callbacks"), this);
  m_callbackForm = new QFormLayout(box);
  QFormLayout* form = m_callbackForm;
  m_esCheck = makeCheck(box, "early_stopping", tr("Early stopping"));
  m_esCheck->setToolTip(
      tr("Stop training when the monitored value has not improved for `patience` epochs."));
  form->addRow(m_esCheck);
  m_esMonitor = makeCombo(box, "es_monitor", kMonitors);
  form->addRow(tr("Monitor"), m_esMonitor);
  m_esPatience = makeInteger(box, "es_patience", 0, kMaxPatience);
  m_esPatience->setSuffix(tr(" epochs"));
  form->addRow(tr("Patience"), m_esPatience);
  m_esMinDelta = makeNumber(box, "es_min_delta", 0.0, 1e6);
  m_esMinDelta->setToolTip(tr("A change smaller than this does not count as an improvement."));
  form->addRow(tr("Min delta"), m_esMinDelta);
  m_esRestore = makeCheck(box, "es_restore_best_weights", tr("Restore best weights"));
  m_esRestore->setToolTip(tr("At the end, go back to the weights of the best epoch."));
  form->addRow(QString(), m_esRestore);
  m_esIssue = makeIssueLabel(box);
  form->addRow(QString(), m_esIssue);
  m_esMore = makeFromFileLabel(box, "es_more");
  form->addRow(QString(), m_esMore);

  m_rlrCheck = makeCheck(box, "reduce_lr", tr("Reduce learning rate on plateau"));
  m_rlrCheck->setToolTip(
      tr("Multiply the learning rate by `factor` when the monitored value has not improved for "
         "`patience` epochs."));
  form->addRow(m_rlrCheck);
  m_rlrMonitor = makeCombo(box, "rlr_monitor", kMonitors);
  form->addRow(tr("Monitor"), m_rlrMonitor);
  m_rlrFactor = makeNumber(box, "rlr_factor", 1e-6, 0.999999);
  m_rlrFactor->setToolTip(tr("The new learning rate is the old one times this factor."));
  form->addRow(tr("Factor"), m_rlrFactor);
  m_rlrPatience = makeInteger(box, "rlr_patience", 0, kMaxPatience);
  m_rlrPatience->setSuffix(tr(" epochs"));
  form->addRow(tr("Patience"), m_rlrPatience);
  m_rlrMinLr = makeNumber(box, "rlr_min_lr", 0.0, 100.0);
  m_rlrMinLr->setToolTip(tr("The learning rate is never reduced below this."));
  form->addRow(tr("Min LR"), m_rlrMinLr);
  m_rlrIssue = makeIssueLabel(box);
  form->addRow(QString(), m_rlrIssue);
  m_rlrMore = makeFromFileLabel(box, "rlr_more");
  form->addRow(QString(), m_rlrMore);

  m_otherCallbacks = new QLabel(box);
  m_otherCallbacks->setObjectName(QStringLiteral("other_callbacks"));
  m_otherCallbacks->setWordWrap(true);
  m_otherCallbacks->setStyleSheet(QStringLiteral("color: palette(mid);"));
  m_otherCallbacks->setToolTip(
      tr("Callbacks from the file that this panel does not edit; they are kept and run "
         "unchanged."));
  form->addRow(m_otherCallbacks);
  layout()->addWidget(box);
}

void TrainingPanel::connectOptional(QCheckBox* check, NumberSpinBox* spin,
                                    std::optional<double> OptimizerSpec::*member) {
  connect(check, &QCheckBox::toggled, this, [this, check, spin, member](bool on) {
    if (m_filling) return;
    if (on) {
      // Keras accepts one clipping mode at a time: ticking one clears the others.
      for (QCheckBox* other : {m_clipnormSet, m_clipvalueSet, m_globalClipnormSet}) {
        if (other != check && other->isChecked()) other->setChecked(false);
      }
    }
    spin->setEnabled(on);
    m_compile.optimizer.*member = on ? std::optional<double>(spin->value()) : std::nullopt;
    edited();
  });
  connect(spin, &QDoubleSpinBox::valueChanged, this, [this, check, member](double v) {
    if (m_filling || !check->isChecked()) return;
    m_compile.optimizer.*member = v;
    edited();
  });
}

void TrainingPanel::connectSignals() {
  OptimizerSpec* opt = &m_compile.optimizer;
  connect(m_optimizer, &QComboBox::currentTextChanged, this, [this, opt](const QString& name) {
    if (m_filling) return;
    opt->class_name = name.toStdString();
    fillOptimizer();  // the defaults shown for unset values depend on the optimizer
    edited();
  });
  // A user's edit of a field (not the panel's own filling) goes through setter, then counts as
  // an edit of the experiment.
  const auto onEdit = [this](auto* widget, auto signal, auto setter) {
    connect(widget, signal, this, [this, setter](const auto& value) {
      if (m_filling) return;
      setter(value);
      edited();
    });
  };
  const auto number = [onEdit](NumberSpinBox* spin, auto setter) {
    onEdit(spin, &QDoubleSpinBox::valueChanged, setter);
  };
  const auto check = [onEdit](QCheckBox* box, auto setter) {
    onEdit(box, &QCheckBox::toggled, setter);
  };
  const auto integer = [onEdit](QSpinBox* spin, auto setter) {
    onEdit(spin, &QSpinBox::valueChanged, setter);
  };
  const auto text = [onEdit](QComboBox* combo, auto setter) {
    onEdit(combo, &QComboBox::currentTextChanged,
           [setter](const QString& t) { setter(t.toStdString()); });
  };
  number(m_learningRate, [opt](double v) { opt->learning_rate = v; });
  connect(m_removeSchedule, &QPushButton::clicked, this, [this, opt] {
    if (!opt->schedule) return;
    const ScheduleSpec& s = *opt->schedule;
    opt->learning_rate = s.class_name == "PiecewiseConstantDecay" && !s.values.empty()
                             ? s.values.front()
                             : s.initial_learning_rate;
    opt->schedule.reset();
    fillOptimizer();
    edited();
  });
  number(m_momentum, [opt](double v) { opt->momentum = v; });
  check(m_nesterov, [opt](bool on) { opt->nesterov = on; });
  number(m_beta1, [opt](double v) { opt->beta_1 = v; });
  number(m_beta2, [opt](double v) { opt->beta_2 = v; });
  number(m_rho, [opt](double v) { opt->rho = v; });
  number(m_epsilon, [opt](double v) { opt->epsilon = v; });
  check(m_amsgrad, [opt](bool on) { opt->amsgrad = on; });
  check(m_centered, [opt](bool on) { opt->centered = on; });
  number(m_initialAccumulator, [opt](double v) { opt->initial_accumulator_value = v; });
  number(m_weightDecay, [opt](double v) { opt->weight_decay = v; });
  connectOptional(m_clipnormSet, m_clipnorm, &OptimizerSpec::clipnorm);
  connectOptional(m_clipvalueSet, m_clipvalue, &OptimizerSpec::clipvalue);
  connectOptional(m_globalClipnormSet, m_globalClipnorm, &OptimizerSpec::global_clipnorm);

  LossSpec* loss = &m_compile.loss;
  text(m_loss, [loss](std::string name) { loss->name = std::move(name); });
  check(m_fromLogits, [loss](bool on) { loss->from_logits = on; });
  number(m_delta, [loss](double v) { loss->delta = v; });
  connect(m_metrics, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    if (m_filling) return;
    const std::string name = item->text().toStdString();
    std::vector<std::string>& metrics = m_compile.metrics;
    if (item->checkState() == Qt::Checked) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) metrics.push_back(name);
    } else {
      metrics.erase(std::remove(metrics.begin(), metrics.end(), name), metrics.end());
    }
    edited();
  });

  integer(m_epochs, [this](int v) { m_fit.epochs = v; });
  integer(m_batchSize, [this](int v) { m_fit.batch_size = v; });
  check(m_shuffle, [this](bool on) { m_fit.shuffle = on; });
  check(m_seedSet, [this](bool on) {
    m_seedValue->setEnabled(on);
    m_seed = on ? std::optional<uint64_t>(m_seedValue->value()) : std::nullopt;
  });
  integer(m_seedValue, [this](int v) {
    if (m_seedSet->isChecked()) m_seed = static_cast<uint64_t>(v);
  });

  check(m_esCheck, [this](bool on) { m_esOn = on; });
  // A new monitor takes mode "auto" (Keras infers min or max from its name): a file's "max" for
  // val_accuracy must not carry over to val_loss.
  text(m_esMonitor, [this](std::string monitor) {
    m_es.monitor = std::move(monitor);
    m_es.mode = "auto";
    showFromFile();
  });
  // Patience and min_delta are written (with their "set" twins) only once edited, so a file's
  // unset values stay unset.
  integer(m_esPatience, [this](int v) { m_es.patience = *(m_es.patience_set = v); });
  number(m_esMinDelta, [this](double v) { m_es.min_delta = *(m_es.min_delta_set = v); });
  check(m_esRestore, [this](bool on) { m_es.restore_best_weights = on; });
  check(m_rlrCheck, [this](bool on) { m_rlrOn = on; });
  text(m_rlrMonitor, [this](std::string monitor) {
    m_rlr.monitor = std::move(monitor);
    m_rlr.mode = "auto";
    showFromFile();
  });
  number(m_rlrFactor, [this](double v) { m_rlr.factor = v; });
  integer(m_rlrPatience, [this](int v) { m_rlr.patience = *(m_rlr.patience_set = v); });
  number(m_rlrMinLr, [this](double v) { m_rlr.min_lr = v; });
}

void TrainingPanel::setSpec(const CompileOptions& compile, const FitOptions& fit,
                            std::optional<uint64_t> seed) {
  m_compile = compile;
  m_fit = fit;
  m_seed = seed;
  m_esIndex = -1;
  m_rlrIndex = -1;
  m_es = CallbackSpec{.class_name = "EarlyStopping"};
  m_rlr = CallbackSpec{.class_name = "ReduceLROnPlateau"};
  for (int i = 0; i < static_cast<int>(fit.callbacks.size()); ++i) {
    const CallbackSpec& cb = fit.callbacks[i];
    if (cb.class_name == "EarlyStopping" && m_esIndex < 0) {
      m_esIndex = i;
      m_es = cb;
    } else if (cb.class_name == "ReduceLROnPlateau" && m_rlrIndex < 0) {
      m_rlrIndex = i;
      m_rlr = cb;
    }
  }
  m_esOn = m_esIndex >= 0;
  m_rlrOn = m_rlrIndex >= 0;

  m_filling = true;
  setComboText(m_optimizer, QString::fromStdString(compile.optimizer.class_name));
  setComboText(m_loss, QString::fromStdString(compile.loss.name));
  m_fromLogits->setChecked(compile.loss.from_logits);
  m_delta->setValue(compile.loss.delta);
  m_epochs->setValue(fit.epochs);
  m_batchSize->setValue(fit.batch_size);
  m_shuffle->setChecked(fit.shuffle);
  m_seedSet->setChecked(seed.has_value());
  m_seedValue->setValue(static_cast<int>(std::min<uint64_t>(seed.value_or(0), kMaxSeed)));
  m_seedValue->setEnabled(seed.has_value());
  m_filling = false;
  fillOptimizer();
  fillMetrics();
  fillCallbacks();
}

void TrainingPanel::fillOptimizer() {
  m_filling = true;
  const OptimizerSpec& o = m_compile.optimizer;
  const bool adamw = o.class_name == "AdamW";
  setComboText(m_optimizer, QString::fromStdString(o.class_name));
  m_learningRate->setValue(o.learning_rate.value_or(defaultLearningRate(o.class_name)));
  if (o.schedule) {
    m_schedule->setText(
        tr("%1 (from file): %2")
            .arg(QString::fromStdString(o.schedule->class_name), scheduleText(*o.schedule)));
    m_schedule->setToolTip(m_schedule->text());
  }
  m_momentum->setValue(o.momentum);
  m_nesterov->setChecked(o.nesterov);
  m_beta1->setValue(o.beta_1);
  m_beta2->setValue(o.beta_2);
  m_rho->setValue(o.rho);
  m_epsilon->setValue(o.epsilon);
  m_amsgrad->setChecked(o.amsgrad);
  m_centered->setChecked(o.centered);
  m_initialAccumulator->setValue(o.initial_accumulator_value);
  m_weightDecay->setValue(o.weight_decay.value_or(adamw ? 0.004 : 0.0));
  const auto optional = [](QCheckBox* check, NumberSpinBox* spin, std::optional<double> v) {
    check->setChecked(v.has_value());
    spin->setValue(v.value_or(1.0));
    spin->setEnabled(v.has_value());
  };
  optional(m_clipnormSet, m_clipnorm, o.clipnorm);
  optional(m_clipvalueSet, m_clipvalue, o.clipvalue);
  optional(m_globalClipnormSet, m_globalClipnorm, o.global_clipnorm);
  m_filling = false;
  updateRows();
  validate();
}

void TrainingPanel::fillMetrics() {
  m_filling = true;
  m_metrics->clear();
  QStringList names = standardMetricNames();
  for (const std::string& m : m_compile.metrics) {
    const QString name = QString::fromStdString(m);
    if (!names.contains(name)) names << name;  // a name from the file, e.g. "mean_squared_error"
  }
  for (const QString& name : names) {
    auto* item = new QListWidgetItem(name, m_metrics);
    item->setFlags(m_readOnly ? Qt::ItemIsEnabled : Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
    const bool on = std::find(m_compile.metrics.begin(), m_compile.metrics.end(),
                              name.toStdString()) != m_compile.metrics.end();
    item->setCheckState(on ? Qt::Checked : Qt::Unchecked);
  }
  const int rowHeight = std::max(m_metrics->sizeHintForRow(0), 1);
  m_metrics->setFixedHeight(rowHeight * m_metrics->count() + 2 * m_metrics->frameWidth() + 2);
  m_filling = false;
  validate();
}

void TrainingPanel::setValidationSplit(double fraction) {
  if (fraction == m_validationSplit) return;
  m_validationSplit = fraction;
  validate();
}

void TrainingPanel::showFromFile() {
  const auto num = [](double v) { return QString::number(v, 'g', 6); };
  QStringList es, rlr;
  if (m_es.mode != "auto") es << tr("mode %1").arg(QString::fromStdString(m_es.mode));
  if (m_es.baseline) es << tr("baseline %1").arg(num(*m_es.baseline));
  if (m_es.start_from_epoch != 0) es << tr("start_from_epoch %1").arg(m_es.start_from_epoch);
  if (m_rlr.mode != "auto") rlr << tr("mode %1").arg(QString::fromStdString(m_rlr.mode));
  if (m_rlr.min_delta_set) rlr << tr("min_delta %1").arg(num(*m_rlr.min_delta_set));
  if (m_rlr.cooldown != 0) rlr << tr("cooldown %1").arg(m_rlr.cooldown);
  m_esMore->setText(tr("Also from file: %1").arg(es.join(QStringLiteral(", "))));
  m_rlrMore->setText(tr("Also from file: %1").arg(rlr.join(QStringLiteral(", "))));
  m_callbackForm->setRowVisible(m_esMore, m_esOn && !es.isEmpty());
  m_callbackForm->setRowVisible(m_rlrMore, m_rlrOn && !rlr.isEmpty());
  // Red when Epochs leaves no epoch to run (fit() refuses initial_epoch >= epochs).
  const bool runsNothing = m_fit.initial_epoch >= m_fit.epochs;
  m_initialEpoch->setText(runsNothing
                              ? tr("initial_epoch %1 from the file needs at least %2 epochs")
                                    .arg(m_fit.initial_epoch)
                                    .arg(m_fit.initial_epoch + 1)
                              : tr("Starts at epoch %1 (initial_epoch %2 from file)")
                                    .arg(m_fit.initial_epoch + 1)
                                    .arg(m_fit.initial_epoch));
  m_initialEpoch->setStyleSheet(runsNothing ? QStringLiteral("color: #c62828;")
                                            : QStringLiteral("color: palette(mid);"));
  m_initialEpoch->setVisible(m_fit.initial_epoch > 0);
}

void TrainingPanel::fillCallbacks() {
  m_filling = true;
  m_esCheck->setChecked(m_esOn);
  setComboText(m_esMonitor, QString::fromStdString(m_es.monitor));
  m_esPatience->setValue(m_es.patience_set.value_or(m_es.patience));
  m_esMinDelta->setValue(m_es.min_delta_set.value_or(m_es.min_delta));
  m_esRestore->setChecked(m_es.restore_best_weights);
  m_rlrCheck->setChecked(m_rlrOn);
  setComboText(m_rlrMonitor, QString::fromStdString(m_rlr.monitor));
  m_rlrFactor->setValue(m_rlr.factor);
  m_rlrPatience->setValue(m_rlr.patience_set.value_or(kRlrPatience));
  m_rlrMinLr->setValue(m_rlr.min_lr);
  QStringList others;
  for (int i = 0; i < static_cast<int>(m_fit.callbacks.size()); ++i) {
    if (i != m_esIndex && i != m_rlrIndex)
      others << QString::fromStdString(m_fit.callbacks[i].class_name);
  }
  m_otherCallbacks->setText(tr("Also from file: %1").arg(others.join(QStringLiteral(", "))));
  updateRows();
  m_callbackForm->setRowVisible(m_otherCallbacks, !others.isEmpty());
  m_filling = false;
  validate();
}

void TrainingPanel::updateRows() {
  const OptimizerSpec& o = m_compile.optimizer;
  const std::string& c = o.class_name;
  const bool adam = c == "Adam" || c == "AdamW";
  m_optForm->setRowVisible(m_learningRate, !o.schedule.has_value());
  m_optForm->setRowVisible(m_scheduleRow, o.schedule.has_value());
  m_optForm->setRowVisible(m_momentum, c == "SGD" || c == "RMSprop");
  m_optForm->setRowVisible(m_nesterov, c == "SGD");
  m_optForm->setRowVisible(m_beta1, adam);
  m_optForm->setRowVisible(m_beta2, adam);
  m_optForm->setRowVisible(m_amsgrad, adam);
  m_optForm->setRowVisible(m_epsilon, c != "SGD");
  m_optForm->setRowVisible(m_rho, c == "RMSprop");
  m_optForm->setRowVisible(m_centered, c == "RMSprop");
  m_optForm->setRowVisible(m_initialAccumulator, c == "Adagrad");
  const std::string& loss = m_compile.loss.name;
  m_lossForm->setRowVisible(m_fromLogits, loss.find("crossentropy") != std::string::npos);
  m_lossForm->setRowVisible(m_delta, loss == "huber");
  for (QWidget* w : {static_cast<QWidget*>(m_esMonitor), static_cast<QWidget*>(m_esPatience),
                     static_cast<QWidget*>(m_esMinDelta), static_cast<QWidget*>(m_esRestore)}) {
    m_callbackForm->setRowVisible(w, m_esOn);
  }
  for (QWidget* w : {static_cast<QWidget*>(m_rlrMonitor), static_cast<QWidget*>(m_rlrFactor),
                     static_cast<QWidget*>(m_rlrPatience), static_cast<QWidget*>(m_rlrMinLr)}) {
    m_callbackForm->setRowVisible(w, m_rlrOn);
  }
  showFromFile();
}

void TrainingPanel::validate() {
  m_issues.clear();
  const OptimizerSpec& o = m_compile.optimizer;
  const int clips = int(o.clipnorm.has_value()) + int(o.clipvalue.has_value()) +
                    int(o.global_clipnorm.has_value());
  if (clips > 1) {
    m_issues.push_back({QStringLiteral("clip"),
                        tr("Only one of clipnorm, clipvalue and global_clipnorm can be set."),
                        true});
  }
  const std::string& loss = m_compile.loss.name;
  bool accuracyMetric = false;
  for (const std::string& m : m_compile.metrics) {
    const QString name = QString::fromStdString(m);
    const QString lower = name.toLower();
    accuracyMetric = accuracyMetric || lower == QLatin1String("acc") || lower.contains("accuracy");
    if (!isKnownMetric(name)) {
      m_issues.push_back({QStringLiteral("metrics"),
                          tr("Unknown metric \"%1\"; untick it or pick one of the list.").arg(name),
                          true});
    } else if (loss == "sparse_categorical_crossentropy" &&
               (lower == QLatin1String("precision") || lower == QLatin1String("recall"))) {
      m_issues.push_back(
          {QStringLiteral("metrics"),
           tr("%1 needs one target column per output unit, but sparse_categorical_crossentropy "
              "trains on class labels; use categorical_crossentropy with one-hot targets.")
               .arg(name),
           true});
    } else if (loss == "categorical_crossentropy" &&
               (name == QLatin1String("sparse_categorical_accuracy") ||
                name == QLatin1String("SparseCategoricalAccuracy"))) {
      m_issues.push_back(
          {QStringLiteral("metrics"),
           tr("%1 needs integer class labels, but categorical_crossentropy trains on one-hot "
              "targets; use categorical_accuracy or accuracy.")
               .arg(name),
           true});
    }
  }
  const auto monitorCheck = [&](bool on, const CallbackSpec& cb, const QString& field,
                                const QString& what) {
    const QString monitor = QString::fromStdString(cb.monitor);
    if (on && monitor.contains(QLatin1String("acc")) && !accuracyMetric) {
      m_issues.push_back(
          {field,
           tr("%1 watches %2, but no accuracy metric is selected, so it will never act.")
               .arg(what, monitor),
           false});
    } else if (on && monitor.startsWith(QLatin1String("val_")) && !(m_validationSplit > 0.0)) {
      m_issues.push_back(
          {field,
           tr("%1 watches %2, which exists only with a validation split (Data tab), so it "
              "will never act.")
               .arg(what, monitor),
           false});
    }
  };
  if (m_fit.initial_epoch > 0 && m_fit.initial_epoch >= m_fit.epochs)
    m_issues.push_back({QStringLiteral("epochs"),
                        tr("initial_epoch %1 from the file needs at least %2 epochs")
                            .arg(m_fit.initial_epoch)
                            .arg(m_fit.initial_epoch + 1),
                        true});
  monitorCheck(m_esOn, m_es, QStringLiteral("es_monitor"), tr("Early stopping"));
  monitorCheck(m_rlrOn, m_rlr, QStringLiteral("rlr_monitor"), tr("Reducing the learning rate"));

  const auto show = [&](QLabel* label, const QString& field, QWidget* tipTarget) {
    QStringList texts;
    bool error = false;
    for (const TrainingIssue& issue : m_issues) {
      if (issue.field != field) continue;
      texts << issue.text;
      error = error || issue.error;
    }
    label->setText(texts.join(QLatin1Char('\n')));
    label->setStyleSheet(error ? QStringLiteral("color: #c62828;")
                               : QStringLiteral("color: #e65100;"));
    label->setVisible(!texts.isEmpty());
    if (!tipTarget->property("baseToolTip").isValid())
      tipTarget->setProperty("baseToolTip", tipTarget->toolTip());
    tipTarget->setToolTip(texts.isEmpty() ? tipTarget->property("baseToolTip").toString()
                                          : texts.join(QLatin1Char('\n')));
  };
  show(m_clipIssue, QStringLiteral("clip"), m_clipnorm->parentWidget());
  show(m_metricsIssue, QStringLiteral("metrics"), m_metrics);
  show(m_esIssue, QStringLiteral("es_monitor"), m_esMonitor);
  show(m_rlrIssue, QStringLiteral("rlr_monitor"), m_rlrMonitor);
  m_optForm->setRowVisible(m_clipIssue, !m_clipIssue->text().isEmpty());
  m_lossForm->setRowVisible(m_metricsIssue, !m_metricsIssue->text().isEmpty());
  m_callbackForm->setRowVisible(m_esIssue, m_esOn && !m_esIssue->text().isEmpty());
  m_callbackForm->setRowVisible(m_rlrIssue, m_rlrOn && !m_rlrIssue->text().isEmpty());
}

void TrainingPanel::edited() {
  updateRows();
  validate();
  emit changed();
}

FitOptions TrainingPanel::fitOptions() const {
  FitOptions out = m_fit;
  out.callbacks.clear();
  for (int i = 0; i < static_cast<int>(m_fit.callbacks.size()); ++i) {
    if (i == m_esIndex) {
      if (m_esOn) out.callbacks.push_back(m_es);
    } else if (i == m_rlrIndex) {
      if (m_rlrOn) out.callbacks.push_back(m_rlr);
    } else {
      out.callbacks.push_back(m_fit.callbacks[i]);
    }
  }
  if (m_esIndex < 0 && m_esOn) out.callbacks.push_back(m_es);
  if (m_rlrIndex < 0 && m_rlrOn) out.callbacks.push_back(m_rlr);
  return out;
}

QString TrainingPanel::errorText() const {
  for (const TrainingIssue& issue : m_issues) {
    if (issue.error) return issue.text;
  }
  return {};
}

void TrainingPanel::setReadOnly(bool readOnly) {
  m_readOnly = readOnly;
  for (QAbstractSpinBox* spin : findChildren<QAbstractSpinBox*>()) spin->setReadOnly(readOnly);
  for (QComboBox* combo : findChildren<QComboBox*>()) combo->setEnabled(!readOnly);
  for (QCheckBox* check : findChildren<QCheckBox*>()) check->setEnabled(!readOnly);
  m_removeSchedule->setEnabled(!readOnly);
  for (int i = 0; i < m_metrics->count(); ++i) {
    QListWidgetItem* item = m_metrics->item(i);
    item->setFlags(readOnly ? Qt::ItemIsEnabled : Qt::ItemIsEnabled | Qt::ItemIsUserCheckable);
  }
}

}  // namespace fitbench
