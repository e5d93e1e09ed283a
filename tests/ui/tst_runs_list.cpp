// The runs list in the window, as a person uses it: every Run is listed and drawn; Space on a run
// hides its curves and shows them again (also after Clear previous runs took them away); a
// double-click renames it (the charts follow); Delete removes it; Export CSV writes the runs'
// histories, a row per run and epoch; opening another experiment clears the list.
#include <QFile>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTreeWidget>

#include "ui/charts/metric_chart.h"
#include "ui/charts/runs_list.h"
#include "ui/common/session_runs.h"
#include "window_fixtures.h"

using namespace fitbench;
using fixtures::answerFileDialog;
using fixtures::example;
using fixtures::makeWindow;
using fixtures::runToEnd;

namespace {

QStringList drawn(MainWindow& w) {
  w.lossChart()->flushNow();
  QStringList labels = w.lossChart()->shownRunLabels();
  labels.removeAll(QString());
  labels.sort();
  return labels;
}

// Makes row `row` the current item, as a click on it does.
void clickItem(QTreeWidget* tree, int row) {
  QTreeWidgetItem* item = tree->topLevelItem(row);
  tree->scrollToItem(item);
  QTest::mouseClick(tree->viewport(), Qt::LeftButton, {},
                    tree->visualItemRect(item).center() + QPoint(20, 0));
}

}  // namespace

class TestRunsList : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs); }
  void showHideRenameDeleteExport();
};

void TestRunsList::showHideRenameDeleteExport() {
  auto w = makeWindow();
  QVERIFY(w->openFile(example("xor.json"), nullptr, true));
  QVERIFY(runToEnd(*w));
  QVERIFY(runToEnd(*w));
  w->showView(QStringLiteral("runs"));
  QTreeWidget* tree = w->runsList()->tree();
  QTRY_VERIFY(tree->isVisible());
  QCOMPARE(tree->topLevelItemCount(), 2);
  const QString first = tree->topLevelItem(0)->text(0);
  const QString second = tree->topLevelItem(1)->text(0);
  QVERIFY(first.startsWith(QStringLiteral("run 1")));
  QCOMPARE(tree->topLevelItem(0)->text(1), QStringLiteral("30"));  // epochs
  QCOMPARE(drawn(*w), QStringList({first, second}));

  // Space hides the first run's curves, and shows them again.
  clickItem(tree, 0);
  QTest::keyClick(tree->viewport(), Qt::Key_Space);
  QCOMPARE(tree->topLevelItem(0)->checkState(0), Qt::Unchecked);
  QCOMPARE(drawn(*w), QStringList({second}));
  QTest::keyClick(tree->viewport(), Qt::Key_Space);
  QCOMPARE(drawn(*w), QStringList({first, second}));

  // Clear previous runs takes the earlier run off the charts: unchecked, and checked back.
  for (QAction* a : w->findChildren<QAction*>())
    if (a->text() == QStringLiteral("&Clear previous runs")) a->trigger();
  QCOMPARE(drawn(*w), QStringList({second}));
  QCOMPARE(tree->topLevelItem(0)->checkState(0), Qt::Unchecked);
  clickItem(tree, 0);
  QTest::keyClick(tree->viewport(), Qt::Key_Space);
  QCOMPARE(drawn(*w), QStringList({first, second}));

  // A double-click renames a run, in the charts too.
  // (QTest's double-click is the second click's event alone: the view wants the press first.)
  const QPoint at = tree->visualItemRect(tree->topLevelItem(1)).center() + QPoint(20, 0);
  QTest::mousePress(tree->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseRelease(tree->viewport(), Qt::LeftButton, {}, at);
  QTest::mouseDClick(tree->viewport(), Qt::LeftButton, {}, at);
  QLineEdit* editor = nullptr;
  QTRY_VERIFY((editor = tree->findChild<QLineEdit*>()) != nullptr);
  editor->selectAll();
  QTest::keyClicks(editor, QStringLiteral("baseline"));
  QTest::keyClick(editor, Qt::Key_Return);
  // (The delegate commits on Return once the editor has had the key: queued.)
  QTRY_COMPARE(tree->topLevelItem(1)->text(0), QStringLiteral("baseline"));
  QCOMPARE(drawn(*w), QStringList({QStringLiteral("baseline"), first}));

  // Delete removes the selected run from the list and the charts.
  clickItem(tree, 0);
  QTest::keyClick(tree->viewport(), Qt::Key_Delete);
  QCOMPARE(tree->topLevelItemCount(), 1);
  QCOMPARE(drawn(*w), QStringList({QStringLiteral("baseline")}));

  // Export CSV: nothing selected, every run; a row per run and epoch.
  tree->clearSelection();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("runs.csv"));
  answerFileDialog(path);
  QTest::mouseClick(w->runsList()->exportButton(), Qt::LeftButton);
  QFile file(path);
  QVERIFY(file.open(QIODevice::ReadOnly));
  const QStringList lines = QString::fromUtf8(file.readAll()).trimmed().split('\n');
  QCOMPARE(lines.size(), 1 + 30);
  QVERIFY2(lines[0].startsWith(QStringLiteral("run,source,epoch,")), qPrintable(lines[0]));
  QVERIFY(lines[0].contains(QStringLiteral(",loss")));
  QVERIFY(lines[1].startsWith(QStringLiteral("baseline,run,1,")));
  QVERIFY(lines[30].startsWith(QStringLiteral("baseline,run,30,")));

  // Results belong to their experiment: opening another clears the list.
  QVERIFY(w->openFile(example("seed.json"), nullptr, true));
  QCOMPARE(tree->topLevelItemCount(), 0);
  QVERIFY(drawn(*w).isEmpty());
}

QTEST_MAIN(TestRunsList)
#include "tst_runs_list.moc"
