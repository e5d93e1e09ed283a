// The device timeline: what each simulated device did in each training step, one lane per device
// with its spans (shard copy, forward, backward, waiting, all-reduce, update) on a time axis and
// its busy / communication / idle share. Live, it scrolls with the latest steps; afterwards (or
// once the user moves the step slider) it shows any kept step. Exports the kept steps as a Chrome
// trace. Keeps its own copies of the steps (TraceStore). Shows measured time (what the threads of
// this computer took) or modelled time (the same steps as the step model predicts them on a
// target, ModelledSteps), says which, and says under the lanes when the measured collectives are
// mostly thread synchronization. Named ...View as core's DeviceTimeline is one device's record
// inside an executor. Widget; UI thread only.
#pragma once

#include <QElapsedTimer>
#include <QStringList>
#include <QWidget>
#include <optional>
#include <vector>

#include "ui/rehearsal/modelled_steps.h"
#include "ui/rehearsal/target_chooser.h"
#include "ui/rehearsal/timeline_canvas.h"
#include "ui/rehearsal/trace_store.h"

class QLabel;
class QPushButton;
class QToolButton;
class QSlider;
class QSpinBox;

namespace fitbench {

class DeviceTimelineView : public QWidget {
  Q_OBJECT
 public:
  static constexpr int kMaxStepsShown = 20;
  using SpanBox = TimelineCanvas::SpanBox;
  // Measured: the spans the devices' threads recorded. Modelled: the step model's.
  enum class TimeMode { kMeasured, kModelled };

  explicit DeviceTimelineView(QWidget* parent = nullptr,
                              size_t capacity = TraceStore::kDefaultCapacity);
  ~DeviceTimelineView() override;

  // A new run on these devices ("cpu:0", "cpu:1", ...): forgets every step.
  void clear(const QStringList& deviceNames);
  // The current setup, before a run: `devices` with a distribution (0: none), which the empty
  // state names ("Press Run to see what each of the 3 devices does in each step.").
  void setReadyDevices(int devices);
  // The steps that arrived since the last call (once per UI tick).
  void appendSteps(const std::vector<StepTrace>& steps);
  // True while the run trains: the view follows the latest steps until the user scrubs. False
  // when it ends: the view stays where it is and the step slider scrubs the kept steps.
  void setLive(bool live);
  // The run is a job of `processes` processes (1: this window's threads): its steps hold process
  // 0's devices, which the mode line says.
  void setProcesses(int processes);
  bool isLive() const { return m_live; }
  const TraceStore& store() const { return m_store; }
  // The run's plan as the step model takes it (none: no modelled time), given when it starts.
  void setModelInput(std::optional<CapacityInput> input);
  void setTimeMode(TimeMode mode);
  TimeMode timeMode() const { return m_mode; }
  // The steps drawn: store() when measured, their modelled copies when modelled.
  const TraceStore& shownStore() const;
  // The target of the modelled time (the Capacity view's choices).
  TargetChooser* targetChooser() const { return m_target; }
  QToolButton* measuredButton() const { return m_measuredButton; }
  QToolButton* modelledButton() const { return m_modelledButton; }
  // What the view shows, in words ("Measured time on this computer ...", "Modelled time: ...").
  QString modeText() const;
  // The sentence under the lanes when the measured collectives are mostly thread
  // synchronization ("" when it is not shown).
  QString synchronizationText() const;
  // Writes the kept steps as a Chrome trace JSON file; false with the reason in *error when
  // there is nothing to write or the file cannot be written.
  bool exportChromeTrace(const QString& path, QString* error) const;

  // How many consecutive steps the view shows (1 .. kMaxStepsShown; the "Steps shown" box).
  int stepsShown() const;
  void setStepsShown(int steps);
  // Shows kept steps index .. index + stepsShown() - 1, as moving the step slider does (index at
  // most size() - stepsShown(): the window stays full).
  void showStep(size_t index);

  // What is shown: the first kept step in view and how many; the first one's caption ("Epoch 1,
  // batch 3 (step 3)"); the empty state's sentence ("" when steps are drawn); the lanes, each
  // lane's usage text; the span boxes drawn (in this widget's coordinates) and the tooltip at a
  // point of this widget.
  size_t firstVisibleStep() const { return m_first; }
  size_t visibleStepCount() const;
  QString caption() const;
  QString message() const;
  int laneCount() const;
  QString laneText(int device) const;
  std::vector<SpanBox> visibleSpans() const;
  QString toolTipAt(const QPoint& pos) const;

  // "12.3 µs" below a millisecond, "1.23 ms" from there.
  static QString durationText(double us);
  // "1,024 bytes", with kB or MB from 10 kB on.
  static QString bytesText(int64_t bytes);

 protected:
  // The canvas's tooltips.
  bool eventFilter(QObject* watched, QEvent* event) override;

 private:
  void connectSignals();
  QString spanToolTip(const SpanBox& box) const;
  void exportWithDialog();
  // The window's first step when following the latest ones.
  size_t latestFirst() const;
  // Pushes the window to the canvas and the controls.
  void updateView();
  // The lanes' usage; while a live run drops old steps, at most twice a second (each refresh
  // then sums every kept step).
  void refreshUsage(bool force);
  // Brings the modelled steps up to the measured ones.
  void syncModelled();
  // The mode's words and the synchronization sentence.
  void updateTexts();

  TraceStore m_store;
  ModelledSteps m_modelled;
  const TraceStore* m_modelledStore = nullptr;  // m_modelled's, once synced
  TimeMode m_mode = TimeMode::kMeasured;
  SynchronizationCheck m_sync;
  QStringList m_names;
  bool m_live = false;
  int m_processes = 1;
  size_t m_first = 0;
  QElapsedTimer m_usageClock;
  TimelineCanvas* m_canvas = nullptr;
  QSpinBox* m_stepsShown = nullptr;
  QSlider* m_slider = nullptr;
  QSpinBox* m_stepSpin = nullptr;
  QPushButton* m_follow = nullptr;
  QPushButton* m_export = nullptr;
  QToolButton* m_measuredButton = nullptr;
  QToolButton* m_modelledButton = nullptr;
  TargetChooser* m_target = nullptr;
  QLabel* m_targetLabel = nullptr;
  QLabel* m_modeLabel = nullptr;
  QLabel* m_syncNote = nullptr;
};

}  // namespace fitbench
