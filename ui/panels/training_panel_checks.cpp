// TrainingPanel's callbacks (EarlyStopping and ReduceLROnPlateau boxes, the file's settings
// without a field) and its checks (validate()). The other boxes: training_panel.cpp.
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QListWidget>
#include <QVBoxLayout>

#include "core/losses/loss_registry.h"
#include "core/metrics/metric_registry.h"
#include "core/training/callback_registry.h"
#include "core/training/callbacks.h"
#include "ui/panels/training_panel.h"
#include "ui/panels/training_panel_widgets.h"

namespace fitbench {

using namespace training_panel;

namespace {

// The registry's entry of a metric make_metric accepts, null for an unknown name.
const MetricInfo* metricInfo(const QString& name) { return find_metric(name.toStdString()); }

// ReduceLROnPlateau's patience when the file leaves it unset: the callback registry's default.
int defaultRlrPatience() {
  const CallbackInfo* info = find_callback_class(kReduceLROnPlateau);
  const FieldInfo* patience = info != nullptr ? find_field(info->fields, "patience") : nullptr;
  return patience != nullptr ? static_cast<int>(patience->number) : 0;
}

}  // namespace

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
  m_esMinDelta = makeNumber(box, "es_min_delta", -kFloat32Max, kFloat32Max);
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
  m_rlrMinLr = makeNumber(box, "rlr_min_lr", 0.0, kFloat32Max);
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
  m_rlrPatience->setValue(m_rlr.patience_set.value_or(defaultRlrPatience()));
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
  const LossInfo* lossInfo = find_loss(m_compile.loss.name);
  const LossTargets targets = lossInfo != nullptr ? lossInfo->targets : LossTargets::kValues;
  bool accuracyMetric = false;
  for (const std::string& m : m_compile.metrics) {
    const QString name = QString::fromStdString(m);
    const QString lower = name.toLower();
    accuracyMetric = accuracyMetric || lower == QLatin1String("acc") || lower.contains("accuracy");
    const MetricInfo* metric = metricInfo(name);
    if (metric == nullptr) {
      m_issues.push_back({QStringLiteral("metrics"),
                          tr("Unknown metric \"%1\"; untick it or pick one of the list.").arg(name),
                          true});
    } else if (targets == LossTargets::kSparse &&
               metric->targets == MetricTargets::kColumnPerUnit) {
      m_issues.push_back(
          {QStringLiteral("metrics"),
           tr("%1 needs one target column per output unit, but sparse_categorical_crossentropy "
              "trains on class labels; use categorical_crossentropy with one-hot targets.")
               .arg(name),
           true});
    } else if (targets == LossTargets::kOneHot && metric->targets == MetricTargets::kSparse) {
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
    // EarlyStopping's "auto" needs the loss or a compiled metric's name (core/training/callbacks
    // monitor_improves_upward); Run would refuse it, as Keras raises after the first epoch.
    if (on && cb.class_name == kEarlyStopping &&
        !monitor_improves_upward(cb.monitor, cb.mode, m_compile.all_metric_names(),
                                 m_compile.metrics)) {
      m_issues.push_back(
          {field,
           tr("%1 cannot tell whether %2 should go down or up: it is not the loss or a selected "
              "metric.")
               .arg(what, monitor),
           true});
    } else if (on && monitor.contains(QLatin1String("acc")) && !accuracyMetric) {
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

}  // namespace fitbench
