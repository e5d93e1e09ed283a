// The decision-boundary view (TensorFlow Playground's output plot): the latest DecisionGrid as a
// heatmap (binary: orange / white / blue by P(class 1); multiclass: the class colour, stronger
// where the model is surer; regression on 2 features: the ramp over the targets' range) or, for
// one feature, the fitted curve; the data's points on top, axes, a legend, an "Epoch N" caption
// and a "Show validation points" check box. Keeps its own copies. Widget; UI thread only.
#pragma once

#include <QRect>
#include <QString>
#include <QWidget>

#include "ui/rehearsal/decision_grid.h"

class QCheckBox;

namespace fitbench {

class DecisionView : public QWidget {
  Q_OBJECT
 public:
  explicit DecisionView(QWidget* parent = nullptr);
  ~DecisionView() override;

  // The points: the data the model sees; rows from validationStart on are validation rows.
  void setData(const Matrix& x, const Matrix& y, Index validationStart,
               const QStringList& featureNames = {}, const QString& targetName = {});
  // The latest grid; its points replace the current ones when they are another copy. A grid of
  // kind kNone shows its reason instead of a plot.
  void setGrid(const DecisionGridResult& grid);
  // Back to the empty state (no grid, no points).
  void clear();
  // Why the experiment as set up cannot be drawn (planDecisionGrid's reason: "The model has 4
  // features; the decision boundary needs 2."), shown until a grid arrives; "" when it can be.
  void setSetupReason(const QString& reason);

  bool showValidation() const;
  void setShowValidation(bool show);

  // What is shown: the caption ("Epoch 3", "" without a grid), the centred message ("" when a
  // plot is drawn), the points drawn, and the plot's rectangle in this widget's coordinates.
  QString caption() const;
  QString message() const;
  int visiblePointCount() const;
  QRect plotRect() const;

  // The Playground's class colours: 0 orange, 1 blue, then Tableau 10's others.
  static QColor classColor(int k);
  // The heatmap ramp: orange (t = 0) through white (t = 0.5) to blue (t = 1), at most 80% of
  // the way from white to the class colour so the points stand out.
  static QColor heatColor(double t);
  // A multiclass cell: class k's colour over white with an opacity that grows with confidence
  // from 0.15 (confidence 1 / classes) to 0.8 (confidence 1).
  static QColor classCellColor(int k, double confidence, int classes);

 private:
  class Plot;
  void updateValidationOption();
  void connectSignals();

  Plot* m_plot = nullptr;
  QCheckBox* m_showValidation = nullptr;
};

}  // namespace fitbench
