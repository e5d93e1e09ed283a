// fitbench: the workbench window. `fitbench [EXPERIMENT] [--devices N] [--processes P] [--run |
// --sweep
// [--jobs N]] [--layout NAME] [--show VIEWS] [--size WxH] [--screenshot FILE.png] [--history
// FILE] [--trace FILE.json] [--quit]` opens an experiment, optionally
// trains it at once, saves a picture of the window when training ends, and quits: for teaching
// demos and automation.
#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QImageWriter>
#include <QRegularExpression>
#include <QThread>
#include <QTimer>
#include <cstdio>

#include "app/command_line.h"
#include "app/repeated_option.h"
#include "core/base/error.h"
#include "core/distribution/trace/trace.h"
#include "core/file_checks.h"
#include "core/run/target.h"
#include "ui/charts/metric_chart.h"
#include "ui/images/images_view.h"
#include "ui/rehearsal/capacity_view.h"
#include "ui/rehearsal/device_timeline_view.h"
#include "ui/rehearsal/target_chooser.h"
#include "ui/window/main_window.h"

namespace {

void fail(const QString& message) {
  std::fprintf(stderr, "fitbench: %s\n",
               fitbench::printable_message(message.toStdString()).c_str());
}

bool saveScreenshot(fitbench::MainWindow& window, const QString& path) {
  // The Capacity view plans each change after a short pause on its own thread: a picture taken
  // right after a quick run waits for it (a few hundred milliseconds at most; 10 s for a large
  // CSV file).
  QElapsedTimer waited;
  waited.start();
  while (window.capacityView()->isBusy() && waited.elapsed() < 10000) {
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(5);
  }
  window.lossChart()->flushNow();
  window.metricChart()->flushNow();
  QApplication::processEvents();
  if (!window.grab().save(path)) {
    fail(QStringLiteral("%1: could not write the screenshot (is it a .png, .jpg or .bmp file?)")
             .arg(path));
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (const std::string error = fitbench::non_utf8_argument_error(argc, argv); !error.empty()) {
    std::fprintf(stderr, "fitbench: %s\n", error.c_str());
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY")) {
    fail(
        QStringLiteral("no display to open the window on (DISPLAY is not set); run "
                       "fitbench-cli for headless training, or set QT_QPA_PLATFORM=offscreen"));
    return 3;
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("fitbench"));
  QApplication::setApplicationName(QStringLiteral("fitbench"));
  QApplication::setApplicationVersion(QStringLiteral(FITBENCH_VERSION));

  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("A workbench for rehearsing Keras-style distributed training."));
  const QCommandLineOption help = parser.addHelpOption();
  const QCommandLineOption version = parser.addVersionOption();
  parser.addPositionalArgument(QStringLiteral("EXPERIMENT"),
                               QStringLiteral("An experiment file to open (JSON)."),
                               QStringLiteral("[EXPERIMENT]"));
  parser.addOption({QStringLiteral("devices"),
                    QStringLiteral("Number of simulated CPU devices (1-16), overriding the "
                                   "experiment's."),
                    QStringLiteral("N")});
  parser.addOption({QStringLiteral("processes"),
                    QStringLiteral("Run on P processes with Open MPI (mpirun -np P), the devices "
                                   "spread over them (Devices tab, Processes)."),
                    QStringLiteral("P")});
  parser.addOption({QStringLiteral("run"), QStringLiteral("Start training at once.")});
  parser.addOption({QStringLiteral("sweep"),
                    QStringLiteral("Run the experiment's sweep section at once (Run > Sweep); "
                                   "--screenshot and --quit wait for it to end.")});
  parser.addOption({QStringLiteral("jobs"),
                    QStringLiteral("Cores a sweep's trials share (default: this machine's)."),
                    QStringLiteral("N")});
  parser.addOption({QStringLiteral("show"),
                    QStringLiteral("Bring these views to the front (comma-separated): %1.")
                        .arg(fitbench::MainWindow::viewNames().join(QStringLiteral(", "))),
                    QStringLiteral("VIEWS")});
  parser.addOption({QStringLiteral("layout"),
                    QStringLiteral("Start in this one-click layout (View > Layout): %1.")
                        .arg(fitbench::MainWindow::layoutNames().join(QStringLiteral(", "))),
                    QStringLiteral("NAME")});
  parser.addOption({QStringLiteral("target"),
                    QStringLiteral("The target of the Capacity view and of the timeline's "
                                   "modelled time: %1, or a target file (JSON), as fitbench-cli "
                                   "plan --target.")
                        .arg(QString::fromStdString(fitbench::target_preset_names())),
                    QStringLiteral("NAME|FILE")});
  parser.addOption({QStringLiteral("size"),
                    QStringLiteral("The window's size in pixels, e.g. 1280x720 (a projector) "
                                   "(default: the last session's; 1440x900 with --screenshot or "
                                   "--quit)."),
                    QStringLiteral("WxH")});
  parser.addOption({QStringLiteral("screenshot"),
                    QStringLiteral("Save a picture of the window when training ends (with --run) "
                                   "or once it is shown."),
                    QStringLiteral("FILE.png")});
  parser.addOption(
      {QStringLiteral("history"),
       QStringLiteral("Write each run's History to FILE.json or FILE.csv when it ends, "
                      "as fitbench-cli run --history does."),
       QStringLiteral("FILE")});
  parser.addOption({QStringLiteral("trace"),
                    QStringLiteral("Write each distributed run's per-device spans to FILE.json "
                                   "(Chrome trace format) when it ends, as fitbench-cli run "
                                   "--trace does."),
                    QStringLiteral("FILE.json")});
  parser.addOption({QStringLiteral("quit"),
                    QStringLiteral("Quit when training ends (with --run) or after the "
                                   "screenshot. Exit status: 0 success, 1 training failed, 2 a bad "
                                   "experiment, option or file.")});
  // A usage error exits 2, as every other bad input (QCommandLineParser::process would exit 1).
  if (!parser.parse(QApplication::arguments())) {
    fail(parser.errorText());
    return 2;
  }
  if (parser.isSet(help)) parser.showHelp(0);
  if (parser.isSet(version)) parser.showVersion();
  if (const QString repeated = fitbench::repeated_option_error(parser); !repeated.isEmpty()) {
    fail(repeated);
    return 2;
  }

  const bool run = parser.isSet(QStringLiteral("run"));
  const bool sweep = parser.isSet(QStringLiteral("sweep"));
  if (run && sweep) {
    fail(QStringLiteral("--run and --sweep: choose one"));
    return 2;
  }
  int jobs = 0;
  if (parser.isSet(QStringLiteral("jobs"))) {
    bool ok = false;
    jobs = parser.value(QStringLiteral("jobs")).toInt(&ok);
    if (!ok || jobs < 1 || jobs > 64) {
      fail(QStringLiteral("--jobs: must be an integer from 1 to 64, got \"%1\"")
               .arg(parser.value(QStringLiteral("jobs"))));
      return 2;
    }
  }
  const bool quit = parser.isSet(QStringLiteral("quit"));
  const QString screenshot = parser.value(QStringLiteral("screenshot"));
  const bool batch = quit || !screenshot.isEmpty();
  if (!screenshot.isEmpty()) {
    // Checked now, so that a wrong path does not cost the run it was to show.
    const QByteArray suffix = QFileInfo(screenshot).suffix().toLower().toLatin1();
    if (!QImageWriter::supportedImageFormats().contains(suffix)) {
      fail(QStringLiteral("--screenshot: %1: cannot save a picture as '.%2'; use a .png, .jpg or "
                          ".bmp file name")
               .arg(screenshot, QString::fromLatin1(suffix)));
      return 2;
    }
    try {
      fitbench::check_writable_file(screenshot.toStdString());
    } catch (const fitbench::InputError& e) {
      fail(QStringLiteral("--screenshot: %1").arg(QString::fromStdString(e.what())));
      return 2;
    }
  }

  // --history and --trace: checked now as fitbench-cli checks them; the run plan checks them
  // against the experiment's own files when a run starts.
  const QString history = parser.value(QStringLiteral("history"));
  const QString trace = parser.value(QStringLiteral("trace"));
  for (const auto& [option, file] :
       {std::pair{QStringLiteral("history"), history}, std::pair{QStringLiteral("trace"), trace}}) {
    if (!parser.isSet(option)) continue;
    if (file.isEmpty()) {
      fail(QStringLiteral("--%1: needs a file name").arg(option));
      return 2;
    }
    if (option == QStringLiteral("history") &&
        !file.endsWith(QStringLiteral(".json"), Qt::CaseInsensitive) &&
        !file.endsWith(QStringLiteral(".csv"), Qt::CaseInsensitive)) {
      fail(QStringLiteral("--history: must name a .json or a .csv file, got \"%1\"").arg(file));
      return 2;
    }
    try {
      fitbench::check_writable_file(file.toStdString());
    } catch (const fitbench::InputError& e) {
      fail(QStringLiteral("--%1: %2").arg(option, QString::fromStdString(e.what())));
      return 2;
    }
  }

  QSize size = batch ? QSize(1440, 900) : QSize();
  if (parser.isSet(QStringLiteral("size"))) {
    const QString value = parser.value(QStringLiteral("size"));
    static const QRegularExpression pattern(QStringLiteral("^(\\d{3,4})[xX](\\d{3,4})$"));
    const QRegularExpressionMatch m = pattern.match(value.trimmed());
    const int w = m.hasMatch() ? m.captured(1).toInt() : 0;
    const int h = m.hasMatch() ? m.captured(2).toInt() : 0;
    if (w < 640 || h < 480 || w > 7680 || h > 4320) {
      fail(QStringLiteral("--size: expected WIDTHxHEIGHT in pixels from 640x480 to 7680x4320, "
                          "such as 1280x720, got \"%1\"")
               .arg(value));
      return 2;
    }
    size = QSize(w, h);
  }

  fitbench::MainWindow window;
  // Automation: no modal dialogs, no prompt on quit, the user's session left as it was.
  window.setProperty("batch", batch);
  window.setRunOutputs(history, trace);
  if (size.isValid()) window.resize(size);

  const QStringList args = parser.positionalArguments();
  if (args.size() > 1) {
    fail(QStringLiteral("expected at most one EXPERIMENT file, got %1").arg(args.size()));
    return 2;
  }
  if (!args.isEmpty()) {
    QString error;
    if (!window.openFile(args.first(), &error, batch)) {
      if (batch) {
        fail(error);
        return 2;
      }
    }
  } else if (!batch) {
    window.restoreLastSession();
    if (size.isValid()) window.resize(size);  // over the last session's geometry
  }
  if (parser.isSet(QStringLiteral("devices"))) {
    bool ok = false;
    const int n = parser.value(QStringLiteral("devices")).toInt(&ok);
    if (!ok || n < 1 || n > 16) {
      fail(QStringLiteral("--devices: must be an integer from 1 to 16, got \"%1\"")
               .arg(parser.value(QStringLiteral("devices"))));
      return 2;
    }
    window.setDeviceOverride(n);
  }
  if (parser.isSet(QStringLiteral("processes"))) {
    bool ok = false;
    const int p = parser.value(QStringLiteral("processes")).toInt(&ok);
    const QString why =
        ok ? window.setProcessCount(p) : QStringLiteral("must be an integer from 1 to 16");
    if (!why.isEmpty()) {
      fail(QStringLiteral("--processes: %1 (got \"%2\")")
               .arg(why, parser.value(QStringLiteral("processes"))));
      return 2;
    }
  }
  if (parser.isSet(QStringLiteral("target"))) {
    const QString target = parser.value(QStringLiteral("target"));
    fitbench::CapacityView* capacity = window.capacityView();
    if (!capacity->selectTarget(target) && !capacity->setTargetFile(target)) {
      fail(QStringLiteral("--target: %1").arg(capacity->targetErrorText()));
      return 2;
    }
    fitbench::TargetChooser* timeline = window.timelineView()->targetChooser();
    if (!timeline->selectTarget(target)) timeline->setTargetFile(target, nullptr);
  }
  const QStringList views =
      parser.value(QStringLiteral("show")).split(QLatin1Char(','), Qt::SkipEmptyParts);
  for (const QString& view : views) {
    if (!fitbench::MainWindow::viewNames().contains(view.trimmed())) {
      fail(QStringLiteral("--show: unknown view \"%1\"; expected some of: %2")
               .arg(view, fitbench::MainWindow::viewNames().join(QStringLiteral(", "))));
      return 2;
    }
  }
  const QString layout = parser.value(QStringLiteral("layout"));
  if (!layout.isEmpty() && !fitbench::MainWindow::layoutNames().contains(layout)) {
    fail(QStringLiteral("--layout: unknown layout \"%1\"; expected one of: %2")
             .arg(layout, fitbench::MainWindow::layoutNames().join(QStringLiteral(", "))));
    return 2;
  }
  // A message about the experiment, prefixed with its file as fitbench-cli names it.
  const auto inFile = [&](const QString& error) {
    if (args.isEmpty() || error.startsWith(args.first()) || error.startsWith(QStringLiteral("--")))
      return error;
    return args.first() + QStringLiteral(": ") + error;
  };
  const auto showViews = [&] {
    if (!layout.isEmpty()) window.applyLayout(layout);
    for (const QString& view : views) window.showView(view.trimmed());
  };
  window.show();
  showViews();

  int exitCode = 0;
  if (run) {
    QObject::connect(&window, &fitbench::MainWindow::runEnded, &app, [&](bool ok) {
      exitCode = ok ? 0 : window.lastResult() ? 1 : 2;
      // What the window shows beside the field or in its log, also on stderr for the caller.
      // A run plan's problems come one per line; each is said on its own line.
      if (!ok && !window.lastRunError().isEmpty())
        for (const QString& line : window.lastRunError().split(QLatin1Char('\n')))
          fail(inFile(line));
      // With --quit, a distributed run's per-device split on stderr, as fitbench-cli prints it
      // (the figures the timeline shows for this run).
      if (quit && window.lastResult())
        for (size_t d = 0; d < window.lastResult()->usage.size(); ++d)
          std::fprintf(
              stderr, "%s\n",
              fitbench::usage_line("cpu:" + std::to_string(d), window.lastResult()->usage[d])
                  .c_str());
      showViews();
      // The Images view predicts once shown: the picture waits for it.
      auto finish = [&] {
        if (!screenshot.isEmpty() && !saveScreenshot(window, screenshot)) exitCode = 2;
        if (quit) QTimer::singleShot(0, &app, [&] { window.close(); });
      };
      if (!screenshot.isEmpty() && window.imagesView()->busy())
        QObject::connect(
            window.imagesView(), &fitbench::ImagesView::partReady, &app,
            [&, finish] { QTimer::singleShot(100, &app, finish); },  // once laid out
            Qt::SingleShotConnection);
      else
        finish();
    });
    QTimer::singleShot(0, &window, [&] { window.run(); });
  } else if (sweep) {
    QObject::connect(&window, &fitbench::MainWindow::sweepEnded, &app, [&](bool ok) {
      if (!ok) {
        exitCode = 2;
        for (const QString& line : window.lastRunError().split(QLatin1Char('\n')))
          if (!line.isEmpty()) fail(inFile(line));
      }
      showViews();
      // The view and the charts take the last trials on their next redraw.
      QTimer::singleShot(100, &window, [&] {
        if (!screenshot.isEmpty() && !saveScreenshot(window, screenshot)) exitCode = 2;
        if (quit) window.close();
      });
    });
    QTimer::singleShot(0, &window, [&] { window.runSweep(jobs); });
  } else if (!screenshot.isEmpty() || quit) {
    QTimer::singleShot(300, &window, [&] {
      if (!screenshot.isEmpty() && !saveScreenshot(window, screenshot)) exitCode = 2;
      // Without --run, what Run would refuse (a CSV cell, a mesh, a layer) is still a bad
      // experiment: said on stderr, exit 2.
      if (const QString error = window.setupError(); !error.isEmpty()) {
        fail(inFile(error));
        exitCode = 2;
      }
      if (quit) window.close();
    });
  }
  const int code = app.exec();
  return exitCode != 0 ? exitCode : code;
}
