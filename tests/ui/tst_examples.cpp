// Every example in resources/examples opens in the window with its explanation beside it and
// trains to its end (the teaching examples must each finish well within a minute).
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTest>
#include <QTextBrowser>

#include "core/io/experiment.h"
#include "ui/main_window.h"
#include "ui/metric_chart.h"

using namespace fitbench;

class TestExamples : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
  }

  void runsToItsEnd_data() {
    QTest::addColumn<QString>("path");
    const QDir dir(QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples"));
    const QStringList files = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    QVERIFY(files.size() >= 11);  // the five engine examples and the six teaching ones
    for (const QString& f : files) QTest::newRow(qPrintable(f)) << dir.filePath(f);
  }

  void runsToItsEnd() {
    QFETCH(QString, path);
    MainWindow w;
    w.setProperty("batch", true);
    w.resize(1280, 800);
    w.show();
    QString error;
    QVERIFY2(w.openFile(path, &error, true), qPrintable(error));
    const ExperimentSpec spec = read_experiment(path.toStdString());
    // The explanation is shown beside the experiment.
    QVERIFY(!spec.description.empty());
    auto* about = w.findChild<QTextBrowser*>(QStringLiteral("about"));
    QVERIFY(about);
    QVERIFY2(about->toPlainText().contains(QString::fromStdString(spec.name)),
             qPrintable(about->toPlainText()));
    QVERIFY(about->toPlainText().size() > 100);
    // Code spans (`--devices 3`, `10 % 3`) are never split across lines: their hyphens and
    // spaces are the non-breaking kinds.
    const QString description = QString::fromStdString(spec.description);
    const QString shown = about->document()->toRawText();
    for (qsizetype open = description.indexOf('`'); open >= 0;) {
      const qsizetype close = description.indexOf('`', open + 1);
      if (close < 0) break;
      QString code = description.mid(open + 1, close - open - 1);
      code.replace('-', QChar(0x2011)).replace(' ', QChar(0x00A0));
      QVERIFY2(shown.contains(code), qPrintable(description.mid(open, close - open + 1)));
      open = description.indexOf('`', close + 1);
    }

    QSignalSpy ended(&w, &MainWindow::runEnded);
    QElapsedTimer clock;
    clock.start();
    w.run();
    QVERIFY(ended.wait(120000));
    QCOMPARE(ended.first().first().toBool(), true);
    QVERIFY(w.lastResult());
    const int epochs = int(w.lastResult()->history.epoch.size());
    QVERIFY(epochs >= 1);
    // To its end: every epoch, unless EarlyStopping ended it (and then it says so).
    if (w.lastResult()->stopReason.isEmpty())
      QCOMPARE(epochs, spec.fit.epochs - spec.fit.initial_epoch);
    else
      QCOMPARE(w.lastResult()->stopReason, QStringLiteral("early_stopping"));
    QCOMPARE(w.lossChart()->epochPointCount(false), epochs);
    qInfo("%s: %d epochs in %.1f s", qPrintable(QFileInfo(path).fileName()), epochs,
          clock.elapsed() / 1000.0);
  }
};

QTEST_MAIN(TestExamples)
#include "tst_examples.moc"
