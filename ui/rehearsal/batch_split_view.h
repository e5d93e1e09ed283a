// The batch split view: how the current global batch and the model are split over the devices.
// One device or DataParallel: the batch as a column of its rows, each shard in its device's
// color with "cpu:1 · 3 rows" beside it (before a run a full batch and the epoch's last partial
// one, during a run the latest step's shards). ModelParallel: the mesh grid, the rows each mesh
// row trains on, and every variable cut into the slices its devices hold (or the layout's
// errors). Keeps its own copies. Widget; UI thread only.
#pragma once

#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "ui/rehearsal/batch_split_plan.h"

namespace fitbench {

class BatchSplitView : public QWidget {
  Q_OBJECT
 public:
  explicit BatchSplitView(QWidget* parent = nullptr);
  ~BatchSplitView() override;

  // What a run will do; shows its planned batches and drops any step shown before.
  void setPlan(const BatchSplitPlan& plan);
  // The latest train step (Callback::on_step_trace's StepTrace, copied to the UI thread).
  void showStep(const StepTrace& step);
  // Back to the empty state (no plan).
  void clear();

  // Rows per device for a batch of `rows` on `devices` devices, as DataParallelExecutor splits
  // it (the first rows % devices devices get one more row).
  static std::vector<int64_t> shardRows(int64_t rows, int devices);

  // What is shown: the caption under the title, the batches drawn with their rows per device
  // (per mesh row for ModelParallel), the variable slices (ModelParallel), the layout's errors
  // as lines of text, and the tooltip at a point of the widget.
  QString caption() const { return m_caption; }
  // Whose statistics BatchNormalization uses on these devices, under the caption ("" for none).
  QString statisticsNote() const { return batchsplit::statisticsNote(m_plan); }
  const std::vector<BatchSplit>& batches() const { return m_batches; }
  const std::vector<VariableSlice>& slices() const { return m_slices; }
  QStringList errorLines() const;
  QString toolTipAt(const QPoint& pos) const;

  QSize sizeHint() const override;
  bool hasHeightForWidth() const override { return true; }
  int heightForWidth(int width) const override;

 protected:
  void paintEvent(QPaintEvent* event) override;
  bool event(QEvent* event) override;

 private:
  class Canvas;
  // Lays the view out for a width x height widget (height 0: as tall as it likes), drawing on the
  // canvas's painter if it has one; returns the height used.
  int render(Canvas& canvas, int width, int height) const;
  int renderBatches(Canvas& canvas, int y, int width, int height) const;
  int renderMesh(Canvas& canvas, int y, int width) const;
  int renderVariables(Canvas& canvas, int y, int width) const;

  bool m_hasPlan = false;
  BatchSplitPlan m_plan;
  MeshPlacement m_mesh;
  QString m_caption;
  std::vector<BatchSplit> m_batches;
  std::vector<VariableSlice> m_slices;
};

}  // namespace fitbench
