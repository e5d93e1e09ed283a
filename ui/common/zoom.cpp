#include "ui/common/zoom.h"

#include <QAbstractAxis>
#include <QApplication>
#include <QChart>
#include <QEvent>
#include <QFont>
#include <QLegend>
#include <QPointer>
#include <QWidget>
#include <cmath>

namespace fitbench {
namespace {

double g_factor = 1.0;

// The application font at factor 1, taken the first time it is needed.
QFont baseFont() {
  static const QFont font = QApplication::font();
  return font;
}

// `font` at factor 1 is kept in the object's property `key`; returns it at the current factor.
QFont scaled(QObject* holder, const char* key, const QFont& current) {
  QVariant base = holder->property(key);
  if (!base.isValid()) {
    // First sight: QtCharts' own fonts (its theme's, or the chart's before any zoom) are the
    // fonts at factor 1.
    holder->setProperty(key, current);
    base = current;
  }
  QFont font = base.value<QFont>();
  font.setPointSizeF(font.pointSizeF() * g_factor);
  return font;
}

}  // namespace

void zoomChart(QChart* chart) {
  chart->setTitleFont(scaled(chart, "zoomTitleFont", chart->titleFont()));
  chart->legend()->setFont(scaled(chart->legend(), "zoomLegendFont", chart->legend()->font()));
  for (QAbstractAxis* axis : chart->axes()) {
    axis->setLabelsFont(scaled(axis, "zoomLabelsFont", axis->labelsFont()));
    axis->setTitleFont(scaled(axis, "zoomTitleFont", axis->titleFont()));
  }
}

namespace {

class ZoomWatch : public QObject {
 public:
  ZoomWatch(QChart* chart, QWidget* owner) : QObject(owner), chart_(chart) {}
  bool eventFilter(QObject*, QEvent* event) override {
    if (chart_ &&
        (event->type() == QEvent::FontChange || event->type() == QEvent::ApplicationFontChange))
      zoomChart(chart_);
    return false;
  }

 private:
  QPointer<QChart> chart_;
};

}  // namespace

const std::vector<double>& zoomSteps() {
  static const std::vector<double> steps{0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0};
  return steps;
}

double zoomFactor() { return g_factor; }

void setZoom(double factor) {
  double nearest = 1.0;
  for (double s : zoomSteps())
    if (std::abs(s - factor) < std::abs(nearest - factor)) nearest = s;
  QFont font = baseFont();
  g_factor = nearest;
  font.setPointSizeF(font.pointSizeF() * nearest);
  QApplication::setFont(font);
  // Widgets with a font of their own (a log's fixed font) keep it, at the factor.
  for (QWidget* w : QApplication::allWidgets()) {
    const QVariant atOne = w->property("zoomFontAtOne");
    if (!atOne.isValid()) continue;
    QFont own = atOne.value<QFont>();
    own.setPointSizeF(own.pointSizeF() * nearest);
    w->setFont(own);
  }
  // QApplication tells the windows only while its event loop runs (is_app_running): said to
  // each window here too, so that a window made before the loop (a test's) follows as well; a
  // window resolves its font again only when the font changed, so twice costs nothing.
  QEvent changed(QEvent::ApplicationFontChange);
  for (QWidget* w : QApplication::topLevelWidgets()) QApplication::sendEvent(w, &changed);
}

void setZoomedFont(QWidget* widget, const QFont& font) {
  widget->setProperty("zoomFontAtOne", font);
  QFont own = font;
  own.setPointSizeF(font.pointSizeF() * g_factor);
  widget->setFont(own);
}

void followZoom(QChart* chart, QWidget* owner) {
  owner->installEventFilter(new ZoomWatch(chart, owner));
  zoomChart(chart);
}

}  // namespace fitbench
