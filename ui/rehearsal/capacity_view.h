// The Capacity view: will the experiment fit on a target's devices, and how fast will it step?
// A stacked bar per device (weights, gradients, optimizer slots, activations, buffers) with a
// line at the target's memory per device and the verdict; the predicted step split into compute
// and communication with its collectives, samples/s and scaling efficiency, and a run's measured
// median step beside it; the predicted samples/s against the device count for DataParallel and
// meshes. A target chooser (presets and target files) and what-if factors. Each change of the
// experiment is planned after a short pause on a thread of its own (plan_capacity loads the
// data); stale results are dropped. The numbers are core's (core/run/capacity_report.h).
// UI thread only.
#pragma once

#include <QWidget>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "ui/rehearsal/capacity_job.h"
#include "ui/rehearsal/target_chooser.h"

class QBarSet;
class QChart;
class QChartView;
class QComboBox;
class QGridLayout;
class QLabel;
class QTimer;

namespace fitbench {

class NumberSpinBox;

class CapacityView : public QWidget {
  Q_OBJECT
 public:
  explicit CapacityView(QWidget* parent = nullptr);
  ~CapacityView() override;

  // The experiment as it is now (`devices`: the count a run would use, `baseDir`: where its
  // relative paths start); planned again after a short pause.
  void setExperiment(const ExperimentSpec& spec, int devices, const QString& baseDir);
  // Reads a target file and chooses it; on failure the view says why (and returns false), the
  // target stays.
  bool setTargetFile(const QString& path);
  // Chooses a preset or an opened file by its name; false if there is none.
  bool selectTarget(const QString& name);
  const Target& target() const { return m_target; }

  // Forgets the last run's measured steps (another experiment was opened).
  void clearMeasured();
  // A run began (`label`: "run 2 (8 devices, DataParallel)"): its steps' wall times follow.
  void runStarted(const QString& label);
  // Wall times of the run's steps (seconds, in order, from the first).
  void addMeasuredSteps(const QVector<double>& seconds);
  // The median measured step of the last run (its first step, a warm-up, left out), if any.
  std::optional<double> measuredStep() const;

  // The last result drawn (or being drawn), for tests and the window.
  const CapacityResult& result() const { return m_result; }
  // Whether a plan is pending or being computed.
  bool isBusy() const;

  TargetChooser* targetCombo() const { return m_targetCombo; }
  NumberSpinBox* batchFactor() const { return m_batchFactor; }
  NumberSpinBox* widthFactor() const { return m_widthFactor; }
  NumberSpinBox* devicesFactor() const { return m_devicesFactor; }
  QChart* memoryChart() const { return m_memoryChart; }
  QChart* stepChart() const { return m_stepChart; }
  QChart* scalingChart() const { return m_scalingChart; }
  QString verdictText() const;
  QString errorText() const;
  // Why the last target file could not be read ("file: key: sentence"), or "".
  QString targetErrorText() const;
  QString measuredText() const;
  // The plan's notes and warnings, a line each ("" for none).
  QString noticesText() const;
  QString collectivesText() const;

 signals:
  // A result was drawn (or an error shown).
  void updated();

 protected:
  void resizeEvent(QResizeEvent* event) override;

 private:
  void connectSignals();
  void onTargetChosen();
  void showTargetError(const QString& sentence);
  void schedule();
  void startCompute();
  // The planning thread's result is ready (queued from that thread).
  Q_INVOKABLE void takeResult();
  void onComputed(const CapacityResult& result);
  void showResult();
  void drawMemory();
  void drawStep();
  void drawScaling();
  void showMeasured();
  void reflow();

  // The experiment to plan.
  ExperimentSpec m_spec;
  int m_devices = 1;
  QString m_baseDir;
  bool m_haveSpec = false;
  Target m_target;  // the chooser's

  // The planning thread: one plan at a time, joined before the next and when the view ends. It
  // hands its result over in m_ready under m_readyMutex (a std::mutex, so that ThreadSanitizer
  // sees the hand-over) and then queues takeResult(), which carries no data.
  std::thread m_thread;
  std::mutex m_readyMutex;
  std::optional<CapacityResult> m_ready;
  QTimer* m_debounce = nullptr;
  quint64 m_generation = 0;  // requests made
  bool m_computing = false;
  bool m_dirty = false;  // a request came while one was computing
  CapacityResult m_result;

  QString m_runLabel;
  std::vector<double> m_measured;  // the last run's step wall times

  TargetChooser* m_targetCombo = nullptr;
  QLabel* m_targetSource = nullptr;
  QLabel* m_targetError = nullptr;
  QString m_targetErrorSentence;  // read_target's, shown in m_targetError
  NumberSpinBox* m_batchFactor = nullptr;
  NumberSpinBox* m_widthFactor = nullptr;
  NumberSpinBox* m_devicesFactor = nullptr;
  QLabel* m_summary = nullptr;
  QLabel* m_verdict = nullptr;
  QLabel* m_error = nullptr;
  QLabel* m_notices = nullptr;
  QLabel* m_stepText = nullptr;
  QLabel* m_collectives = nullptr;
  QLabel* m_measuredLabel = nullptr;
  QChart* m_memoryChart = nullptr;
  QChart* m_stepChart = nullptr;
  QChart* m_scalingChart = nullptr;
  QChartView* m_memoryView = nullptr;
  QChartView* m_stepView = nullptr;
  QChartView* m_scalingView = nullptr;
  QWidget* m_memoryBox = nullptr;
  QWidget* m_stepBox = nullptr;
  QWidget* m_stepTexts = nullptr;  // the step's sentence, its collectives, the measured step
  QWidget* m_scalingBox = nullptr;
  QGridLayout* m_grid = nullptr;
  int m_columns = 0;
};

}  // namespace fitbench
