#include "ui/panels/training_panel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
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

#include "core/losses/loss_registry.h"
#include "core/metrics/metric_registry.h"
#include "core/training/callback_registry.h"
#include "ui/common/field_range.h"
#include "ui/common/text_style.h"
#include "ui/panels/layer_editor.h"
#include "ui/panels/training_panel_widgets.h"

namespace fitbench {

using namespace training_panel;

namespace {

// The label of an optimizer field's row; a field without one here shows its Keras name.
QString ruleFieldLabel(std::string_view key) {
  if (key == "momentum") return QObject::tr("Momentum");
  if (key == "nesterov") return QObject::tr("Nesterov momentum");
  if (key == "beta_1") return QObject::tr("Beta 1");
  if (key == "beta_2") return QObject::tr("Beta 2");
  if (key == "rho") return QObject::tr("Rho");
  if (key == "epsilon") return QObject::tr("Epsilon");
  if (key == "amsgrad") return QObject::tr("AMSGrad");
  if (key == "centered") return QObject::tr("Centered");
  if (key == "initial_accumulator_value") return QObject::tr("Initial accumulator");
  return toQString(key);
}

// Whether the optimizer named `name` has the rule field `key`.
bool optimizerHas(const std::string& name, std::string_view key) {
  const OptimizerInfo* info = find_optimizer(name);
  if (info == nullptr) return false;
  for (const OptimizerField& f : info->fields)
    if (f.info.key == key) return true;
  return false;
}

bool lossHas(const std::string& name, std::string_view key) {
  const LossInfo* info = find_loss(name);
  return info != nullptr && find_field(info->fields, key) != nullptr;
}

// A combo box of a registry's names, each with its description as the tooltip.
template <typename Range, typename Name>
QComboBox* makeRegistryCombo(QWidget* parent, const char* objectName, const Range& entries,
                             Name name) {
  QStringList names;
  for (const auto& e : entries) names << toQString(name(e));
  QComboBox* combo = makeCombo(parent, objectName, names);
  int i = 0;
  for (const auto& e : entries) combo->setItemData(i++, toQString(e.description), Qt::ToolTipRole);
  return combo;
}

// A schedule's figures in a line: "from 0.1, ×0.96 every 1000 steps", "from 0.1 to 0 over 1000
// steps", "0.1, then 0.01 after step 1000".
QString scheduleText(const ScheduleSpec& s) {
  const auto num = [](double v) { return QString::number(v, 'g', 6); };
  const auto steps = [&](double n) {
    return n == 1.0 ? QObject::tr("1 step") : QObject::tr("%1 steps").arg(num(n));
  };
  const ScheduleInfo* info = find_schedule(s.class_name);
  const ScheduleShape shape = info != nullptr ? info->shape : ScheduleShape::kPiecewise;
  if (shape == ScheduleShape::kExponential)
    return QObject::tr("from %1, ×%2 every %3%4")
        .arg(num(s.initial_learning_rate), num(s.decay_rate), steps(s.decay_steps),
             s.staircase ? QObject::tr(" (staircase)") : QString());
  if (shape == ScheduleShape::kCosine) {
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

}  // namespace

QStringList standardMetricNames() {
  QStringList names;
  for (const MetricInfo& m : metric_classes()) names << toQString(m.listed);
  return names;
}

double TrainingPanel::defaultLearningRate(const std::string& optimizer) {
  const OptimizerInfo* info = find_optimizer(optimizer);
  return info != nullptr ? info->learning_rate : optimizers().front().learning_rate;
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
  addRangeRows(this);  // a hidden sentence row under each field with a range
  connectSignals();
  setSpec(CompileOptions{}, FitOptions{}, std::nullopt);
}

void TrainingPanel::buildOptimizerBox() {
  auto* box = new QGroupBox(tr("Optimizer"), this);
  m_optForm = new QFormLayout(box);
  m_optimizer = makeRegistryCombo(box, "optimizer", optimizers(),
                                  [](const OptimizerInfo& o) { return o.class_name; });
  m_optForm->addRow(tr("Optimizer"), m_optimizer);
  // What a file may hold (compile_config.cpp): a positive float32.
  m_learningRate = makeNumber(box, "learning_rate", 0.0, kFloat32Max);
  allowRange(m_learningRate, 0.0, kFloat32Max, true);
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

  // Every field of any optimizer's rule, once, in the registry's order; updateRows shows the
  // current optimizer's.
  for (const OptimizerInfo& info : optimizers()) {
    for (const OptimizerField& f : info.fields) {
      const bool seen = std::any_of(m_ruleRows.begin(), m_ruleRows.end(), [&](const RuleRow& r) {
        return r.field->info.key == f.info.key;
      });
      if (seen) continue;
      RuleRow row{&f};
      const std::string key(f.info.key);
      const QString tip =
          QCoreApplication::translate("TrainingPanel", std::string(f.info.description).c_str());
      if (f.flag != nullptr) {
        row.flag = makeCheck(box, key.c_str(), ruleFieldLabel(f.info.key));
        row.flag->setToolTip(tip);
        m_optForm->addRow(QString(), row.flag);
      } else {
        row.number = makeNumber(box, key.c_str(), f.info.lo, f.info.hi);
        row.number->setToolTip(tip);
        m_optForm->addRow(ruleFieldLabel(f.info.key), row.number);
      }
      m_ruleRows.push_back(row);
    }
  }
  m_weightDecay = makeNumber(box, "weight_decay", 0.0, kFloat32Max);
  m_weightDecay->setToolTip(
      tr("Each step shrinks the weights by weight_decay × learning rate. "
         "Unchanged, it is the default: 0.004 for AdamW, none for the "
         "others."));
  m_optForm->addRow(tr("Weight decay"), m_weightDecay);

  const auto clipRow = [&](const char* checkName, const char* spinName, QCheckBox** check,
                           NumberSpinBox** spin, const QString& label, const QString& tip) {
    *check = makeCheck(box, checkName, QString());
    *spin = makeNumber(box, spinName, 0.0, kFloat32Max);
    allowRange(*spin, 0.0, kFloat32Max, true);
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
  m_loss = makeRegistryCombo(box, "loss", loss_classes(), [](const LossInfo& l) { return l.name; });
  m_loss->setToolTip(tr("What training minimizes."));
  m_lossForm->addRow(tr("Loss"), m_loss);
  m_fromLogits = makeCheck(box, "from_logits", tr("From logits"));
  m_fromLogits->setToolTip(
      tr("The model outputs raw scores (a linear last layer); the loss "
         "applies sigmoid or softmax itself, which is more stable."));
  m_lossForm->addRow(QString(), m_fromLogits);
  m_delta = makeNumber(box, "delta", 0.0, kFloat32Max);
  allowRange(m_delta, 0.0, kFloat32Max, true);
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
  m_epochs = makeInteger(box, "epochs", 1, kMaxFitCount);
  m_epochs->setToolTip(tr("Passes over the training data."));
  form->addRow(tr("Epochs"), m_epochs);
  m_initialEpoch = makeFromFileLabel(box, "initial_epoch");
  form->addRow(QString(), m_initialEpoch);
  m_batchSize = makeInteger(box, "batch_size", 1, kMaxFitCount);
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
    const ScheduleInfo* info = find_schedule(s.class_name);
    const bool piecewise = info != nullptr && info->shape == ScheduleShape::kPiecewise;
    opt->learning_rate =
        piecewise && !s.values.empty() ? s.values.front() : s.initial_learning_rate;
    opt->schedule.reset();
    fillOptimizer();
    edited();
  });
  for (const RuleRow& row : m_ruleRows) {
    const OptimizerField* f = row.field;
    if (row.number) number(row.number, [opt, f](double v) { opt->*(f->number) = v; });
    if (row.flag) check(row.flag, [opt, f](bool on) { opt->*(f->flag) = on; });
  }
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
    std::vector<std::string>& names = m_compile.metric_names;  // a file's object names, kept
    names.resize(metrics.size());
    if (item->checkState() == Qt::Checked) {
      if (std::find(metrics.begin(), metrics.end(), name) == metrics.end()) {
        metrics.push_back(name);
        names.emplace_back();
      }
    } else {
      for (size_t i = metrics.size(); i-- > 0;) {
        if (metrics[i] != name) continue;
        metrics.erase(metrics.begin() + static_cast<std::ptrdiff_t>(i));
        names.erase(names.begin() + static_cast<std::ptrdiff_t>(i));
      }
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
  m_es = CallbackSpec{.class_name = std::string(kEarlyStopping)};
  m_rlr = CallbackSpec{.class_name = std::string(kReduceLROnPlateau)};
  for (int i = 0; i < static_cast<int>(fit.callbacks.size()); ++i) {
    const CallbackSpec& cb = fit.callbacks[i];
    if (cb.class_name == kEarlyStopping && m_esIndex < 0) {
      m_esIndex = i;
      m_es = cb;
    } else if (cb.class_name == kReduceLROnPlateau && m_rlrIndex < 0) {
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
  const OptimizerInfo* info = find_optimizer(o.class_name);
  setComboText(m_optimizer, QString::fromStdString(o.class_name));
  m_learningRate->setValue(o.learning_rate.value_or(defaultLearningRate(o.class_name)));
  if (o.schedule) {
    m_schedule->setText(
        tr("%1 (from file): %2")
            .arg(QString::fromStdString(o.schedule->class_name), scheduleText(*o.schedule)));
    m_schedule->setToolTip(m_schedule->text());
  }
  for (const RuleRow& row : m_ruleRows) {
    if (row.number) row.number->setValue(o.*(row.field->number));
    if (row.flag) row.flag->setChecked(o.*(row.field->flag));
  }
  m_weightDecay->setValue(o.weight_decay.value_or(info != nullptr ? info->weight_decay : 0.0));
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

void TrainingPanel::updateRows() {
  const OptimizerSpec& o = m_compile.optimizer;
  const std::string& c = o.class_name;
  m_optForm->setRowVisible(m_learningRate, !o.schedule.has_value());
  m_optForm->setRowVisible(m_scheduleRow, o.schedule.has_value());
  for (const RuleRow& row : m_ruleRows) {
    QWidget* w = row.number ? static_cast<QWidget*>(row.number) : row.flag;
    m_optForm->setRowVisible(w, optimizerHas(c, row.field->info.key));
  }
  const std::string& loss = m_compile.loss.name;
  m_lossForm->setRowVisible(m_fromLogits, lossHas(loss, "from_logits"));
  m_lossForm->setRowVisible(m_delta, lossHas(loss, "delta"));
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
  if (const QString range = rangeError(this); !range.isEmpty()) return range;
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
