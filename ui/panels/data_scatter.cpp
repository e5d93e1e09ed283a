// DataScatter: the preview scatter plot and the generator thumbnails.

#include "ui/panels/data_scatter.h"

#include <QComboBox>
#include <QFontMetrics>
#include <QHBoxLayout>
#include <QLabel>
#include <QLinearGradient>
#include <QLocale>
#include <QPaintEvent>
#include <QPainter>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>

#include "ui/common/plot_style.h"

namespace fitbench {
namespace {

using plot::Range;
using plot::ticks;
QString scatterTick(double v) { return plot::tickLabel(v, 4); }
using plot::kClassColorCount;

// The class of `row`: a rounded class index in a single target column, else the hot column.
int classOf(const Matrix& y, Index row, int classCount) {
  int k = 0;
  if (y.cols() == 1) {
    k = static_cast<int>(std::lround(y(row, 0)));
  } else {
    Index best = 0;
    y.row(row).maxCoeff(&best);
    k = static_cast<int>(best);
  }
  return std::clamp(k, 0, std::max(classCount - 1, 0));
}

QColor rowColor(const Matrix& y, Index row, int classCount, float lo, float hi) {
  if (y.cols() == 0) return DataScatter::classColor(1);
  if (classCount > 0) return DataScatter::classColor(classOf(y, row, classCount));
  const double t = hi > lo ? (static_cast<double>(y(row, 0)) - lo) / (hi - lo) : 0.5;
  return DataScatter::rampColor(t);
}

void targetRange(const Matrix& y, float& lo, float& hi) {
  lo = 0.0f;
  hi = 0.0f;
  if (y.rows() == 0 || y.cols() == 0) return;
  lo = y.col(0).minCoeff();
  hi = y.col(0).maxCoeff();
}

// The range of the points' coordinates (x or y), padded by 5% on each side.
Range paddedRange(const std::vector<double>& values) {
  Range r;
  if (values.empty()) return r;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  r.lo = *lo;
  r.hi = *hi;
  const double pad = r.span() > 0.0 ? r.span() * 0.05 : 0.5;
  r.lo -= pad;
  r.hi += pad;
  return r;
}

}  // namespace

// The plot itself: the data, its points in the chosen columns, and the painting.
class DataScatter::Plot : public QWidget {
 public:
  struct Point {
    double x = 0.0;
    double y = 0.0;
    QColor color;
    bool validation = false;
  };

  Plot() {
    setAttribute(Qt::WA_OpaquePaintEvent);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    setMinimumSize(200, 220);
  }
  QSize sizeHint() const override { return {340, 280}; }

  QString columnName(int column) const {
    const auto features = static_cast<int>(data.feature_names.size());
    if (column < 0) return {};
    if (column < features) return QString::fromStdString(data.feature_names[column]);
    const int t = column - features;
    if (t >= static_cast<int>(data.target_names.size())) return {};
    return QString::fromStdString(data.target_names[t]) + DataScatter::tr(" (target)");
  }

  int validationCount() const {
    return static_cast<int>(
        std::count_if(points.begin(), points.end(), [](const Point& p) { return p.validation; }));
  }

  void rebuild() {
    points.clear();
    const Index features = data.x.cols();
    const Index columns = features + data.y.cols();
    const auto value = [&](Index row, int c) {
      return c < features ? data.x(row, c) : data.y(row, c - features);
    };
    if (xColumn >= 0 && yColumn >= 0 && xColumn < columns && yColumn < columns) {
      const Index stride = (data.size() + kMaxPoints - 1) / kMaxPoints;
      for (Index i = 0; i < data.size(); i += stride) {
        points.push_back({value(i, xColumn), value(i, yColumn),
                          rowColor(data.y, i, classCount, targetMin, targetMax),
                          i >= validationStart});
      }
    }
    update();
  }

  Dataset data;
  int classCount = 0;
  Index validationStart = 0;
  int xColumn = 0;
  int yColumn = 1;
  std::vector<Point> points;
  float targetMin = 0.0f;  // the first target's range, for the ramp and its legend
  float targetMax = 0.0f;

 protected:
  void paintEvent(QPaintEvent* event) override;

 private:
  void drawLegend(QPainter& painter, const QRect& area) const;
};

QColor DataScatter::classColor(int k) { return plot::classColor(k); }

QColor DataScatter::rampColor(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.5, 0.0, 1.0);
  const QColor ends[3] = {classColor(0), QColor(0xd8, 0xd8, 0xd8), classColor(1)};
  const int i = t < 0.5 ? 0 : 1;
  const double f = t < 0.5 ? t * 2.0 : (t - 0.5) * 2.0;
  const auto mix = [f](int a, int b) { return static_cast<int>(std::lround(a + (b - a) * f)); };
  return QColor(mix(ends[i].red(), ends[i + 1].red()), mix(ends[i].green(), ends[i + 1].green()),
                mix(ends[i].blue(), ends[i + 1].blue()));
}

QPixmap DataScatter::thumbnail(const Dataset& data, int classCount, int size) {
  QPixmap pixmap(size, size);
  pixmap.fill(QColor(0xfa, 0xfa, 0xfa));
  QPainter painter(&pixmap);
  painter.setRenderHint(QPainter::Antialiasing);
  painter.setPen(QColor(0xc8, 0xc8, 0xc8));
  painter.drawRect(QRectF(0.5, 0.5, size - 1.0, size - 1.0));
  const Index features = data.x.cols();
  if (data.size() == 0 || features == 0) return pixmap;

  const auto column = [&](Index row, Index c) {
    return c < features ? data.x(row, c) : data.y(row, c - features);
  };
  const Index yColumn = features >= 2 ? 1 : features;
  if (yColumn >= features + data.y.cols()) return pixmap;
  std::vector<double> xs, ys;
  for (Index i = 0; i < data.size(); ++i) {
    xs.push_back(column(i, 0));
    ys.push_back(column(i, yColumn));
  }
  const Range rx = paddedRange(xs);
  const Range ry = paddedRange(ys);
  float lo = 0.0f, hi = 0.0f;
  targetRange(data.y, lo, hi);
  const double inner = size - 4.0;
  painter.setPen(Qt::NoPen);
  for (Index i = 0; i < data.size(); ++i) {
    const double px = 2.0 + (xs[static_cast<size_t>(i)] - rx.lo) / rx.span() * inner;
    const double py = 2.0 + (ry.hi - ys[static_cast<size_t>(i)]) / ry.span() * inner;
    painter.setBrush(rowColor(data.y, i, classCount, lo, hi));
    painter.drawEllipse(QPointF(px, py), 1.6, 1.6);
  }
  return pixmap;
}

DataScatter::DataScatter(QWidget* parent) : QWidget(parent) {
  m_xAxis = new QComboBox;
  m_xAxis->setObjectName("xAxis");
  m_yAxis = new QComboBox;
  m_yAxis->setObjectName("yAxis");
  m_plot = new Plot;
  m_summary = new QLabel;
  m_summary->setObjectName("summary");
  m_summary->setWordWrap(true);
  auto* axes = new QHBoxLayout;
  axes->addWidget(new QLabel(tr("X")));
  axes->addWidget(m_xAxis, 1);
  axes->addSpacing(8);
  axes->addWidget(new QLabel(tr("Y")));
  axes->addWidget(m_yAxis, 1);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(axes);
  layout->addWidget(m_plot, 1);
  layout->addWidget(m_summary);
  connectSignals();
  updateSummary();
}

DataScatter::~DataScatter() = default;

void DataScatter::connectSignals() {
  for (QComboBox* combo : {m_xAxis, m_yAxis}) {
    connect(combo, &QComboBox::activated, this,
            [this] { setAxes(m_xAxis->currentIndex(), m_yAxis->currentIndex()); });
  }
}

void DataScatter::setData(const Dataset& data, int classCount, Index validationStart) {
  m_plot->data = data;
  m_plot->classCount = classCount;
  m_plot->validationStart = std::clamp<Index>(validationStart, 0, data.size());
  targetRange(data.y, m_plot->targetMin, m_plot->targetMax);
  fillAxisChoices();
  setAxes(m_xAxis->currentIndex(), m_yAxis->currentIndex());
}

void DataScatter::clear() { setData(Dataset{}, 0, 0); }

void DataScatter::setAxes(int xColumn, int yColumn) {
  m_xAxis->setCurrentIndex(xColumn);
  m_yAxis->setCurrentIndex(yColumn);
  m_plot->xColumn = xColumn;
  m_plot->yColumn = yColumn;
  m_plot->rebuild();
  updateSummary();
}

int DataScatter::pointCount() const { return static_cast<int>(m_plot->points.size()); }
int DataScatter::validationPointCount() const { return m_plot->validationCount(); }
QString DataScatter::xTitle() const { return m_plot->columnName(m_plot->xColumn); }
QString DataScatter::yTitle() const { return m_plot->columnName(m_plot->yColumn); }
QString DataScatter::summary() const { return m_summary->text(); }

// The axis choices: the features, then the targets; the chosen columns are kept by name.
void DataScatter::fillAxisChoices() {
  const Dataset& data = m_plot->data;
  QStringList names;
  const auto columns = static_cast<int>(data.x.cols() + data.y.cols());
  for (int c = 0; c < columns; ++c) names << m_plot->columnName(c);
  const auto features = static_cast<int>(data.x.cols());
  const int defaults[2] = {0, features >= 2 ? 1 : features};
  QComboBox* combos[2] = {m_xAxis, m_yAxis};
  for (int i = 0; i < 2; ++i) {
    const QString chosen = combos[i]->currentText();
    combos[i]->clear();
    combos[i]->addItems(names);
    const auto kept = static_cast<int>(names.indexOf(chosen));
    combos[i]->setCurrentIndex(kept >= 0 ? kept : std::min(defaults[i], columns - 1));
  }
}

void DataScatter::updateSummary() {
  const Dataset& data = m_plot->data;
  const Index n = data.size();
  if (n == 0) {
    m_summary->setText(tr("No data loaded."));
    return;
  }
  const QLocale locale;
  const auto number = [&](Index v) { return locale.toString(static_cast<qlonglong>(v)); };
  QString text =
      tr("%1 samples · %2")
          .arg(number(n))
          .arg(data.x.cols() == 1 ? tr("1 feature") : tr("%1 features").arg(data.x.cols()));
  const int classes = m_plot->classCount;
  text += classes > 0 ? tr(" · %1 classes").arg(classes) : tr(" · regression target");
  const Index train = m_plot->validationStart;
  if (train < n) {
    text += tr("\n%1 training rows, %2 validation rows (hollow)")
                .arg(number(train))
                .arg(number(n - train));
  }
  if (pointCount() > 0 && pointCount() < n) {
    text += tr("\nThe plot shows %1 evenly spaced rows.").arg(number(pointCount()));
  }
  m_summary->setText(text);
}

void DataScatter::Plot::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  painter.fillRect(rect(), palette().window());
  const QFontMetrics fm(font());
  const int line = fm.height();

  if (points.empty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(rect(), Qt::AlignCenter, DataScatter::tr("No data to show"));
    return;
  }

  std::vector<double> xs, ys;
  for (const Point& p : points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  const Range rx = paddedRange(xs);
  const Range ry = paddedRange(ys);
  const std::vector<double> xTicks = ticks(rx, 5);
  const std::vector<double> yTicks = ticks(ry, 5);
  int yLabelWidth = 0;
  for (double v : yTicks) yLabelWidth = std::max(yLabelWidth, fm.horizontalAdvance(scatterTick(v)));

  // Legend at the bottom, then the x axis's title and tick labels; the y axis's on the left.
  const QRect legend(0, height() - line - 2, width(), line);
  const int left = line + 6 + yLabelWidth;
  const QRect area(QPoint(left, 6), QPoint(width() - 10, legend.top() - 2 * line - 6));
  if (area.width() < 20 || area.height() < 20) return;

  painter.fillRect(area, palette().base());
  painter.setPen(QColor(0xe4, 0xe4, 0xe4));
  const auto toX = [&](double v) { return area.left() + (v - rx.lo) / rx.span() * area.width(); };
  const auto toY = [&](double v) {
    return area.bottom() - (v - ry.lo) / ry.span() * area.height();
  };
  for (double v : xTicks)
    painter.drawLine(QPointF(toX(v), area.top()), QPointF(toX(v), area.bottom()));
  for (double v : yTicks)
    painter.drawLine(QPointF(area.left(), toY(v)), QPointF(area.right(), toY(v)));
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(area.adjusted(0, 0, -1, -1));

  painter.setPen(palette().color(QPalette::Text));
  for (double v : xTicks) {
    const QRectF r(toX(v) - 40, area.bottom() + 3, 80, line);
    painter.drawText(r, Qt::AlignHCenter | Qt::AlignTop, scatterTick(v));
  }
  for (double v : yTicks) {
    const QRectF r(area.left() - yLabelWidth - 4, toY(v) - line / 2.0, yLabelWidth, line);
    painter.drawText(r, Qt::AlignRight | Qt::AlignVCenter, scatterTick(v));
  }
  painter.drawText(QRect(area.left(), area.bottom() + line + 3, area.width(), line),
                   Qt::AlignHCenter, columnName(xColumn));
  painter.save();
  painter.translate(0, area.center().y());
  painter.rotate(-90);
  painter.drawText(QRect(-area.height() / 2, 0, area.height(), line), Qt::AlignHCenter,
                   columnName(yColumn));
  painter.restore();

  painter.save();
  painter.setClipRect(area);
  painter.setRenderHint(QPainter::Antialiasing);
  const size_t n = points.size();
  const double radius = n > 2000 ? 2.0 : n > 500 ? 2.6 : 3.4;
  for (const Point& p : points) {
    const QPointF centre(toX(p.x), toY(p.y));
    if (p.validation) {
      painter.setPen(QPen(p.color.darker(110), 1.4));
      painter.setBrush(Qt::NoBrush);
    } else {
      painter.setPen(QPen(p.color.darker(135), 0.8));
      painter.setBrush(p.color);
    }
    painter.drawEllipse(centre, radius, radius);
  }
  painter.restore();
  drawLegend(painter, legend);
}

void DataScatter::Plot::drawLegend(QPainter& painter, const QRect& area) const {
  painter.save();
  painter.setRenderHint(QPainter::Antialiasing);
  const QFontMetrics fm(font());
  const double r = 4.0;
  const double cy = area.center().y() + 0.5;
  double x = area.left() + 8.0;
  const auto entry = [&](const QColor& color, bool hollow, const QString& text) {
    painter.setPen(QPen(color.darker(hollow ? 150 : 135), hollow ? 1.4 : 0.8));
    painter.setBrush(hollow ? QBrush(Qt::NoBrush) : QBrush(color));
    painter.drawEllipse(QPointF(x + r, cy), r, r);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QPointF(x + 2 * r + 4, area.top() + fm.ascent()), text);
    x += 2 * r + 4 + fm.horizontalAdvance(text) + 12;
  };
  if (classCount > 0 && classCount <= 5) {
    for (int k = 0; k < classCount; ++k) entry(classColor(k), false, QString::number(k));
  } else if (classCount > 0) {
    // Many classes: a row of unlabelled dots (colors repeat after 10), then their range.
    const int shown = std::min(classCount, kClassColorCount);
    painter.setPen(Qt::NoPen);
    for (int k = 0; k < shown; ++k) {
      painter.setBrush(classColor(k));
      painter.drawEllipse(QPointF(x + r, cy), r, r);
      x += 2 * r + 2;
    }
    const QString range = DataScatter::tr("classes 0–%1").arg(classCount - 1);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QPointF(x + 4, area.top() + fm.ascent()), range);
    x += 4 + fm.horizontalAdvance(range) + 12;
  } else if (data.y.cols() > 0) {
    const QString lo = scatterTick(targetMin);
    const QString hi = scatterTick(targetMax);
    painter.setPen(palette().color(QPalette::Text));
    painter.drawText(QPointF(x, area.top() + fm.ascent()), lo);
    x += fm.horizontalAdvance(lo) + 4;
    const QRectF bar(x, cy - 4, 60, 8);
    QLinearGradient gradient(bar.topLeft(), bar.topRight());
    for (double t : {0.0, 0.5, 1.0}) gradient.setColorAt(t, rampColor(t));
    painter.fillRect(bar, gradient);
    x += bar.width() + 4;
    painter.drawText(QPointF(x, area.top() + fm.ascent()), hi);
    x += fm.horizontalAdvance(hi) + 12;
  }
  if (validationCount() > 0)
    entry(palette().color(QPalette::Text), true, DataScatter::tr("validation"));
  painter.restore();
}

}  // namespace fitbench
