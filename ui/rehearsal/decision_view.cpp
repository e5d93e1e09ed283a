// DecisionView: the decision-boundary heatmap or fitted curve with the data on top.

#include "ui/rehearsal/decision_view.h"

#include <QCheckBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QImage>
#include <QLinearGradient>
#include <QPaintEvent>
#include <QPainter>
#include <QPainterPath>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>

#include "ui/common/plot_style.h"

namespace fitbench {
namespace {

using plot::overWhite;
using plot::Range;
using plot::ticks;
QString gridTick(double v) { return plot::tickLabel(v, 3); }
const QColor kUndefinedCell(0xb4, 0xb4, 0xb4);  // a cell whose prediction is NaN

}  // namespace

// The plot: the grid, the points and the painting.
class DecisionView::Plot : public QWidget {
 public:
  Plot() { setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding); }
  QSize sizeHint() const override { return {480, 460}; }

  // Where things go for the current size.
  struct Geometry {
    QRect area;  // the plot's rectangle; empty when there is no room
    Range rx, ry;
    std::vector<double> xTicks, yTicks;
    int yLabelWidth = 0;
  };
  Geometry plotGeometry() const;

  bool hasPlot() const { return grid.kind != DecisionKind::kNone && grid.cols > 0; }
  bool classifier() const {
    return grid.kind == DecisionKind::kBinary || grid.kind == DecisionKind::kMulticlass;
  }
  int classOf(Index row) const;
  QColor pointColor(Index row) const;
  double pointY(Index row) const;
  void rebuildImage();
  int visibleCount() const;
  QString message() const;
  QString caption() const;
  // Cell or curve point i holds no number: the model predicted NaN or infinity there (a run that
  // diverged). Drawn grey, and the curve breaks there.
  bool undefinedAt(size_t i) const;

  DecisionGridResult grid;
  size_t undefinedCount = 0;  // of grid.values
  std::shared_ptr<const DecisionPoints> points;
  QImage image;   // one pixel per grid cell
  Range targets;  // the first target's range (regression colours and the curve's axis)
  bool showValidation = false;
  QString setupReason;  // DecisionView::setSetupReason

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void drawAxes(QPainter& painter, const Geometry& g) const;
  void drawPoints(QPainter& painter, const Geometry& g) const;
  void drawLegend(QPainter& painter, const QRect& row) const;
};

int DecisionView::Plot::classOf(Index row) const {
  const Matrix& y = points->y;
  int k = 0;
  if (y.cols() == 1) {
    k = static_cast<int>(std::lround(y(row, 0)));
  } else if (y.cols() > 1) {
    Index best = 0;
    y.row(row).maxCoeff(&best);
    k = static_cast<int>(best);
  }
  return std::clamp(k, 0, std::max(grid.classes - 1, 0));
}

QColor DecisionView::Plot::pointColor(Index row) const {
  if (classifier()) return classColor(classOf(row));
  if (grid.features == 1 || points->y.cols() == 0) return classColor(1);
  // The full ramp (orange, grey, blue), stronger than the heatmap's so the points stand out.
  const double t = targets.span() > 0.0 ? (points->y(row, 0) - targets.lo) / targets.span() : 0.5;
  const QColor ends[3] = {classColor(0), QColor(0xb0, 0xb0, 0xb0), classColor(1)};
  const int i = t < 0.5 ? 0 : 1;
  const double f = std::clamp(t < 0.5 ? t * 2.0 : (t - 0.5) * 2.0, 0.0, 1.0);
  const auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return QColor(mix(ends[i].red(), ends[i + 1].red()), mix(ends[i].green(), ends[i + 1].green()),
                mix(ends[i].blue(), ends[i + 1].blue()));
}

// The point's height: its second feature, or (one feature) its label or target.
double DecisionView::Plot::pointY(Index row) const {
  if (grid.features == 2) return points->x(row, 1);
  if (points->y.cols() == 0) return 0.0;
  return grid.kind == DecisionKind::kBinary ? classOf(row) : points->y(row, 0);
}

int DecisionView::Plot::visibleCount() const {
  if (!hasPlot() || !points || points->x.cols() < grid.features) return 0;
  const auto n = static_cast<int>(points->x.rows());
  return showValidation ? n : static_cast<int>(std::min<Index>(points->validationStart, n));
}

QString DecisionView::Plot::message() const {
  if (hasPlot()) return {};
  if (!grid.reason.isEmpty()) return grid.reason;
  if (!setupReason.isEmpty()) return setupReason;
  if (points) return DecisionView::tr("The model's predictions appear here after its first epoch.");
  return DecisionView::tr("Run the experiment to see the model's predictions over its data.");
}

QString DecisionView::Plot::caption() const {
  if (!hasPlot()) return {};
  QString text =
      grid.batch >= 0
          ? DecisionView::tr("Epoch %1 · batch %2").arg(grid.epoch + 1).arg(grid.batch + 1)
          : DecisionView::tr("Epoch %1").arg(grid.epoch + 1);
  if (undefinedCount == 0) return text;
  if (undefinedCount == grid.values.size())
    return text + DecisionView::tr(" · every prediction is NaN");
  const double share = 100.0 * static_cast<double>(undefinedCount) / grid.values.size();
  return text + DecisionView::tr(" · NaN in %1% (grey)")
                    .arg(share < 1.0    ? QStringLiteral("<1")
                         : share > 99.0 ? QStringLiteral(">99")
                                        : QString::number(std::lround(share)));
}

bool DecisionView::Plot::undefinedAt(size_t i) const {
  if (!std::isfinite(grid.values[i])) return true;
  return grid.kind == DecisionKind::kMulticlass && i < grid.confidence.size() &&
         !std::isfinite(grid.confidence[i]);
}

void DecisionView::Plot::rebuildImage() {
  image = QImage();
  targets = Range{};
  undefinedCount = 0;
  for (size_t i = 0; i < grid.values.size(); ++i) undefinedCount += undefinedAt(i) ? 1 : 0;
  if (points && points->y.rows() > 0 && points->y.cols() > 0) {
    targets.lo = points->y.col(0).minCoeff();
    targets.hi = points->y.col(0).maxCoeff();
  } else if (undefinedCount < grid.values.size()) {
    bool first = true;
    for (float v : grid.values) {
      if (!std::isfinite(v)) continue;
      targets.lo = first ? v : std::min<double>(targets.lo, v);
      targets.hi = first ? v : std::max<double>(targets.hi, v);
      first = false;
    }
  }
  if (!hasPlot() || grid.values.size() != size_t(grid.cols) * size_t(grid.rows)) return;
  // The 1-feature regression curve has no background; the others colour every cell.
  if (grid.features == 1 && grid.kind == DecisionKind::kRegression) return;
  image = QImage(grid.cols, grid.rows, QImage::Format_RGB32);
  for (int r = 0; r < grid.rows; ++r) {
    auto* line = reinterpret_cast<QRgb*>(image.scanLine(r));
    for (int c = 0; c < grid.cols; ++c) {
      const size_t i = size_t(r) * size_t(grid.cols) + size_t(c);
      const double v = grid.values[i];
      QColor color;
      if (undefinedAt(i))
        color = kUndefinedCell;
      else if (grid.kind == DecisionKind::kBinary)
        color = heatColor(v);
      else if (grid.kind == DecisionKind::kMulticlass)
        color = classCellColor(static_cast<int>(v), grid.confidence[i], grid.classes);
      else
        color = heatColor(targets.span() > 0.0 ? (v - targets.lo) / targets.span() : 0.5);
      line[c] = color.rgb();
    }
  }
}

DecisionView::Plot::Geometry DecisionView::Plot::plotGeometry() const {
  Geometry g;
  if (!hasPlot()) return g;
  const QFontMetrics fm(font());
  const int line = fm.height();
  g.rx = {grid.xMin, grid.xMax};
  if (grid.features == 2) {
    g.ry = {grid.yMin, grid.yMax};
  } else if (grid.kind == DecisionKind::kBinary) {
    g.ry = {-0.1, 1.1};
  } else {
    // The targets' range, widened to the curve but by at most one span each way.
    Range r = targets;
    const double span = r.span() > 0.0 ? r.span() : 1.0;
    for (float v : grid.values) {
      if (!std::isfinite(v)) continue;
      r.lo = std::min(r.lo, std::max<double>(v, targets.lo - span));
      r.hi = std::max(r.hi, std::min<double>(v, targets.hi + span));
    }
    const double pad = r.span() > 0.0 ? r.span() * 0.08 : 0.5;
    g.ry = {r.lo - pad, r.hi + pad};
  }
  g.xTicks = ticks(g.rx, 5);
  g.yTicks = ticks(g.ry, 5);
  for (double v : g.yTicks)
    g.yLabelWidth = std::max(g.yLabelWidth, fm.horizontalAdvance(gridTick(v)));
  // The caption above; x tick labels, x title and the legend below; y title and labels left.
  const int left = line + 10 + g.yLabelWidth;
  const int top = line + 10;
  const int below = 3 * line + 16;
  int w = width() - left - 12;
  int h = height() - top - below;
  if (w < 24 || h < 24) return g;
  int x = left;
  if (grid.features == 2) {  // a square plane, centred
    const int side = std::min(w, h);
    x += (w - side) / 2;
    w = h = side;
  }
  g.area = QRect(x, top, w, h);
  return g;
}

void DecisionView::Plot::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  const QString text = message();
  if (!text.isEmpty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    // A narrow column, so a wrapped sentence breaks into even lines.
    const int w = std::min(width() - 24, 260);
    painter.drawText(QRect((width() - w) / 2, 12, w, height() - 24),
                     Qt::AlignCenter | Qt::TextWordWrap, text);
    return;
  }
  const Geometry g = plotGeometry();
  if (g.area.isEmpty()) return;
  const QFontMetrics fm(font());
  const QRect& area = g.area;
  painter.fillRect(area, palette().base());
  if (!image.isNull()) {
    painter.setRenderHint(QPainter::SmoothPixmapTransform);
    painter.setOpacity(grid.features == 1 ? 0.5 : 1.0);  // behind a curve: a lighter backdrop
    painter.drawImage(QRectF(area), image);
    painter.setOpacity(1.0);
  }
  drawAxes(painter, g);
  drawPoints(painter, g);
  painter.setPen(palette().color(QPalette::Text));
  // The caption may run past a narrow square plane, up to the widget's edge.
  const int captionWidth = width() - area.left() - 6;
  painter.drawText(QRect(area.left(), 4, captionWidth, fm.height()), Qt::AlignLeft,
                   fm.elidedText(caption(), Qt::ElideRight, captionWidth));
  drawLegend(painter,
             QRect(area.left(), area.bottom() + 2 * fm.height() + 10, area.width(), fm.height()));
}

void DecisionView::Plot::drawAxes(QPainter& painter, const Geometry& g) const {
  const QRect& area = g.area;
  const QFontMetrics fm(font());
  const int line = fm.height();
  const auto toX = [&](double v) {
    return area.left() + (v - g.rx.lo) / g.rx.span() * area.width();
  };
  const auto toY = [&](double v) {
    return area.top() + (g.ry.hi - v) / g.ry.span() * area.height();
  };
  if (image.isNull()) {  // light grid lines where no heatmap fills the plot
    painter.setPen(QColor(0xe8, 0xe8, 0xe8));
    for (double v : g.xTicks)
      painter.drawLine(QPointF(toX(v), area.top()), QPointF(toX(v), area.bottom()));
    for (double v : g.yTicks)
      painter.drawLine(QPointF(area.left(), toY(v)), QPointF(area.right(), toY(v)));
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(area.adjusted(0, 0, -1, -1));
  painter.setPen(palette().color(QPalette::Text));
  for (double v : g.xTicks) {
    painter.drawLine(QPointF(toX(v), area.bottom()), QPointF(toX(v), area.bottom() + 3));
    painter.drawText(QRectF(toX(v) - 40, area.bottom() + 4, 80, line), Qt::AlignHCenter,
                     gridTick(v));
  }
  for (double v : g.yTicks) {
    painter.drawLine(QPointF(area.left() - 3, toY(v)), QPointF(area.left(), toY(v)));
    painter.drawText(
        QRectF(area.left() - g.yLabelWidth - 6, toY(v) - line / 2.0, g.yLabelWidth, line),
        Qt::AlignRight | Qt::AlignVCenter, gridTick(v));
  }
  const QStringList names = points ? points->featureNames : QStringList();
  const QString xTitle = names.value(0, QStringLiteral("x1"));
  QString yTitle;
  if (grid.features == 2)
    yTitle = names.value(1, QStringLiteral("x2"));
  else if (grid.kind == DecisionKind::kBinary)
    yTitle = DecisionView::tr("P(class 1)");
  else
    yTitle = points ? points->targetName : QStringLiteral("y");
  painter.drawText(QRect(area.left(), area.bottom() + line + 5, area.width(), line),
                   Qt::AlignHCenter, xTitle);
  painter.save();
  painter.translate(area.left() - g.yLabelWidth - 8 - line, area.center().y());
  painter.rotate(-90);
  painter.drawText(QRect(-area.height() / 2, 0, area.height(), line), Qt::AlignHCenter, yTitle);
  painter.restore();
}

void DecisionView::Plot::drawPoints(QPainter& painter, const Geometry& g) const {
  const QRect& area = g.area;
  const auto toX = [&](double v) {
    return area.left() + (v - g.rx.lo) / g.rx.span() * area.width();
  };
  const auto toY = [&](double v) {
    return area.top() + (g.ry.hi - v) / g.ry.span() * area.height();
  };
  painter.save();
  painter.setClipRect(area);
  painter.setRenderHint(QPainter::Antialiasing);
  QPainterPath curvePath;  // one feature: the model's curve, drawn after the points
  if (grid.features == 1) {
    if (grid.kind == DecisionKind::kBinary) {  // the 0.5 threshold
      painter.setPen(QPen(QColor(0x90, 0x90, 0x90), 1.0, Qt::DashLine));
      painter.drawLine(QPointF(area.left(), toY(0.5)), QPointF(area.right(), toY(0.5)));
    }
    // The curve, broken where the model predicts no number.
    QPainterPath curve;
    bool drawing = false;
    for (int c = 0; c < grid.cols; ++c) {
      if (undefinedAt(size_t(c))) {
        drawing = false;
        continue;
      }
      const QPointF p(toX(grid.xAt(c)), toY(grid.values[size_t(c)]));
      if (drawing)
        curve.lineTo(p);
      else
        curve.moveTo(p);
      drawing = true;
    }
    curvePath = curve;
  }
  const int n = visibleCount();
  const double radius = n > 1000 ? 2.6 : n > 300 ? 3.2 : 4.0;
  const Index train = std::min<Index>(points ? points->validationStart : 0, n);
  // Training points filled with a white edge; validation points hollow, drawn last.
  for (Index i = 0; i < n; ++i) {
    const QPointF centre(toX(points->x(i, 0)), toY(pointY(i)));
    const QColor color = pointColor(i);
    if (i < train) {
      painter.setPen(QPen(Qt::white, 1.0));
      painter.setBrush(color);
      painter.drawEllipse(centre, radius, radius);
    } else {
      painter.setBrush(Qt::NoBrush);
      painter.setPen(QPen(Qt::white, 3.2));
      painter.drawEllipse(centre, radius, radius);
      painter.setPen(QPen(color, 1.6));
      painter.drawEllipse(centre, radius, radius);
    }
  }
  if (!curvePath.isEmpty()) {
    // Over the points (a fitted curve through dense data would hide under them), on a white
    // edge so it stays apart from points of its own colour.
    const QColor ink =
        grid.kind == DecisionKind::kBinary ? QColor(0x33, 0x33, 0x33) : classColor(0);
    painter.setBrush(Qt::NoBrush);
    painter.setPen(QPen(Qt::white, 4.5, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    painter.drawPath(curvePath);
    painter.setPen(QPen(ink, 2.5, Qt::SolidLine, Qt::RoundCap, Qt::RoundJoin));
    painter.drawPath(curvePath);
  }
  painter.restore();
}

void DecisionView::Plot::drawLegend(QPainter& painter, const QRect& row) const {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics fm(font());
  const double cy = row.center().y() + 0.5;
  const double baseline = row.top() + fm.ascent();
  double x = row.left();
  const auto label = [&](const QString& text) {
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QPointF(x, baseline), text);
    x += fm.horizontalAdvance(text) + 4;
  };
  const auto ramp = [&](const QString& lo, const QString& hi) {
    label(lo);
    const QRectF bar(x, cy - 5, 56, 10);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (double t : {0.0, 0.5, 1.0}) gradient.setColorAt(t, heatColor(t));
    painter.fillRect(bar, gradient);
    painter.setPen(palette().color(QPalette::Mid));
    painter.drawRect(bar);
    x += bar.width() + 4;
    label(hi);
    x += 8;
  };
  const auto dot = [&](const QColor& color, bool hollow, const QString& text) {
    painter.setPen(QPen(hollow ? color : Qt::white, hollow ? 1.6 : 1.0));
    painter.setBrush(hollow ? QBrush(Qt::NoBrush) : QBrush(color));
    painter.drawEllipse(QPointF(x + 4.5, cy), 4.0, 4.0);
    x += 12;
    label(text);
    x += 6;
  };
  if (grid.kind == DecisionKind::kBinary) {
    ramp(DecisionView::tr("class 0"), DecisionView::tr("class 1"));
  } else if (grid.kind == DecisionKind::kMulticlass) {
    const int shown = std::min(grid.classes, 10);
    for (int k = 0; k < shown; ++k) dot(classColor(k), false, QString::number(k));
  } else if (grid.features == 2) {
    ramp(gridTick(targets.lo), gridTick(targets.hi));
  } else {
    painter.setPen(QPen(classColor(0), 2.5, Qt::SolidLine, Qt::RoundCap));
    painter.drawLine(QPointF(x, cy), QPointF(x + 16, cy));
    x += 20;
    label(DecisionView::tr("model"));
    x += 6;
    dot(classColor(1), false, DecisionView::tr("data"));
  }
  if (showValidation && points && points->validationStart < points->x.rows())
    dot(palette().color(QPalette::Text), true, DecisionView::tr("validation"));
  painter.restore();
}

DecisionView::DecisionView(QWidget* parent) : QWidget(parent) {
  m_plot = new Plot;
  m_showValidation = new QCheckBox(tr("Show validation points"));
  m_showValidation->setObjectName(QStringLiteral("showValidation"));
  auto* options = new QHBoxLayout;
  options->setContentsMargins(8, 0, 8, 4);
  options->addWidget(m_showValidation);
  options->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->setSpacing(2);
  layout->addWidget(m_plot, 1);
  layout->addLayout(options);
  connectSignals();
  updateValidationOption();
}

DecisionView::~DecisionView() = default;

void DecisionView::connectSignals() {
  connect(m_showValidation, &QCheckBox::toggled, this, [this](bool on) {
    m_plot->showValidation = on;
    m_plot->update();
  });
}

void DecisionView::setData(const Matrix& x, const Matrix& y, Index validationStart,
                           const QStringList& featureNames, const QString& targetName) {
  std::vector<std::string> names;
  for (const QString& name : featureNames) names.push_back(name.toStdString());
  m_plot->points = makeDecisionPoints(x, y, validationStart, names, targetName.toStdString());
  m_plot->rebuildImage();
  m_plot->update();
  updateValidationOption();
}

void DecisionView::setGrid(const DecisionGridResult& grid) {
  m_plot->grid = grid;
  if (grid.points) m_plot->points = grid.points;
  m_plot->grid.points.reset();  // the plot keeps one reference, in `points`
  m_plot->rebuildImage();
  m_plot->update();
  updateValidationOption();
}

void DecisionView::clear() {
  m_plot->grid = DecisionGridResult{};
  m_plot->points.reset();
  m_plot->rebuildImage();
  m_plot->update();
  updateValidationOption();
}

void DecisionView::updateValidationOption() {
  // Off (its setting kept) when the points shown have no validation rows; on while none are
  // known yet, so that it can be set before a run.
  const auto& p = m_plot->points;
  const bool none = p && p->validationStart >= p->x.rows();
  m_showValidation->setEnabled(!none);
  m_showValidation->setToolTip(none ? tr("This data has no validation rows: set a validation "
                                         "split on the Data tab to hold some out")
                                    : tr("Draw the validation rows too, hollow, as the model "
                                         "never trains on them"));
}

void DecisionView::setSetupReason(const QString& reason) {
  if (m_plot->setupReason == reason) return;
  m_plot->setupReason = reason;
  m_plot->update();
}

bool DecisionView::showValidation() const { return m_showValidation->isChecked(); }
void DecisionView::setShowValidation(bool show) { m_showValidation->setChecked(show); }
QString DecisionView::caption() const { return m_plot->caption(); }
QString DecisionView::message() const { return m_plot->message(); }
int DecisionView::visiblePointCount() const { return m_plot->visibleCount(); }

QRect DecisionView::plotRect() const {
  const QRect area = m_plot->plotGeometry().area;
  return area.isEmpty() ? area : area.translated(m_plot->pos());
}

QColor DecisionView::classColor(int k) { return plot::classColor(k); }

QColor DecisionView::heatColor(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0);
  return overWhite(classColor(t < 0.5 ? 0 : 1), 0.8 * std::abs(2.0 * t - 1.0));
}

QColor DecisionView::classCellColor(int k, double confidence, int classes) {
  const double chance = 1.0 / std::max(classes, 2);
  const double sure = std::clamp((confidence - chance) / (1.0 - chance), 0.0, 1.0);
  return overWhite(classColor(k), 0.15 + 0.65 * (std::isfinite(sure) ? sure : 0.0));
}

}  // namespace fitbench
