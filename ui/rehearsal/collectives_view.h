// The collectives view: teaches ring against naive all-reduce of the gradients on the current
// setup. Side by side, the ring's 2(N-1) steps (a slider, Play at one step a second, previous /
// next, a caption per step) and the naive star through device 0; under them, the cost of one
// all-reduce per algorithm (messages and bytes of the busiest device, bytes on all links, modeled
// link time) and, after a run, the last step's measured collective per device next to the model.
// Keeps its own copies. Widget; UI thread only.
#pragma once

#include <QStringList>
#include <QWidget>

#include "core/distribution/collectives/collectives.h"
#include "core/distribution/trace/trace.h"

class QGroupBox;
class QLabel;
class QSlider;
class QTableWidget;
class QTimer;
class QToolButton;

namespace fitbench {

class CollectivesDiagram;
class CollectiveSchedule;

class CollectivesView : public QWidget {
  Q_OBJECT
 public:
  explicit CollectivesView(QWidget* parent = nullptr);
  ~CollectivesView() override;

  // The devices (1 to 64), the algorithm the run uses, the floats of the gradient all-reduce (the
  // model's trainable parameter count) and the link. A setup that differs from the current one
  // drops the measured step and goes back to ring step 0.
  void setSetup(const QStringList& deviceNames, CollectiveAlgorithm used, int64_t elements,
                const LinkModel& link);
  // A ModelParallel run on a mesh ("2 x 2"; empty for any other strategy): its collectives are
  // not DataParallel's all-reduce, so the view says where to see them instead of drawing it.
  void setModelParallelMesh(const QString& mesh);
  // The last step's measured all-reduce per device (its collective spans), next to the model; the
  // algorithm its spans name is marked as the one used.
  void showMeasured(const StepTrace& trace);
  // Back to the empty state.
  void clear();

  // The ring's steps: 2(N-1) (0 with fewer than two devices); the one shown, 0 (before the first)
  // to ringStepCount(); the caption under the ring.
  int ringStepCount() const;
  int ringStep() const;
  void setRingStep(int step);
  QString ringCaption() const;
  bool isPlaying() const;
  // The message shown instead of the pictures ("" when they are shown).
  QString message() const;
  // What the ring and naive pictures draw.
  const CollectiveSchedule& schedule(CollectiveAlgorithm algorithm) const;

  // The cost table's rows (columns: ring, naive); each cell's Qt::UserRole holds the exact number
  // (messages, bytes, or microseconds; no data for a time the link does not model).
  enum CostRow { kBusiestMessages, kBusiestBytes, kAllLinksBytes, kModeledTime, kCostRows };
  // The measured table's columns (one row per device); Qt::UserRole holds the exact number.
  enum MeasuredColumn { kDevice, kMeasuredTime, kModelTime, kSent, kReceived, kMeasuredColumns };

  // "812 B", "1.3 kB", "24 kB", "1.05 MB" (10^3 steps, as the link's GB/s).
  static QString formatBytes(int64_t bytes);
  // "8.5 µs", "412 µs", "1.23 ms", "2.5 s".
  static QString formatMicroseconds(double us);

 private:
  void connectSignals();
  void rebuild();
  void fillCostTable();
  void fillMeasuredTable();
  void updateStep();
  void setPlaying(bool playing);

  QLabel* m_header = nullptr;
  QLabel* m_message = nullptr;
  QWidget* m_body = nullptr;
  CollectivesDiagram* m_ring = nullptr;
  CollectivesDiagram* m_naive = nullptr;
  QToolButton* m_previous = nullptr;
  QToolButton* m_play = nullptr;
  QToolButton* m_next = nullptr;
  QSlider* m_slider = nullptr;
  QLabel* m_stepLabel = nullptr;
  QLabel* m_ringCaption = nullptr;
  QLabel* m_naiveCaption = nullptr;
  QTableWidget* m_cost = nullptr;
  QLabel* m_linkNote = nullptr;
  QGroupBox* m_measuredBox = nullptr;
  QLabel* m_measuredCaption = nullptr;
  QTableWidget* m_measured = nullptr;
  QTimer* m_timer = nullptr;

  QStringList m_names;
  CollectiveAlgorithm m_used = CollectiveAlgorithm::kRing;
  int64_t m_elements = 0;
  LinkModel m_link;
  bool m_hasSetup = false;
  QString m_modelParallelMesh;
  bool m_hasMeasured = false;
  StepTrace m_trace;
};

}  // namespace fitbench
