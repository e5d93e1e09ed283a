// MainWindow's one-click layouts: the first-start layout, and one view brought large to the
// front for a class or a closer look (the charts, the device timeline, the batch split, the
// collectives, the decision boundary), from the Layout toolbar, View > Layout and Ctrl+1 ...
// Ctrl+6. Each starts again from the first-start layout, so a layout is the same whatever the
// user moved before. The window's other parts: main_window.cpp.
#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QSplitter>
#include <QTimer>
#include <QToolBar>
#include <algorithm>

#include "ui/charts/metric_chart.h"
#include "ui/window/main_window.h"

namespace fitbench {
namespace {

struct Layout {
  const char* name;  // applyLayout's name
  const char* text;  // the toolbar's and the menu's
  const char* dock;  // the dock brought to the front ("" for none)
  const char* tip;
};

const Layout kLayouts[] = {
    {"standard", QT_TRANSLATE_NOOP("MainWindow", "Standard"), "DecisionDock",
     QT_TRANSLATE_NOOP("MainWindow",
                       "The first-start layout: the experiment, the charts, the decision "
                       "boundary, the log and the device timeline")},
    {"charts", QT_TRANSLATE_NOOP("MainWindow", "Charts"), "",
     QT_TRANSLATE_NOOP("MainWindow", "The loss and metric charts large")},
    {"timeline", QT_TRANSLATE_NOOP("MainWindow", "Timeline"), "TimelineDock",
     QT_TRANSLATE_NOOP("MainWindow",
                       "The device timeline large: what every device did in "
                       "every step")},
    {"batch-split", QT_TRANSLATE_NOOP("MainWindow", "Batch split"), "BatchSplitDock",
     QT_TRANSLATE_NOOP("MainWindow",
                       "The batch split large: which rows and weights each "
                       "device holds")},
    {"collectives", QT_TRANSLATE_NOOP("MainWindow", "Collectives"), "CollectivesDock",
     QT_TRANSLATE_NOOP("MainWindow",
                       "The collectives large: what the devices send each "
                       "other in a step")},
    {"boundary", QT_TRANSLATE_NOOP("MainWindow", "Boundary"), "DecisionDock",
     QT_TRANSLATE_NOOP("MainWindow", "The decision boundary large")},
};

}  // namespace

QStringList MainWindow::layoutNames() {
  QStringList names;
  for (const Layout& l : kLayouts) names << QString::fromLatin1(l.name);
  return names;
}

void MainWindow::applyDefaultDockSizes() {
  auto* about = findChild<QDockWidget*>(QStringLiteral("AboutDock"));
  auto* decision = findChild<QDockWidget*>(QStringLiteral("DecisionDock"));
  auto* log = findChild<QDockWidget*>(QStringLiteral("LogDock"));
  // 500 px: the right column's five tabs (Decision boundary, Batch split, Collectives, Capacity,
  // Sweep) with their titles in full; the charts keep 400 px at a projector's 1280.
  resizeDocks({about}, {500}, Qt::Horizontal);
  resizeDocks({about, decision}, {190, 520}, Qt::Vertical);
  // 250 px for the log and timeline; less on a short screen (240 at 720 px, a projector: the
  // timeline's four lanes of a 2 x 2 mesh still fit), so that the charts keep room.
  resizeDocks({log}, {std::clamp(height() - 480, 240, 250)}, Qt::Vertical);
}

void MainWindow::applyLayout(const QString& name) {
  const auto layout = std::find_if(std::begin(kLayouts), std::end(kLayouts),
                                   [&name](const Layout& l) { return name == l.name; });
  if (layout == std::end(kLayouts)) return;
  restoreState(m_defaultState);  // every dock shown and docked where it starts
  applyDefaultDockSizes();
  auto* about = findChild<QDockWidget*>(QStringLiteral("AboutDock"));
  auto* log = findChild<QDockWidget*>(QStringLiteral("LogDock"));
  auto* experiment = findChild<QDockWidget*>(QStringLiteral("ExperimentDock"));
  QDockWidget* front = *layout->dock ? findChild<QDockWidget*>(layout->dock) : nullptr;
  if (front) front->raise();
  const int w = width();
  const int h = height();
  const int shortLog = std::clamp(h / 6, 110, 160);
  m_metricChart->show();
  if (auto* splitter = qobject_cast<QSplitter*>(centralWidget()))  // the two charts
    splitter->setSizes({1, 1});
  if (name == QLatin1String("charts")) {
    // The side columns at their narrowest useful widths, the log a few lines.
    resizeDocks({experiment, about}, {380, 300}, Qt::Horizontal);
    resizeDocks({log}, {shortLog}, Qt::Vertical);
  } else if (name == QLatin1String("timeline")) {
    // The two charts' least height would leave the timeline a third of a 720 px window: the
    // metric chart steps aside until another layout is chosen.
    m_metricChart->hide();
    // Once the window has taken the charts' new least height.
    QTimer::singleShot(0, this, [this, log, h] { resizeDocks({log}, {h * 3 / 5}, Qt::Vertical); });
  } else if (front && name != QLatin1String("standard")) {
    // A view of the right column: most of the width (the charts keep 300 px), all of the
    // column's height but for a short About.
    resizeDocks({experiment, front}, {380, std::max(440, w - 380 - 300)}, Qt::Horizontal);
    resizeDocks({about, front}, {90, std::max(200, h - 90)}, Qt::Vertical);
    resizeDocks({log}, {shortLog}, Qt::Vertical);
  }
  showStatus(tr("Layout: %1").arg(tr(layout->text)), 3000);
}

void MainWindow::buildLayouts(QMenu* view) {
  QMenu* menu = view->addMenu(tr("&Layout"));
  QToolBar* bar = addToolBar(tr("Layout"));
  bar->setObjectName(QStringLiteral("LayoutToolBar"));
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  int key = Qt::Key_1;
  for (const Layout& l : kLayouts) {
    auto* act = new QAction(tr(l.text), this);
    act->setObjectName(QStringLiteral("layout-") + QLatin1String(l.name));
    act->setShortcut(QKeySequence(Qt::CTRL | Qt::Key(key++)));
    act->setShortcutContext(Qt::ApplicationShortcut);
    act->setShortcutVisibleInContextMenu(true);
    act->setToolTip(QStringLiteral("%1 (%2)").arg(
        tr(l.tip), act->shortcut().toString(QKeySequence::NativeText)));
    const QString name = QString::fromLatin1(l.name);
    connect(act, &QAction::triggered, this, [this, name] { applyLayout(name); });
    menu->addAction(act);
    bar->addAction(act);
  }
}

}  // namespace fitbench
