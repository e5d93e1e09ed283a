// The runs list in the window, as a person uses it: every Run is listed and drawn; Space on a run
// hides its curves and shows them again (also after Clear previous runs took them away); a
// double-click renames it (the charts follow); Delete removes it; Export CSV writes the runs'
// histories, a row per run and epoch; opening another experiment clears the list. Runs started
// with Run are named by what differs (optimizer typed into the Training tab), the table shows
// their settings and last values, and ten runs keep ten colors in the charts' runs legend.
#include <QChart>
#include <QComboBox>
#include <QFile>
#include <QHeaderView>
#include <QLegend>
#include <QLegendMarker>
#include <QLineEdit>
#include <QLineSeries>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTemporaryDir>
#include <QTreeWidget>

#include "ui/charts/metric_chart.h"
#include "ui/charts/runs_list.h"
#include "ui/common/session_runs.h"
#include "ui/panels/training_panel.h"
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
  // On the name, not its check box (the Settings column is no place for Space).
  QTest::mouseClick(tree->viewport(), Qt::LeftButton, {},
                    tree->visualRect(tree->model()->index(row, 0)).center() + QPoint(20, 0));
}

// Types `text` into the Training tab's field `name` as a person does: select all, type, Tab.
void typeInto(MainWindow& w, const char* name, const QString& text) {
  auto* field = w.trainingPanel()->findChild<QAbstractSpinBox*>(QString::fromLatin1(name));
  QVERIFY2(field && field->isVisible(), name);
  field->setFocus();
  QTest::keyClick(field, Qt::Key_A, Qt::ControlModifier);
  QTest::keyClicks(field, text);
  QTest::keyClick(field, Qt::Key_Tab);
}

// The loss chart's line series named `name`.
QLineSeries* lossSeries(MainWindow& w, const QString& name) {
  for (QAbstractSeries* s : w.lossChart()->chart()->series())
    if (s->name() == name) return qobject_cast<QLineSeries*>(s);
  return nullptr;
}

// The names of the loss chart's legend entries that are shown.
QStringList legendEntries(MainWindow& w) {
  w.lossChart()->flushNow();
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);  // the legend laid out
  QStringList names;
  for (QLegendMarker* m : w.lossChart()->chart()->legend()->markers())
    if (m->isVisible()) names << m->label();
  return names;
}

}  // namespace

class TestRunsList : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() { QCoreApplication::setAttribute(Qt::AA_DontUseNativeDialogs); }
  void showHideRenameDeleteExport();
  void runsNamedByWhatDiffers();
  void tenRunsInTenColors();
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
  QCOMPARE(tree->topLevelItem(0)->text(2), QStringLiteral("30"));  // epochs
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

// Two runs that differ in the optimizer are named by it in the list, the charts and the log;
// the table shows every setting and the last epoch's loss and accuracy; the earlier run is
// drawn in its own color and named below the chart, not in the chart's own legend, which has no
// validation entry for runs without a validation split.
void TestRunsList::runsNamedByWhatDiffers() {
  auto w = makeWindow();
  QVERIFY(w->openFile(example("xor.json"), nullptr, true));
  QVERIFY(runToEnd(*w));
  w->showView(QStringLiteral("runs"));
  QTreeWidget* tree = w->runsList()->tree();
  QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("run 1"));  // nothing to tell apart

  w->showView(QStringLiteral("training"));
  auto* optimizer = w->trainingPanel()->findChild<QComboBox*>(QStringLiteral("optimizer"));
  QVERIFY(optimizer);
  optimizer->setFocus();
  QTest::keyClicks(optimizer, QStringLiteral("SGD"));  // a combo box's type-ahead
  QCOMPARE(optimizer->currentText(), QStringLiteral("SGD"));
  typeInto(*w, "learning_rate", QStringLiteral("0.1"));
  typeInto(*w, "momentum", QStringLiteral("0.9"));
  QVERIFY(runToEnd(*w));

  w->showView(QStringLiteral("runs"));
  QCOMPARE(tree->topLevelItemCount(), 2);
  QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("Adam 0.03"));
  QCOMPARE(tree->topLevelItem(1)->text(0), QStringLiteral("SGD 0.1 m0.9"));
  QStringList headers;
  for (int c = 0; c < tree->columnCount(); ++c) headers << tree->headerItem()->text(c);
  QCOMPARE(headers, QStringList({"Run", "Settings", "Epochs", "loss", "accuracy"}));
  const QString settings = tree->topLevelItem(1)->text(1);
  QVERIFY2(settings.startsWith(QStringLiteral("SGD 0.1, m0.9, binary_crossentropy, 2-8-1 tanh, "
                                              "batch 16, 30 epochs")),
           qPrintable(settings));
  const History& h = w->sessionRuns()->runs()[1].history;
  QCOMPARE(tree->topLevelItem(1)->text(3), QString::number(h.history.at("loss").back(), 'g', 4));
  QCOMPARE(tree->topLevelItem(1)->text(4),
           QString::number(h.history.at("accuracy").back(), 'g', 4));

  // The charts and the log use the names; the earlier run is in its color, named below.
  w->lossChart()->flushNow();
  QCOMPARE(w->lossChart()->shownRunLabels(), QStringList({"SGD 0.1 m0.9", "Adam 0.03"}));
  QVERIFY2(w->lossChart()->runsLegendText().contains(QStringLiteral("Adam 0.03")),
           qPrintable(w->lossChart()->runsLegendText()));
  QLineSeries* first = lossSeries(*w, QStringLiteral("Adam 0.03"));
  QVERIFY(first);
  QCOMPARE(first->pen().color(), w->sessionRuns()->runs()[0].color);
  QVERIFY(w->logView()->toPlainText().contains(QStringLiteral("run 2 (1 device) · SGD 0.1 m0.9")));
  const QStringList entries = legendEntries(*w);
  QCOMPARE(entries, QStringList({"train (per batch)", "train"}));

  // A name the user gives stays when a third run joins.
  tree->setFocus();
  tree->setCurrentItem(tree->topLevelItem(0));
  QTest::keyClick(tree, Qt::Key_F2);
  QLineEdit* editor = nullptr;
  QTRY_VERIFY((editor = tree->findChild<QLineEdit*>()) != nullptr);
  editor->selectAll();
  QTest::keyClicks(editor, QStringLiteral("baseline"));
  QTest::keyClick(editor, Qt::Key_Return);
  QTRY_COMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("baseline"));
  w->showView(QStringLiteral("training"));
  typeInto(*w, "learning_rate", QStringLiteral("0.05"));
  QVERIFY(runToEnd(*w));
  QCOMPARE(tree->topLevelItem(0)->text(0), QStringLiteral("baseline"));
  QCOMPARE(tree->topLevelItem(1)->text(0), QStringLiteral("SGD 0.1 m0.9"));
  QCOMPARE(tree->topLevelItem(2)->text(0), QStringLiteral("SGD 0.05 m0.9"));
}

// Ten runs, each with another learning rate: ten names, nine earlier runs in nine distinct
// colors (none the current run's train blue or validation orange) named in the legend below.
void TestRunsList::tenRunsInTenColors() {
  auto w = makeWindow();
  QVERIFY(w->openFile(example("xor.json"), nullptr, true));
  w->showView(QStringLiteral("training"));
  QStringList names;
  for (int i = 1; i <= 10; ++i) {
    const QString rate = QString::number(0.01 * i, 'g', 3);
    typeInto(*w, "learning_rate", rate);
    QVERIFY(runToEnd(*w));
    names << QStringLiteral("Adam ") + rate;
  }
  w->lossChart()->flushNow();
  QStringList shown = w->lossChart()->shownRunLabels();
  shown.sort();
  QStringList expected = names;
  expected.sort();
  QCOMPARE(shown, expected);
  QSet<QRgb> colors;
  const QString legend = w->lossChart()->runsLegendText();
  for (int i = 0; i < 9; ++i) {
    QVERIFY2(legend.contains(names[i]), qPrintable(legend));
    QLineSeries* line = lossSeries(*w, names[i]);
    QVERIFY2(line, qPrintable(names[i]));
    colors.insert(line->pen().color().rgb());
  }
  QCOMPARE(colors.size(), 9);
  QVERIFY(!colors.contains(lossSeries(*w, QStringLiteral("train"))->pen().color().rgb()));
  QVERIFY(!legend.contains(names[9] + QStringLiteral(" ")));  // the current run is not colored yet

  // docs/screenshots/runs-table.png when FITBENCH_SCREENSHOT_DIR names a folder.
  const QString dir = qEnvironmentVariable("FITBENCH_SCREENSHOT_DIR");
  if (!dir.isEmpty()) {
    w->resize(1440, 900);
    w->applyLayout(QStringLiteral("standard"));
    w->showView(QStringLiteral("runs"));
    QTest::qWait(300);
    QVERIFY(w->grab().save(dir + QStringLiteral("/runs-table.png")));
  }
}
