// One-click layouts, as a person uses them: the Layout toolbar's buttons clicked with the mouse
// and Ctrl+1 ... Ctrl+6 pressed bring one view large to the front (timeline, batch split,
// collectives, decision boundary, charts) and Standard brings the first-start layout back; and
// the first-start layout at a projector's 1280 x 720 shows all four lanes of a 4-device run and
// every dock tab's title in full.
#include <QDockWidget>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSplitter>
#include <QStandardPaths>
#include <QTabBar>
#include <QToolBar>
#include <QToolButton>

#include "ui/rehearsal/device_timeline_view.h"
#include "ui/rehearsal/timeline_canvas.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::example;
using fixtures::runToEnd;

namespace {

std::unique_ptr<MainWindow> windowAt(int w, int h) {
  auto window = fixtures::makeWindow();
  window->resize(w, h);
  QTest::qWait(50);
  window->applyLayout(QStringLiteral("standard"));
  QTest::qWait(50);
  return window;
}

QDockWidget* dock(MainWindow& w, const char* name) {
  return w.findChild<QDockWidget*>(QString::fromLatin1(name));
}

// In front of its tab group and on the window: a person sees it.
bool inFront(QDockWidget* d) { return d->isVisible() && !d->visibleRegion().isEmpty(); }

QToolButton* layoutButton(MainWindow& w, const char* name) {
  auto* bar = w.findChild<QToolBar*>(QStringLiteral("LayoutToolBar"));
  auto* act = w.findChild<QAction*>(QStringLiteral("layout-") + QLatin1String(name));
  return bar && act ? qobject_cast<QToolButton*>(bar->widgetForAction(act)) : nullptr;
}

// The dock tab bars' titles that do not fit (elided, or scrolled out of the bar).
QStringList cutTabTitles(MainWindow& w) {
  QStringList cut;
  for (QTabBar* bar : w.findChildren<QTabBar*>()) {
    if (!bar->isVisible() || qobject_cast<QTabWidget*>(bar->parentWidget())) continue;
    // A tab bar narrower than its tabs' natural widths elides their titles (or scrolls them).
    if (bar->sizeHint().width() > bar->width())
      for (int i = 0; i < bar->count(); ++i) cut << bar->tabText(i);
  }
  return cut;
}

QSize centreSize(MainWindow& w) { return w.centralWidget()->size(); }

}  // namespace

class TestLayouts : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
    QSettings().remove(QStringLiteral("view/zoom"));
  }

  // At 1280 x 720 a 2 x 2 mesh run's timeline shows its four lanes without scrolling, and no
  // dock tab's title is cut.
  void firstStartAtProjectorSize() {
    auto w = windowAt(1280, 720);
    QVERIFY(w->openFile(example("model_parallel_2x2.json"), nullptr, true));
    QVERIFY(runToEnd(*w));
    QTest::qWait(50);
    QDockWidget* timeline = dock(*w, "TimelineDock");
    QVERIFY(inFront(timeline));
    auto* canvas = timeline->findChild<TimelineCanvas*>();
    QVERIFY(canvas);
    QCOMPARE(canvas->laneCount(), 4);
    auto* scroll = timeline->findChild<QScrollArea*>();
    QVERIFY2(!scroll->verticalScrollBar()->isVisible(),
             qPrintable(QStringLiteral("lanes scroll: canvas %1 px in a %2 px view")
                            .arg(canvas->height())
                            .arg(scroll->viewport()->height())));
    for (int d = 0; d < 4; ++d) {
      const auto& boxes = canvas->boxes();
      const bool shown = std::any_of(boxes.begin(), boxes.end(), [&](const auto& b) {
        return b.device == d && canvas->visibleRegion().contains(b.rect.center().toPoint());
      });
      QVERIFY2(shown, qPrintable(QStringLiteral("lane %1 not shown").arg(d)));
    }
    const QStringList cut = cutTabTitles(*w);
    QVERIFY2(cut.isEmpty(), qPrintable(cut.join(", ")));
  }

  // Each button brings its view large to the front; Standard brings the first layout back.
  void buttonsBringViewsToTheFront() {
    auto w = windowAt(1600, 1000);
    QVERIFY(w->openFile(example("model_parallel_2x2.json"), nullptr, true));
    const QSize standardCentre = centreSize(*w);
    const int standardLog = dock(*w, "LogDock")->height();

    QToolButton* timeline = layoutButton(*w, "timeline");
    QVERIFY(timeline && timeline->isVisible());
    QTest::mouseClick(timeline, Qt::LeftButton);
    QTest::qWait(50);
    QVERIFY(inFront(dock(*w, "TimelineDock")));
    QVERIFY2(dock(*w, "TimelineDock")->height() > 1000 / 2,
             qPrintable(QString::number(dock(*w, "TimelineDock")->height())));

    for (const char* view : {"batch-split", "collectives", "boundary"}) {
      QTest::mouseClick(layoutButton(*w, view), Qt::LeftButton);
      QTest::qWait(50);
      const char* name = view == QLatin1String("batch-split")   ? "BatchSplitDock"
                         : view == QLatin1String("collectives") ? "CollectivesDock"
                                                                : "DecisionDock";
      QDockWidget* d = dock(*w, name);
      QVERIFY2(inFront(d), view);
      QVERIFY2(
          d->width() > 1600 * 2 / 5,
          qPrintable(QStringLiteral("%1: %2 px wide").arg(QLatin1String(view)).arg(d->width())));
      QVERIFY2(d->height() > 1000 / 2, view);
    }

    QTest::mouseClick(layoutButton(*w, "charts"), Qt::LeftButton);
    QTest::qWait(50);
    QVERIFY2(centreSize(*w).width() > standardCentre.width() &&
                 centreSize(*w).height() > standardCentre.height(),
             qPrintable(QStringLiteral("%1x%2 from %3x%4")
                            .arg(centreSize(*w).width())
                            .arg(centreSize(*w).height())
                            .arg(standardCentre.width())
                            .arg(standardCentre.height())));

    QTest::mouseClick(layoutButton(*w, "standard"), Qt::LeftButton);
    QTest::qWait(50);
    QCOMPARE(centreSize(*w), standardCentre);
    QCOMPARE(dock(*w, "LogDock")->height(), standardLog);
    QVERIFY(inFront(dock(*w, "DecisionDock")));
  }

  // Ctrl+3 is the timeline, Ctrl+1 the standard layout; a closed dock comes back.
  void keysAndClosedDocks() {
    auto w = windowAt(1280, 720);
    w->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(w.get()));
    dock(*w, "TimelineDock")->close();
    QVERIFY(!dock(*w, "TimelineDock")->isVisible());
    QTest::keyClick(w.get(), Qt::Key_3, Qt::ControlModifier);
    QTest::qWait(50);
    QVERIFY(inFront(dock(*w, "TimelineDock")));
    QTest::keyClick(w.get(), Qt::Key_1, Qt::ControlModifier);
    QTest::qWait(50);
    QVERIFY(inFront(dock(*w, "DecisionDock")));
  }
};

QTEST_MAIN(TestLayouts)
#include "tst_layouts.moc"
