// Tests of the live metric chart: TensorBoard smoothing, decimation, coalesced redraws, overlays,
// log scale, zoom / reset, hover text, export, and a screenshot for a person to look at.
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QToolTip>
#include <QValueAxis>
#include <QWheelEvent>
#include <cmath>
#include <limits>

#include "ui/charts/metric_chart.h"
#include "ui/charts/smoothing.h"

using fitbench::MetricChart;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

QLineSeries* seriesNamed(const MetricChart& chart, const QString& name) {
  for (QAbstractSeries* s : chart.chart()->series())
    if (s->name() == name) return qobject_cast<QLineSeries*>(s);
  return nullptr;
}

QVector<QPointF> pointsOf(const QVector<double>& ys) {
  QVector<QPointF> out;
  for (int i = 0; i < ys.size(); ++i) out.append(QPointF(i + 1, ys[i]));
  return out;
}

// A plausible falling loss with noise, per batch, for `epochs` epochs of `steps` batches.
QVector<QPointF> lossCurve(int epochs, int steps, double start, double scale, int seed) {
  QVector<QPointF> out;
  for (int e = 0; e < epochs; ++e) {
    for (int b = 0; b < steps; ++b) {
      const double x = e + (b + 1.0) / steps;
      const double noise = 0.08 * std::sin(37.0 * x + seed) + 0.05 * std::sin(91.0 * x * seed);
      out.append(QPointF(x, start * std::exp(-scale * x) + 0.15 + noise));
    }
  }
  return out;
}

double yMin(const MetricChart& chart) {
  if (auto* a = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0)))
    return a->min();
  return qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0))->min();
}

}  // namespace

class TestMetricChart : public QObject {
  Q_OBJECT
 private slots:
  void smoothing_data();
  void smoothing();
  void decimationKeepsExtremes();
  void decimationOfVisibleRange();
  void epochPointsReachSeries();
  void repeatedEpochReplacesValue();
  void smoothingDrawsRawLineBehind();
  void beginRunMakesOverlays();
  void overlaysAreCapped();
  void redrawsAreCoalesced();
  void longBatchSeriesIsDecimated();
  void logScaleTogglesAxis();
  void accuracyStartsAtZeroToOne();
  void nanEpochsKeepTheirPlaceOnTheXAxis();
  void emptyChartSaysPressRun();
  void anotherMetricClearsTheOldRuns();
  void flatLineAndDeepZoomKeepFewTicks();
  void zoomStopsFollowingAndResetRestores();
  void markersOnlyWhileApart();
  void shortChartKeepsReadableTicks();
  void hoverNamesNearestPoint();
  void exportWritesPngAndSvg();
  void exportRejectsBadPaths();
  void screenshot();
};

void TestMetricChart::smoothing_data() {
  QTest::addColumn<QVector<double>>("input");
  QTest::addColumn<double>("weight");
  QTest::addColumn<QVector<double>>("expected");
  // By hand, w = 0.6: last = 0.4 -> 0.4 / 0.4 = 1; last = 0.24 + 0.8 = 1.04 -> 1.04 / 0.64 =
  // 1.625; last = 0.624 + 1.2 = 1.824 -> 1.824 / 0.784 = 2.326530612244898.
  QTest::newRow("w=0.6") << QVector<double>{1, 2, 3} << 0.6
                         << QVector<double>{1.0, 1.625, 2.326530612244898};
  // By hand, w = 0.5, NaN skipped: 2 / 0.5 = 4; NaN; last = 1 -> 1 / 0.75 = 1.3333333333333333;
  // last = 0.5 + 4 = 4.5 -> 4.5 / 0.875 = 5.142857142857143.
  QTest::newRow("NaN passes through")
      << QVector<double>{4, kNaN, 0, 8} << 0.5
      << QVector<double>{4.0, kNaN, 1.3333333333333333, 5.142857142857143};
  // Python, same formula in double precision: w = 0.9 over 0.9, 0.5, 0.7, inf, 0.2.
  QTest::newRow("inf passes through")
      << QVector<double>{0.9, 0.5, 0.7, kInf, 0.2} << 0.9
      << QVector<double>{0.9, 0.6894736842105263, 0.6933579335793358, kInf, 0.5498982262285547};
  QTest::newRow("w=0 is the input")
      << QVector<double>{3, -1, 7} << 0.0 << QVector<double>{3, -1, 7};
  QTest::newRow("constant stays exact")
      << QVector<double>{0.1, 0.1, 0.1} << 0.99 << QVector<double>{0.1, 0.1, 0.1};
  QTest::newRow("empty") << QVector<double>{} << 0.6 << QVector<double>{};
}

void TestMetricChart::smoothing() {
  QFETCH(QVector<double>, input);
  QFETCH(double, weight);
  QFETCH(QVector<double>, expected);
  const QVector<QPointF> out = fitbench::smoothDebiased(pointsOf(input), weight);
  QCOMPARE(out.size(), expected.size());
  for (int i = 0; i < out.size(); ++i) {
    QCOMPARE(out[i].x(), double(i + 1));
    if (std::isnan(expected[i]))
      QVERIFY(std::isnan(out[i].y()));
    else if (std::isinf(expected[i]))
      QCOMPARE(out[i].y(), expected[i]);
    else
      QVERIFY2(std::abs(out[i].y() - expected[i]) <= 1e-12 * std::max(1.0, std::abs(expected[i])),
               qPrintable(QStringLiteral("index %1: %2 != %3")
                              .arg(i)
                              .arg(out[i].y(), 0, 'g', 17)
                              .arg(expected[i], 0, 'g', 17)));
  }
}

void TestMetricChart::decimationKeepsExtremes() {
  QVector<QPointF> points;
  for (int i = 0; i < 10000; ++i) points.append(QPointF(i * 0.001, std::sin(i * 0.01)));
  points[4321].setY(50.0);   // a spike
  points[7777].setY(-40.0);  // a dip
  const QVector<QPointF> out = fitbench::decimateMinMax(points, 2000, 0.0, 9.999);
  QVERIFY2(out.size() <= 2002, qPrintable(QString::number(out.size())));
  QVERIFY(out.size() >= 1000);
  QCOMPARE(out.front(), points.front());
  QCOMPARE(out.back(), points.back());
  QVERIFY(out.contains(points[4321]));
  QVERIFY(out.contains(points[7777]));
  for (int i = 1; i < out.size(); ++i) QVERIFY(out[i - 1].x() < out[i].x());
  // Short series are drawn whole.
  const QVector<QPointF> few = points.mid(0, 500);
  QCOMPARE(fitbench::decimateMinMax(few, 2000, 0.0, 1.0), few);
}

void TestMetricChart::decimationOfVisibleRange() {
  QVector<QPointF> points;
  for (int i = 0; i < 10000; ++i) points.append(QPointF(i, i % 7));
  // 100 points in [5000, 5099], fewer than the limit: kept whole, plus one neighbor each side.
  const QVector<QPointF> out = fitbench::decimateMinMax(points, 2000, 5000, 5099);
  QCOMPARE(out.size(), 102);
  QCOMPARE(out.front().x(), 4999.0);
  QCOMPARE(out[1].x(), 5000.0);
  QCOMPARE(out.back().x(), 5100.0);
}

void TestMetricChart::epochPointsReachSeries() {
  MetricChart chart(QStringLiteral("loss"));
  chart.setSmoothing(0);
  const QVector<double> train{0.69, 0.52, 0.41, 0.37, 0.33};
  for (int e = 0; e < train.size(); ++e) chart.addEpochPoint(false, e + 1, train[e]);
  chart.addEpochPoint(true, 1, 0.71);
  chart.addEpochPoint(true, 2, 0.60);
  QCOMPARE(chart.epochPointCount(false), 5);
  QCOMPARE(chart.epochPointCount(true), 2);
  QLineSeries* trainLine = seriesNamed(chart, QStringLiteral("train"));
  QLineSeries* valLine = seriesNamed(chart, QStringLiteral("validation"));
  QVERIFY(trainLine && valLine);
  QCOMPARE(trainLine->count(), 0);  // nothing drawn before the redraw tick
  chart.flushNow();
  QCOMPARE(trainLine->count(), 5);
  QCOMPARE(valLine->count(), 2);
  for (int e = 0; e < train.size(); ++e) QCOMPARE(trainLine->at(e), QPointF(e + 1, train[e]));
  QVERIFY(trainLine->pointsVisible());  // markers on epoch points
  QVERIFY(trainLine->color() != valLine->color());
  // The redraw timer also delivers them without flushNow().
  chart.addEpochPoint(false, 6, 0.30);
  QTRY_COMPARE(trainLine->count(), 6);
}

void TestMetricChart::repeatedEpochReplacesValue() {
  MetricChart chart(QStringLiteral("loss"));
  chart.setSmoothing(0);
  chart.addEpochPoint(false, 1, 0.9);
  chart.addEpochPoint(false, 2, 0.8);
  chart.addEpochPoint(false, 2, 0.7);
  chart.flushNow();
  QCOMPARE(chart.epochPointCount(false), 2);
  QCOMPARE(seriesNamed(chart, QStringLiteral("train"))->at(1), QPointF(2, 0.7));
}

void TestMetricChart::smoothingDrawsRawLineBehind() {
  MetricChart chart(QStringLiteral("loss"));
  chart.setSmoothing(0.6);
  chart.addBatchPoints(pointsOf({1, 2, 3}));
  chart.flushNow();
  QLineSeries* smooth = seriesNamed(chart, QStringLiteral("train (per batch)"));
  QLineSeries* raw = seriesNamed(chart, QStringLiteral("train (per batch) (raw)"));
  QVERIFY(smooth && raw);
  QVERIFY(raw->isVisible());
  QVERIFY(raw->color().alpha() < smooth->color().alpha());
  QCOMPARE(raw->at(2).y(), 3.0);
  QVERIFY(std::abs(smooth->at(2).y() - 2.326530612244898) < 1e-12);  // hand value, see above
  QSignalSpy changed(&chart, &MetricChart::smoothingChanged);
  chart.setSmoothing(0);
  chart.flushNow();
  QCOMPARE(changed.count(), 1);
  QVERIFY(!raw->isVisible());
  QCOMPARE(smooth->at(2).y(), 3.0);
}

void TestMetricChart::beginRunMakesOverlays() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(700, 420);  // room for the legend
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  const int seriesPerRun = chart.chart()->series().size();
  chart.beginRun(QStringLiteral("run 1 (1 device)"));
  for (int e = 1; e <= 3; ++e) chart.addEpochPoint(false, e, 1.0 / e);
  chart.addBatchPoints(lossCurve(3, 4, 1.0, 0.5, 1));
  chart.beginRun(QStringLiteral("run 2 (2 devices)"));
  QCOMPARE(chart.overlayCount(), 1);
  QCOMPARE(chart.epochPointCount(false), 0);
  QLineSeries* overlay = seriesNamed(chart, QStringLiteral("run 1 (1 device)"));
  QVERIFY(overlay);
  QCOMPARE(overlay->count(), 3);
  QVERIFY(overlay->color().alpha() < 255);  // faded
  // The overlay's legend entry is its label, shown once (once the legend is laid out).
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  int visibleOverlayMarkers = 0;
  for (QLegendMarker* m : chart.chart()->legend()->markers())
    if (m->label() == QStringLiteral("run 1 (1 device)") && m->isVisible()) ++visibleOverlayMarkers;
  QCOMPARE(visibleOverlayMarkers, 1);
  QCOMPARE(seriesNamed(chart, QStringLiteral("train"))->count(), 0);
  // A run that never got data does not become an overlay.
  chart.beginRun(QStringLiteral("run 3"));
  QCOMPARE(chart.overlayCount(), 1);
  chart.clearOverlays();
  QCOMPARE(chart.overlayCount(), 0);
  QVERIFY(!seriesNamed(chart, QStringLiteral("run 1 (1 device)")));
  QCOMPARE(chart.chart()->series().size(), seriesPerRun);
}

void TestMetricChart::overlaysAreCapped() {
  MetricChart chart(QStringLiteral("loss"));
  for (int r = 1; r <= MetricChart::kMaxOverlays + 3; ++r) {
    chart.beginRun(QStringLiteral("run %1").arg(r));
    chart.addEpochPoint(false, 1, r);
  }
  chart.beginRun(QStringLiteral("last"));
  QCOMPARE(chart.overlayCount(), MetricChart::kMaxOverlays);
  QVERIFY(!seriesNamed(chart, QStringLiteral("run 3")));  // oldest dropped
  QVERIFY(seriesNamed(chart, QStringLiteral("run 4")));
}

void TestMetricChart::redrawsAreCoalesced() {
  MetricChart chart(QStringLiteral("loss"));
  QLineSeries* batch = seriesNamed(chart, QStringLiteral("train (per batch)"));
  QSignalSpy replaced(batch, &QXYSeries::pointsReplaced);
  QSignalSpy added(batch, &QXYSeries::pointAdded);
  // A burst without the event loop: nothing is drawn until the timer fires, then once.
  for (int i = 0; i < 2000; ++i) chart.addBatchPoints({QPointF(i / 100.0, 1.0 / (i + 1))});
  QCOMPARE(replaced.count(), 0);
  QTRY_COMPARE(replaced.count(), 1);
  QCOMPARE(batch->count(), 2000);
  // A steady stream for ~400 ms: one replace() per redraw tick at most, never one per point.
  QElapsedTimer clock;
  clock.start();
  int calls = 0;
  double x = 20;
  while (clock.elapsed() < 400) {
    chart.addBatchPoints({QPointF(x, 0.5), QPointF(x + 0.005, 0.4)});
    x += 0.01;
    ++calls;
    QCoreApplication::processEvents();
  }
  QTest::qWait(2 * MetricChart::kRedrawIntervalMs);
  const int redraws = replaced.count() - 1;
  const int bound = int(clock.elapsed() / MetricChart::kRedrawIntervalMs) + 2;
  QVERIFY2(redraws >= 2 && redraws <= bound,
           qPrintable(QStringLiteral("%1 replace() calls for %2 bursts, bound %3")
                          .arg(redraws)
                          .arg(calls)
                          .arg(bound)));
  QVERIFY(calls > 3 * redraws);
  QCOMPARE(added.count(), 0);  // never point by point
  QCOMPARE(chart.batchPointCount(), 2000 + 2 * calls);
}

void TestMetricChart::longBatchSeriesIsDecimated() {
  MetricChart chart(QStringLiteral("loss"));
  chart.setSmoothing(0);
  chart.addBatchPoints(lossCurve(50, 1000, 2.0, 0.1, 3));
  chart.flushNow();
  QCOMPARE(chart.batchPointCount(), 50000);
  const int drawn = seriesNamed(chart, QStringLiteral("train (per batch)"))->count();
  QVERIFY2(drawn <= MetricChart::kMaxDrawnPoints + 4 && drawn >= MetricChart::kMaxDrawnPoints / 2,
           qPrintable(QString::number(drawn)));
}

void TestMetricChart::logScaleTogglesAxis() {
  MetricChart chart(QStringLiteral("loss"));
  chart.setSmoothing(0);
  chart.addEpochPoint(false, 1, 0.0);  // cannot be shown on a log axis
  chart.addEpochPoint(false, 2, 0.5);
  chart.addEpochPoint(false, 3, 0.05);
  chart.flushNow();
  QLineSeries* train = seriesNamed(chart, QStringLiteral("train"));
  QSignalSpy toggled(&chart, &MetricChart::logScaleChanged);
  chart.setLogScale(true);
  QCOMPARE(toggled.count(), 1);
  auto* log = qobject_cast<QLogValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
  QVERIFY(log);
  QCOMPARE(chart.chart()->axes(Qt::Vertical).size(), 1);
  QVERIFY(train->attachedAxes().contains(log));
  QCOMPARE(train->count(), 2);                   // the 0 is left out...
  QVERIFY(log->min() > 0 && log->min() < 0.05);  // ...and the axis spans 0.05 and 0.5
  QVERIFY(log->max() > 0.5 && log->max() < 1.0);
  bool said = false;  // ...and the chart says so
  for (QLabel* label : chart.findChildren<QLabel*>())
    said = said || (label->isVisibleTo(&chart) && label->text().contains(QStringLiteral("≤ 0")));
  QVERIFY(said);
  chart.setLogScale(false);
  QVERIFY(qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0)));
  QCOMPARE(train->count(), 3);
}

void TestMetricChart::accuracyStartsAtZeroToOne() {
  MetricChart accuracy(QStringLiteral("accuracy"));
  accuracy.addEpochPoint(false, 1, 0.81);
  accuracy.flushNow();
  auto* y = qobject_cast<QValueAxis*>(accuracy.chart()->axes(Qt::Vertical).value(0));
  QCOMPARE(y->min(), 0.0);
  QCOMPARE(y->max(), 1.0);
  MetricChart loss(QStringLiteral("loss"));
  loss.setSmoothing(0);
  loss.addEpochPoint(false, 1, 2.0);
  loss.addEpochPoint(false, 2, 3.0);
  loss.flushNow();
  QVERIFY(yMin(loss) > 1.5 && yMin(loss) < 2.0);  // follows the data, with a margin
}

void TestMetricChart::emptyChartSaysPressRun() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(600, 300);
  chart.flushNow();
  QCOMPARE(chart.emptyText(),
           QStringLiteral("Press Run to plot the loss of every batch and epoch."));
  chart.addBatchPoints({QPointF(0.5, 0.7)});
  chart.flushNow();
  QCOMPARE(chart.emptyText(), QString());
  chart.beginRun(QStringLiteral("run 2"));  // the first run stays as an overlay
  chart.flushNow();
  QCOMPARE(chart.emptyText(), QString());
  chart.setMetricName(QStringLiteral("mae"));  // another metric: the old runs go
  chart.flushNow();
  QCOMPARE(chart.emptyText(),
           QStringLiteral("Press Run to plot the mae of every batch and epoch."));
}

void TestMetricChart::nanEpochsKeepTheirPlaceOnTheXAxis() {
  // A loss that went NaN after epoch 2 of 30: the x axis still spans the 30 epochs (as the
  // accuracy chart beside it does), while the y axis follows the drawn values.
  MetricChart loss(QStringLiteral("loss"));
  loss.addBatchPoints({QPointF(0.5, 0.7), QPointF(1.0, 0.6), QPointF(1.5, kNaN)});
  loss.addEpochPoint(false, 1, 0.65);
  for (int e = 2; e <= 30; ++e) loss.addEpochPoint(false, e, kNaN);
  loss.flushNow();
  auto* x = qobject_cast<QValueAxis*>(loss.chart()->axes(Qt::Horizontal).value(0));
  QVERIFY(x);
  QVERIFY2(x->max() >= 30.0 && x->max() < 31.0, qPrintable(QString::number(x->max())));
  QVERIFY(x->min() <= 0.0);
  QVERIFY(yMin(loss) > 0.5 && yMin(loss) < 0.6);
}

void TestMetricChart::anotherMetricClearsTheOldRuns() {
  // The experiment's first metric changed from accuracy to mae: the chart is titled after it,
  // ranges over its data, and drops the runs of the old metric.
  MetricChart chart(QStringLiteral("accuracy"));
  QCOMPARE(chart.chart()->title(), QStringLiteral("Accuracy"));
  chart.setSmoothing(0);
  chart.beginRun(QStringLiteral("run 1"));
  chart.addEpochPoint(false, 1, 0.8);
  chart.beginRun(QStringLiteral("run 2"));
  chart.addEpochPoint(false, 1, 0.9);
  QCOMPARE(chart.overlayCount(), 1);
  chart.setMetricName(QStringLiteral("mae"));
  QCOMPARE(chart.chart()->title(), QStringLiteral("MAE · run 2"));
  QCOMPARE(chart.overlayCount(), 0);
  QCOMPARE(chart.epochPointCount(false), 0);
  chart.addEpochPoint(false, 1, 3.0);
  chart.addEpochPoint(false, 2, 4.0);
  chart.flushNow();
  QVERIFY(yMin(chart) > 2.5);  // no longer the 0..1 range of an accuracy
  MetricChart loss(QStringLiteral("loss"));
  QCOMPARE(loss.chart()->title(), QStringLiteral("Loss"));
}

void TestMetricChart::flatLineAndDeepZoomKeepFewTicks() {
  // A loss flat to float rounding (0.6931472 +- 1e-9), and then a zoom into a millionth of an
  // epoch near epoch 100,000: the axes keep a handful of ticks, anchored next to their range.
  // (Anchored at 0, Qt Charts' int tick count overflowed and the chart spent minutes creating
  // tick labels.)
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(600, 400);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  QVector<QPointF> flat;
  for (int i = 0; i < 20; ++i) flat.append({0.05 * (i + 1), 0.6931472 + (i % 2 ? 1e-9 : -1e-9)});
  chart.addBatchPoints(flat);
  chart.flushNow();
  const auto fewTicks = [](QValueAxis* axis) {
    const double step = axis->tickInterval();
    return step > 0 && (axis->max() - axis->min()) / step <= 20 &&
           std::abs(axis->min() - axis->tickAnchor()) <= step;
  };
  auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
  auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
  QVERIFY(fewTicks(x));
  QVERIFY(fewTicks(y));
  QVERIFY2(y->max() - y->min() >= 0.6931472e-6, qPrintable(QString("%1 %2 %3 %4")
                                                               .arg(y->min(), 0, 'g', 12)
                                                               .arg(y->max(), 0, 'g', 12)
                                                               .arg(y->tickInterval())
                                                               .arg(y->tickAnchor(), 0, 'g', 12)));
  x->setRange(1e5, 1e5 + 1e-6);
  QVERIFY(fewTicks(x));
  QCoreApplication::processEvents();
  QVERIFY(!chart.grab().isNull());
}

void TestMetricChart::zoomStopsFollowingAndResetRestores() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(700, 420);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  chart.addBatchPoints(lossCurve(4, 50, 1.0, 0.5, 2));
  chart.flushNow();
  auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
  const double span = x->max() - x->min();
  QVERIFY(chart.followsData());
  QWidget* viewport = chart.chartView()->viewport();
  const QPoint center = viewport->rect().center();
  QWheelEvent wheel(center, viewport->mapToGlobal(center), QPoint(), QPoint(0, 240), Qt::NoButton,
                    Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(viewport, &wheel);
  QVERIFY(!chart.followsData());
  QVERIFY(x->max() - x->min() < 0.7 * span);  // two notches of 0.8
  // New data no longer moves the view...
  const double zoomedMax = x->max();
  chart.addBatchPoints(lossCurve(8, 50, 1.0, 0.5, 2).mid(200));
  chart.flushNow();
  QCOMPARE(x->max(), zoomedMax);
  // ...until the view is reset (double-click does it too).
  QTest::mouseDClick(viewport, Qt::LeftButton, Qt::NoModifier, center);
  QVERIFY(chart.followsData());
  QVERIFY(x->max() > 7.9);
  // Arrow keys pan.
  const double before = x->min();
  QTest::keyClick(chart.chartView(), Qt::Key_Right);
  QVERIFY(x->min() > before);
  QVERIFY(!chart.followsData());
  chart.resetView();
  QVERIFY(chart.followsData());
  // A left drag zooms into the dragged rectangle; a plain click does not change the view.
  const double fullSpan = x->max() - x->min();
  QTest::mouseClick(viewport, Qt::LeftButton, Qt::NoModifier, center);
  QVERIFY(chart.followsData());
  QTest::mousePress(viewport, Qt::LeftButton, Qt::NoModifier, center - QPoint(100, 60));
  QTest::mouseMove(viewport, center + QPoint(100, 60));
  QTest::mouseRelease(viewport, Qt::LeftButton, Qt::NoModifier, center + QPoint(100, 60));
  QVERIFY(!chart.followsData());
  QVERIFY(x->max() - x->min() < 0.6 * fullSpan);
  // A right drag pans: dragging to the right shows earlier epochs.
  const double minBeforePan = x->min();
  const double spanBeforePan = x->max() - x->min();
  QTest::mousePress(viewport, Qt::RightButton, Qt::NoModifier, center);
  QTest::mouseMove(viewport, center + QPoint(80, 0));
  QTest::mouseRelease(viewport, Qt::RightButton, Qt::NoModifier, center + QPoint(80, 0));
  QVERIFY(x->min() < minBeforePan);
  QVERIFY(std::abs((x->max() - x->min()) - spanBeforePan) < 1e-9 * spanBeforePan);
}

// Markers sit on epoch points only while they are apart on screen: 150 epochs in a 700 px chart
// are a line; zoomed in to a few epochs, or a short run, they are marked again.
void TestMetricChart::markersOnlyWhileApart() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(700, 420);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  for (int e = 1; e <= 150; ++e) {
    chart.addEpochPoint(false, e, 1.0 / e);
    chart.addEpochPoint(true, e, 1.2 / e);
  }
  chart.flushNow();
  QLineSeries* train = seriesNamed(chart, QStringLiteral("train"));
  QLineSeries* validation = seriesNamed(chart, QStringLiteral("validation"));
  QVERIFY(train && validation);
  QVERIFY(!train->pointsVisible());
  QVERIFY(!validation->pointsVisible());
  auto* x = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Horizontal).value(0));
  QWidget* viewport = chart.chartView()->viewport();
  const QPoint center = viewport->rect().center();
  QWheelEvent wheel(center, viewport->mapToGlobal(center), QPoint(), QPoint(0, 120 * 14),
                    Qt::NoButton, Qt::NoModifier, Qt::NoScrollPhase, false);
  QCoreApplication::sendEvent(viewport, &wheel);  // 14 notches of 0.8 in
  chart.flushNow();
  QVERIFY(!chart.followsData());
  QVERIFY2(x->max() - x->min() < 20, qPrintable(QString::number(x->max() - x->min())));
  QVERIFY(train->pointsVisible());
  QVERIFY(validation->pointsVisible());
  chart.resetView();
  chart.flushNow();
  QVERIFY(!train->pointsVisible());
  // A new, short run is marked.
  chart.beginRun(QString());
  for (int e = 1; e <= 20; ++e) chart.addEpochPoint(false, e, 1.0 / e);
  chart.flushNow();
  QVERIFY(seriesNamed(chart, QStringLiteral("train"))->pointsVisible());
}

// A chart squeezed to a short strip (a 720 px screen with the timeline open) gets fewer y ticks,
// so that Qt Charts does not elide every label to "..."; a tall one gets up to 8 intervals.
void TestMetricChart::shortChartKeepsReadableTicks() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(600, 500);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  chart.addBatchPoints(lossCurve(4, 20, 0.9, 0.1, 5));
  chart.flushNow();
  auto* y = qobject_cast<QValueAxis*>(chart.chart()->axes(Qt::Vertical).value(0));
  QVERIFY(y);
  const auto intervals = [y] { return (y->max() - y->min()) / y->tickInterval(); };
  const auto pxPerTick = [&] { return chart.chart()->plotArea().height() / intervals(); };
  QVERIFY2(intervals() >= 4, qPrintable(QString::number(intervals())));
  QVERIFY2(pxPerTick() >= 20, qPrintable(QString::number(pxPerTick())));
  chart.resize(600, 190);
  QTRY_VERIFY(chart.chart()->plotArea().height() < 100);
  QTRY_VERIFY2(pxPerTick() >= 20, qPrintable(QString("%1 px a tick, plot %2 px high")
                                                 .arg(pxPerTick())
                                                 .arg(chart.chart()->plotArea().height())));
  // Still a scale to read: at least two labelled ticks inside the range.
  const double step = y->tickInterval();
  QVERIFY2(std::floor(y->max() / step) - std::ceil(y->min() / step) + 1 >= 2,
           qPrintable(QString("%1 to %2, a tick every %3").arg(y->min()).arg(y->max()).arg(step)));
}

void TestMetricChart::hoverNamesNearestPoint() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(700, 420);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  chart.setSmoothing(0);
  chart.beginRun(QStringLiteral("run 1"));
  chart.addEpochPoint(false, 1, 0.9);
  chart.addEpochPoint(false, 2, 0.5);
  chart.addEpochPoint(true, 2, 0.2);
  chart.flushNow();
  QLineSeries* train = seriesNamed(chart, QStringLiteral("train"));
  const auto viewPos = [&](QPointF value) {
    const QPointF inChart = chart.chart()->mapToPosition(value, train);
    return chart.chartView()->mapFromScene(chart.chart()->mapToScene(inChart));
  };
  const QString text = chart.hoverText(viewPos(QPointF(2, 0.5)) + QPoint(3, -2));
  QVERIFY2(text.contains(QStringLiteral("train · run 1")), qPrintable(text));
  QVERIFY2(text.contains(QStringLiteral("epoch 2")), qPrintable(text));
  QVERIFY2(text.contains(QStringLiteral("loss 0.5")), qPrintable(text));
  QVERIFY(chart.hoverText(viewPos(QPointF(2, 0.2))).startsWith(QStringLiteral("validation")));
  QVERIFY(chart.hoverText(viewPos(QPointF(1.5, 0.2))).isEmpty());  // nothing near
  // Moving the mouse there shows it as a tooltip.
  QTest::mouseMove(chart.chartView()->viewport(), viewPos(QPointF(2, 0.5)));
  QTRY_VERIFY(QToolTip::isVisible());
  QVERIFY(QToolTip::text().contains(QStringLiteral("train · run 1")));
}

void TestMetricChart::exportWritesPngAndSvg() {
  QTemporaryDir dir;
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(640, 400);
  chart.addBatchPoints(lossCurve(3, 20, 1.0, 0.5, 1));
  QString error;
  const QString png = dir.filePath(QStringLiteral("loss.png"));
  QVERIFY2(chart.exportImage(png, &error), qPrintable(error));
  QImage image(png);
  QVERIFY(!image.isNull());
  QVERIFY(image.width() > 300 && image.height() > 200);
  const QString svg = dir.filePath(QStringLiteral("loss.SVG"));
  QVERIFY2(chart.exportImage(svg, &error), qPrintable(error));
  QFile file(svg);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QByteArray text = file.readAll();
  QVERIFY(text.contains("<svg"));
  QVERIFY(text.contains("<path") || text.contains("<polyline"));
}

void TestMetricChart::exportRejectsBadPaths() {
  QTemporaryDir dir;
  MetricChart chart(QStringLiteral("loss"));
  QString error;
  QVERIFY(!chart.exportImage(dir.filePath(QStringLiteral("loss.bmpx")), &error));
  QVERIFY2(error.contains(QStringLiteral(".png")), qPrintable(error));
  QVERIFY(!chart.exportImage(dir.filePath(QStringLiteral("missing/dir/loss.png")), &error));
  QVERIFY2(error.contains(QStringLiteral("cannot write")), qPrintable(error));
}

void TestMetricChart::screenshot() {
  MetricChart chart(QStringLiteral("loss"));
  chart.resize(700, 420);
  chart.show();
  QVERIFY(QTest::qWaitForWindowExposed(&chart));
  const int steps = 25;
  const struct {
    const char* label;
    double start, rate;
  } runs[] = {{"run 1 (1 device)", 1.2, 0.35},
              {"run 2 (2 devices)", 1.1, 0.45},
              {"run 3 (4 devices)", 1.0, 0.6}};
  int seed = 1;
  for (const auto& run : runs) {
    chart.beginRun(QString::fromLatin1(run.label));
    const QVector<QPointF> batches = lossCurve(8, steps, run.start, run.rate, seed++);
    chart.addBatchPoints(batches);
    for (int e = 1; e <= 8; ++e) {
      chart.addEpochPoint(false, e, batches[e * steps - 1].y());
      chart.addEpochPoint(true, e, run.start * std::exp(-run.rate * e) + 0.22);
    }
  }
  chart.setSmoothing(0.6);
  chart.flushNow();
  QCOMPARE(chart.overlayCount(), 2);
  const QString path = QDir::temp().filePath(QStringLiteral("fitbench_metric_chart.png"));
  QString error;
  QVERIFY2(chart.exportImage(path, &error), qPrintable(error));
  QVERIFY(QFileInfo(path).size() > 10000);
  qInfo("screenshot: %s", qPrintable(path));
}

QTEST_MAIN(TestMetricChart)
#include "tst_metric_chart.moc"
