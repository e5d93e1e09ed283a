// Every example in resources/examples opens in the window with its explanation beside it and
// trains to its end (the teaching examples must each finish well within a minute).
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QGuiApplication>
#include <QPlainTextEdit>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStandardPaths>
#include <QTest>
#include <QTextBrowser>

#include "core/base/sanitized.h"
#include "core/io/experiment.h"
#include "ui/charts/metric_chart.h"
#include "ui/common/about_view.h"
#include "ui/common/text_style.h"
#include "ui/rehearsal/batch_split_view.h"
#include "ui/window/main_window.h"

using namespace fitbench;

class TestExamples : public QObject {
  Q_OBJECT
 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("fitbench-tests"));
  }

  // Code spans keep their hyphens and spaces together (non-breaking kinds); fenced blocks,
  // backticks without a closing run and text outside spans are left as they are.
  void codeSpansStayWhole() {
    const QChar nbh(0x2011), nbsp(0x00A0);
    QCOMPARE(unbreakableCodeSpans(QStringLiteral("run `--devices 3` now")),
             QStringLiteral("run `") + nbh + nbh + QStringLiteral("devices") + nbsp +
                 QStringLiteral("3` now"));
    QCOMPARE(unbreakableCodeSpans(QStringLiteral("a-b `c d` e-f")),
             QStringLiteral("a-b `c") + nbsp + QStringLiteral("d` e-f"));
    // A double-backtick span may hold a single backtick.
    QCOMPARE(unbreakableCodeSpans(QStringLiteral("``a ` b``")),
             QStringLiteral("``a") + nbsp + QStringLiteral("`") + nbsp + QStringLiteral("b``"));
    // A stray backtick is text: what follows (a list, a link) is untouched.
    const QString stray = QStringLiteral("costs 5` more\n- item one\n[a-b](https://x.org/a-b)");
    QCOMPARE(unbreakableCodeSpans(stray), stray);
    // (A blank line before a fence is not a fence itself.)
    const QString fence =
        QStringLiteral("text\n\n```\nfitbench-cli run x.json --devices 2\n```\nafter `a-b`");
    QCOMPARE(unbreakableCodeSpans(fence),
             QStringLiteral("text\n\n```\nfitbench-cli run x.json --devices 2\n```\nafter `a") +
                 nbh + QStringLiteral("b`"));
    // A colon, a slash or a percent sign is held to what follows it (not after the span's end).
    const QChar wj(0x2060);
    QCOMPARE(unbreakableCodeSpans(QStringLiteral("until `cpu:1` and `a/b:`")),
             QStringLiteral("until `cpu:") + wj + QStringLiteral("1` and `a/") + wj +
                 QStringLiteral("b:`"));
    QCOMPARE(unbreakableCodeSpans(QStringLiteral("10: `x`")), QStringLiteral("10: `x`"));
    QCOMPARE(plainTyped(unbreakableCodeSpans(QStringLiteral("`--x y:z/w %`"))),
             QStringLiteral("`--x y:z/w %`"));
  }

  // A run of 60+ characters without a space gets a zero-width break every 30 (Qt laid out a
  // 200 KB token in 13 s); a link's address is left whole; a copy gives the text as typed.
  void longRunsGetBreaks() {
    const QChar zwsp(0x200B);
    const QString run(100, QLatin1Char('b'));
    const QString shown = breakableLongRuns(QStringLiteral("see ") + run + QStringLiteral(" end"));
    QCOMPARE(shown, QStringLiteral("see ") + run.left(30) + zwsp + run.mid(30, 30) + zwsp +
                        run.mid(60, 30) + zwsp + run.mid(90) + QStringLiteral(" end"));
    QCOMPARE(plainTyped(shown), QStringLiteral("see ") + run + QStringLiteral(" end"));
    const QString link = QStringLiteral(
        "[distribution_lib.py](https://github.com/keras-team/keras/blob/master/keras/src/"
        "distribution/distribution_lib.py) and short words");
    QCOMPARE(breakableLongRuns(link), link);
    QCOMPARE(breakableLongRuns(QString(59, QLatin1Char('c'))), QString(59, QLatin1Char('c')));
    AboutView about;
    about.setDescription(QStringLiteral("x"), QString(200000, QLatin1Char('d')));
    QVERIFY(about.toPlainText().contains(QString(30, QLatin1Char('d')) + zwsp));
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
    // Copying the whole explanation gives the text as typed (no U+2011 or U+00A0 from the
    // unbreakable code spans).
    about->selectAll();
    about->copy();
    const QString copied = QGuiApplication::clipboard()->text();
    QVERIFY(copied.contains(QString::fromStdString(spec.name)));
    QVERIFY(!copied.contains(QChar(0x2011)) && !copied.contains(QChar(0x00A0)));

    const QString file = QFileInfo(path).fileName();
    const bool cnn = file == QStringLiteral("fashion_mnist_cnn.json");
    const bool images = cnn || file == QStringLiteral("fashion_mnist_mlp.json");
#ifdef FITBENCH_SANITIZED
    // 60,000 images for 10 epochs take minutes under the sanitizers (without AVX-512): there the
    // lessons train on their first 2,000 images, typed into the Data tab; Release trains them
    // whole. The convolutional lesson's epochs cost 20 times the MLP's, most of it validating
    // on the 10,000 test images: there it trains on 1,000 and its test-image box is unticked
    // with a click (the MLP's lesson validates on them, and the engine's tests run the
    // convolution's inference under the sanitizers). The BatchNormalization lesson's 6,000
    // images on 8 devices become 2,000 the same way. The folder lesson's three convolutions
    // take 30 times Release's time here (3 minutes for its 40 epochs): it trains 8, typed into
    // the Training tab (its accuracy is checked in Release, its reading by tst_image_folder).
    if (file == QStringLiteral("image_folder_shapes.json")) {
      const auto boxes = w.findChildren<QSpinBox*>(QStringLiteral("epochs"));
      QCOMPARE(boxes.size(), qsizetype{1});
      QCOMPARE(boxes.front()->value(), spec.fit.epochs);
      boxes.front()->setValue(8);
      QCOMPARE(w.currentSpec().fit.epochs, 8);
    }
    if (images || file == QStringLiteral("batch_norm_statistics.json")) {
      auto* subset = w.findChild<QSpinBox*>(QStringLiteral("subset"));
      QVERIFY(subset);
      const int first = cnn ? 1000 : 2000;
      subset->setValue(first);
      QCOMPARE(w.currentSpec().data.subset, int64_t{first});
      if (cnn) {
        w.showView(QStringLiteral("data"));
        auto* test = w.findChild<QCheckBox*>(QStringLiteral("validateOnTest"));
        QVERIFY(test && test->isVisible() && test->isChecked());
        QTest::mouseClick(test, Qt::LeftButton, {}, QPoint(4, test->height() / 2));
        QVERIFY(!w.currentSpec().data.validation_test);
      }
    }
#endif
    QSignalSpy ended(&w, &MainWindow::runEnded);
    QElapsedTimer clock;
    clock.start();
    w.run();
    QVERIFY(ended.wait(300000));
    QCOMPARE(ended.first().first().toBool(), true);
    QVERIFY(w.lastResult());
    const int epochs = int(w.lastResult()->history.epoch.size());
    QVERIFY(epochs >= 1);
    // To its end: every epoch, unless EarlyStopping ended it (and then it says so).
    const FitOptions fit = w.currentSpec().fit;  // as typed in the Training tab
    if (w.lastResult()->stop_reason.empty())
      QCOMPARE(epochs, fit.epochs - fit.initial_epoch);
    else
      QCOMPARE(w.lastResult()->stop_reason, std::string("early_stopping"));
    QCOMPARE(w.lossChart()->epochPointCount(false), epochs);
    // Restored weights are said beside the final values (which are the last epoch's).
    if (const auto restored = w.lastResult()->restored_epoch) {
      const QString log = w.logView()->toPlainText();
      QVERIFY2(log.contains(QStringLiteral("weights restored from epoch %1 (%2 ")
                                .arg(*restored + 1)
                                .arg(QString::fromStdString(w.lastResult()->restored_monitor))),
               qPrintable(log.right(400)));
    }
    // The image lessons' promises: the MLP classifies at least 87% of the test images, the
    // convolutional network at least 90% (Fashion-MNIST's own benchmark table gives 0.88 for an
    // MLP and 0.916 for a network of two convolutions).
#ifndef FITBENCH_SANITIZED
    if (images) {
      const double test_accuracy = w.lastResult()->history.history.at("val_accuracy").back();
      QVERIFY2(test_accuracy >= (cnn ? 0.90 : 0.87), qPrintable(QString::number(test_accuracy)));
    }
    // The folder lesson: "after 40 close to 87% (65 of the 75)" validation pictures.
    if (file == QStringLiteral("image_folder_shapes.json")) {
      const double accuracy = w.lastResult()->history.history.at("val_accuracy").back();
      QVERIFY2(accuracy >= 0.85, qPrintable(QString::number(accuracy)));
    }
#endif
    qInfo("%s: %d epochs in %.1f s", qPrintable(QFileInfo(path).fileName()), epochs,
          clock.elapsed() / 1000.0);
  }

  // The BatchNormalization lesson as a learner follows it (in Release: runsToItsEnd trains it
  // under the sanitizers, and the engine's tests check both kinds of statistics there): Run with
  // the global batch's statistics, then choose "Per device" on the Devices tab with the keys and
  // Run again. The Batch split view says which is in use, and the numbers are the lesson's.
  void batchNormalizationLesson() {
#ifdef FITBENCH_SANITIZED
    QSKIP("the lesson's numbers are Release's (runsToItsEnd trains the lesson here)");
#endif
    MainWindow w;
    w.setProperty("batch", true);
    w.resize(1280, 800);
    w.show();
    QString error;
    QVERIFY2(w.openFile(QStringLiteral(FITBENCH_SOURCE_DIR
                                       "/resources/examples/batch_norm_statistics.json"),
                        &error, true),
             qPrintable(error));
    QVERIFY2(w.batchSplitView()->statisticsNote().contains(
                 QStringLiteral("every shard is normalized by the whole batch's statistics")),
             qPrintable(w.batchSplitView()->statisticsNote()));
    const auto train = [&w] {
      QSignalSpy ended(&w, &MainWindow::runEnded);
      w.run();
      return ended.wait(300000) && ended.first().first().toBool() && w.lastResult();
    };
    QVERIFY(train());
    const auto global = w.lastResult()->history.history;
    w.showView(QStringLiteral("devices"));
    auto* statistics = w.findChild<QComboBox*>(QStringLiteral("batchNormStatistics"));
    QVERIFY(statistics && statistics->isVisible());
    statistics->setFocus();
    QTest::keyClick(statistics, Qt::Key_Down);
    QCOMPARE(statistics->currentText(), QStringLiteral("Per device (PyTorch DDP)"));
    QCOMPARE(w.currentSpec().devices.batch_norm_statistics, std::string("per_device"));
    QVERIFY2(w.batchSplitView()->statisticsNote().contains(
                 QStringLiteral("each device normalizes its shard by that shard's own")),
             qPrintable(w.batchSplitView()->statisticsNote()));
    QVERIFY(train());
    const auto perDevice = w.lastResult()->history.history;
    // "about 86% of the training images and 83% of the test images"; per device "near 64% on
    // the training images and 73% on the test images".
    const double a = global.at("accuracy").back(), va = global.at("val_accuracy").back();
    const double p = perDevice.at("accuracy").back(), vp = perDevice.at("val_accuracy").back();
    qInfo("global %.4f / %.4f, per device %.4f / %.4f", a, va, p, vp);
    QVERIFY(std::abs(a - 0.86) < 0.01 && std::abs(va - 0.83) < 0.01);
    QVERIFY(std::abs(p - 0.64) < 0.01 && std::abs(vp - 0.73) < 0.01);
  }
};

QTEST_MAIN(TestExamples)
#include "tst_examples.moc"
