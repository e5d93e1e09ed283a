// The Training panel: the optimizer and its hyperparameters, the loss and metrics (compile()),
// epochs, batch size, shuffle, the global seed and the EarlyStopping / ReduceLROnPlateau callbacks
// (fit()). Owns copies of the options; fields it does not show (verbose, validation_split,
// initial_epoch, other callbacks, a schedule from a file) are kept as given, the ones a user
// should know of named in grey. The callbacks and the checks are in training_panel_checks.cpp.
// Widget; UI thread.
#pragma once

#include <QString>
#include <QVector>
#include <QWidget>
#include <cstdint>
#include <optional>

#include "core/optimizers/optimizer_registry.h"
#include "core/training/fit_options.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QListWidget;
class QListWidgetItem;
class QPushButton;
class QSpinBox;

namespace fitbench {

class NumberSpinBox;

// One validation message about a field ("clip", "metrics", "es_monitor", "rlr_monitor").
struct TrainingIssue {
  QString field;
  QString text;
  bool error = true;  // false: a warning
};

class TrainingPanel : public QWidget {
  Q_OBJECT
 public:
  explicit TrainingPanel(QWidget* parent = nullptr);

  // Shows the options; emits nothing.
  void setSpec(const CompileOptions& compile, const FitOptions& fit, std::optional<uint64_t> seed);
  CompileOptions compileOptions() const { return m_compile; }
  // validation_split is the one setSpec gave (the main window sets it from the Data panel).
  FitOptions fitOptions() const;
  std::optional<uint64_t> seed() const { return m_seed; }
  void setReadOnly(bool readOnly);
  // The Data panel's validation split: a callback watching a val_ value warns without one.
  void setValidationSplit(double fraction);

  // The first error, "" when the options are valid.
  QString errorText() const;
  const QVector<TrainingIssue>& issues() const { return m_issues; }

  // The learning rate the optimizer uses when the spec leaves it unset (Keras's defaults).
  static double defaultLearningRate(const std::string& optimizer);

 signals:
  // The user changed an option.
  void changed();

 private:
  void buildOptimizerBox();
  void buildLossBox();
  void buildFitBox();
  void buildCallbackBoxes();
  void connectSignals();
  void connectOptional(QCheckBox* check, NumberSpinBox* spin,
                       std::optional<double> OptimizerSpec::*);
  void fillOptimizer();
  void fillCallbacks();
  void fillMetrics();
  void updateRows();
  void validate();
  // The file's settings that have no field here, under their callback and under Epochs.
  void showFromFile();
  void edited();

  CompileOptions m_compile;
  FitOptions m_fit;  // callbacks: as given; fitOptions() puts the edited ones in place
  std::optional<uint64_t> m_seed;
  CallbackSpec m_es;   // the edited EarlyStopping
  CallbackSpec m_rlr;  // the edited ReduceLROnPlateau
  int m_esIndex = -1;  // their places in m_fit.callbacks, -1: not in the file
  int m_rlrIndex = -1;
  bool m_esOn = false;
  bool m_rlrOn = false;
  bool m_readOnly = false;
  bool m_filling = false;  // setSpec (or a refresh) is filling the widgets: no changed()
  QVector<TrainingIssue> m_issues;

  QFormLayout* m_optForm = nullptr;
  QComboBox* m_optimizer = nullptr;
  NumberSpinBox* m_learningRate = nullptr;
  QWidget* m_scheduleRow = nullptr;
  QLabel* m_schedule = nullptr;
  QPushButton* m_removeSchedule = nullptr;
  // One row per field of any optimizer's rule (the optimizer registry's), shown for the optimizers
  // that have it: a NumberSpinBox for a number, a QCheckBox for a flag.
  struct RuleRow {
    const OptimizerField* field = nullptr;
    NumberSpinBox* number = nullptr;
    QCheckBox* flag = nullptr;
  };
  QVector<RuleRow> m_ruleRows;
  NumberSpinBox* m_weightDecay = nullptr;
  QCheckBox* m_clipnormSet = nullptr;
  NumberSpinBox* m_clipnorm = nullptr;
  QCheckBox* m_clipvalueSet = nullptr;
  NumberSpinBox* m_clipvalue = nullptr;
  QCheckBox* m_globalClipnormSet = nullptr;
  NumberSpinBox* m_globalClipnorm = nullptr;
  QLabel* m_clipIssue = nullptr;

  QFormLayout* m_lossForm = nullptr;
  QComboBox* m_loss = nullptr;
  QCheckBox* m_fromLogits = nullptr;
  NumberSpinBox* m_delta = nullptr;
  QListWidget* m_metrics = nullptr;
  QLabel* m_metricsIssue = nullptr;

  QSpinBox* m_epochs = nullptr;
  QSpinBox* m_batchSize = nullptr;
  QCheckBox* m_shuffle = nullptr;
  QCheckBox* m_seedSet = nullptr;
  QSpinBox* m_seedValue = nullptr;

  QFormLayout* m_callbackForm = nullptr;
  QCheckBox* m_esCheck = nullptr;
  QComboBox* m_esMonitor = nullptr;
  QSpinBox* m_esPatience = nullptr;
  NumberSpinBox* m_esMinDelta = nullptr;
  QCheckBox* m_esRestore = nullptr;
  QLabel* m_esIssue = nullptr;
  QCheckBox* m_rlrCheck = nullptr;
  QComboBox* m_rlrMonitor = nullptr;
  NumberSpinBox* m_rlrFactor = nullptr;
  QSpinBox* m_rlrPatience = nullptr;
  NumberSpinBox* m_rlrMinLr = nullptr;
  QLabel* m_rlrIssue = nullptr;
  QLabel* m_otherCallbacks = nullptr;
  // The file's settings of each callback that this panel has no field for ("mode max, ...").
  QLabel* m_esMore = nullptr;
  QLabel* m_rlrMore = nullptr;
  QLabel* m_initialEpoch = nullptr;  // initial_epoch from the file, under Epochs
  double m_validationSplit = 0.0;
};

// The metric names the panel offers (each accepted by core/metrics make_metric).
QStringList standardMetricNames();

}  // namespace fitbench
