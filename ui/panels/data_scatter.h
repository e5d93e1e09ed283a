// The data panel's preview: a scatter plot (drawn with QPainter) of two columns chosen in combo
// boxes, points colored by class or on a color ramp for a real-valued target, validation rows
// hollow, and a one-line summary below; also draws the generator thumbnails. Keeps its own copy
// of the data. Widget; UI thread only.
#pragma once

#include <QPixmap>
#include <QString>
#include <QWidget>

#include "core/data/dataset.h"

class QComboBox;
class QLabel;

namespace fitbench {

class DataScatter : public QWidget {
  Q_OBJECT
 public:
  // More rows than this are thinned to evenly spaced rows so a redraw stays fast.
  static constexpr Index kMaxPoints = 5000;

  explicit DataScatter(QWidget* parent = nullptr);
  ~DataScatter() override;

  // Shows `data`. classCount > 0: the class (a class index in one target column, or the largest
  // of several one-hot columns) picks the color; 0: the first target's value picks a color on a
  // ramp. Rows from `validationStart` on are drawn hollow (data.size() for none). The chosen axes
  // are kept by name; otherwise they are the first two features (the first feature and the first
  // target when there is one feature).
  void setData(const Dataset& data, int classCount, Index validationStart);
  void clear();
  // The plotted columns: 0 .. features-1 are the features, then the targets.
  void setAxes(int xColumn, int yColumn);

  int pointCount() const;
  int validationPointCount() const;
  QString xTitle() const;
  QString yTitle() const;
  QString summary() const;

  // Class k's color (10 distinct colors, then repeated); class 0 orange and 1 blue, as the
  // Playground draws its -1 and +1 labels.
  static QColor classColor(int k);
  // The regression ramp, orange (t = 0) through light grey to blue (t = 1).
  static QColor rampColor(double t);
  // A size x size picture of `data`'s first two columns (the first feature and the target when
  // there is one feature), without axes.
  static QPixmap thumbnail(const Dataset& data, int classCount, int size);

 private:
  class Plot;

  void connectSignals();
  void fillAxisChoices();
  void updateSummary();

  QComboBox* m_xAxis = nullptr;
  QComboBox* m_yAxis = nullptr;
  Plot* m_plot = nullptr;
  QLabel* m_summary = nullptr;
};

}  // namespace fitbench
