// Training throughput with the workbench window open and its charts live, against the same
// experiment trained headless as fitbench-cli does (plan_run + execute_run, text to a null
// stream; both sides time fit() alone, as RunResult::seconds does),
// and the UI thread's longest stall while training runs. Medians of several alternating runs.
// Run with QT_QPA_PLATFORM=offscreen (set here when unset) or under xvfb-run.
// Usage: bench_gui [REPEATS] [WORKLOADS], WORKLOADS a comma list of seed, mlp, images and cnn
// (default all).
#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <ostream>
#include <streambuf>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "core/io/experiment.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "ui/window/main_window.h"
#include "ui/window/training_session.h"

using namespace fitbench;

namespace {

using fitbench::bench::median;

// Times every event the UI thread dispatches while `on`, keeping the longest: a stall of the UI
// thread is one long event (a tick, a paint, a layout), and its type and receiver say which.
class TimingApplication : public QApplication {
 public:
  using QApplication::QApplication;
  bool notify(QObject* receiver, QEvent* event) override {
    if (!on || QThread::currentThread() != thread()) return QApplication::notify(receiver, event);
    QElapsedTimer t;
    t.start();
    const int type = event->type();
    const char* name = receiver->metaObject()->className();
    ++depth;
    const bool result = QApplication::notify(receiver, event);
    --depth;
    const double ms = t.nsecsElapsed() * 1e-6;
    if (depth == 0 && ms >= 4.0 && log.size() < 4000)
      log.push_back({clock.nsecsElapsed() * 1e-6 - ms, ms, type, name});
    if (ms > longestMs) {
      longestMs = ms;
      longestType = type;
      longestReceiver = name;
    }
    return result;
  }
  struct Entry {
    double startMs, ms;
    int type;
    std::string receiver;
  };
  bool on = false;
  int depth = 0;
  QElapsedTimer clock;     // started in main
  std::vector<Entry> log;  // outermost events of 4 ms or more (BENCH_GUI_EVENTS=1 prints)
  double longestMs = 0.0;
  int longestType = 0;
  std::string longestReceiver;
};

class NullBuf : public std::streambuf {
 protected:
  int_type overflow(int_type c) override { return traits_type::not_eof(c); }
  std::streamsize xsputn(const char*, std::streamsize n) override { return n; }
};

// Seconds of fit() in a run as the CLI makes it.
double headless(const ExperimentSpec& spec) {
  NullBuf buf;
  std::ostream out(&buf);
  RunPlan plan = plan_run(spec, {}, {});
  RunIO io;
  io.out = &out;
  return execute_run(plan, io).seconds;
}

struct WindowRun {
  double seconds = 0.0;
  double stallMs = 0.0;
  double tickMs = 0.0;
};

// The window's run of `spec`, its events timed (app.on) from after the experiment is loaded to
// the run's end: loading reads the data set, once, before Run is pressed.
WindowRun windowed(TimingApplication& app, MainWindow& window, const ExperimentSpec& spec) {
  window.loadSpec(spec, QString());
  QCoreApplication::processEvents();
  app.on = true;
  QEventLoop loop;
  QObject::connect(&window, &MainWindow::runEnded, &loop, &QEventLoop::quit);
  QElapsedTimer t;
  t.start();
  QTimer::singleShot(0, &window, [&] { window.run(); });
  loop.exec();
  app.on = false;
  WindowRun r;
  r.seconds = window.lastResult() ? window.lastResult()->seconds : t.nsecsElapsed() * 1e-9;
  r.stallMs = window.longestStallMs();
  r.tickMs = window.longestTickMs();
  return r;
}

ExperimentSpec workload(const char* which) {
  ExperimentSpec spec;
  spec.seed = 7;
  spec.fit.verbose = 2;
  spec.fit.shuffle = true;
  LayerSpec dense;
  dense.class_name = "Dense";
  if (std::string(which) == "seed") {
    // The seed: one Dense unit, 128 samples, batch 16: steps of about a microsecond, the worst
    // case for per-batch overhead.
    spec.data.generator = "seed";
    spec.data.samples = 128;
    dense.units = 1;
    dense.activation = "sigmoid";
    spec.model.layers = {dense};
    spec.compile.optimizer.learning_rate = 0.2;
    spec.fit.epochs = 20000;
    spec.fit.batch_size = 16;
  } else if (std::string(which) == "images") {
    // Keras's first image tutorial as the gallery has it (resources/examples/
    // fashion_mnist_mlp.json): the 60,000 Fashion-MNIST images, validated on the 10,000 test
    // images each epoch, 2 of its epochs of 1,875 steps.
    spec = read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_mlp.json");
    spec.fit.epochs = 2;
    return spec;
  } else if (std::string(which) == "cnn") {
    // The gallery's convolutional network (fashion_mnist_cnn.json): one epoch of its 1,875
    // steps of Conv2D and pooling, validated on the 10,000 test images.
    spec = read_experiment(FITBENCH_SOURCE_DIR "/resources/examples/fashion_mnist_cnn.json");
    spec.fit.epochs = 1;
    return spec;
  } else {
    // A Playground-sized MLP on the spiral: 2 -> 64 -> 64 -> 1, 2000 samples, batch 32.
    spec.data.generator = "spiral";
    spec.data.samples = 2000;
    spec.data.noise = 0.1;
    dense.units = 64;
    dense.activation = "tanh";
    LayerSpec out = dense;
    out.units = 1;
    out.activation = "sigmoid";
    spec.model.layers = {dense, dense, out};
    spec.compile.optimizer.class_name = "Adam";
    spec.compile.optimizer.learning_rate = 0.01;
    spec.fit.epochs = 150;
    spec.fit.batch_size = 32;
    spec.fit.validation_split = 0.2;
  }
  spec.compile.loss.name = "binary_crossentropy";
  spec.compile.metrics = {"accuracy"};
  return spec;
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  TimingApplication app(argc, argv);
  app.clock.start();
  QApplication::setOrganizationName(QStringLiteral("fitbench-bench"));
  const int repeats = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  // The workloads to run, e.g. "images,cnn"; all by default.
  const QStringList chosen = argc > 2 ? QString::fromLatin1(argv[2]).split(QLatin1Char(','))
                                      : QStringList{"seed", "mlp", "images", "cnn"};
  MainWindow window;
  window.setProperty("batch", true);
  window.resize(1440, 900);
  window.show();

  std::printf("%-6s %12s %12s %8s %14s %14s\n", "model", "cli s", "window s", "ratio",
              "max stall ms", "max tick ms");
  for (const char* which : {"seed", "mlp", "images", "cnn"}) {
    if (!chosen.contains(QLatin1String(which))) continue;
    const ExperimentSpec spec = workload(which);
    std::vector<double> cli, gui, ratio, stall, tick;
    for (int i = 0; i < repeats; ++i) {
      const double c = headless(spec);
      const WindowRun g = windowed(app, window, spec);
      cli.push_back(c);
      gui.push_back(g.seconds);
      ratio.push_back(c / g.seconds);
      stall.push_back(g.stallMs);
      tick.push_back(g.tickMs);
    }
    std::printf("%-6s %12.3f %12.3f %7.1f%% %14.1f %14.1f\n", which, median(cli), median(gui),
                100.0 * median(ratio), *std::max_element(stall.begin(), stall.end()),
                *std::max_element(tick.begin(), tick.end()));
    std::printf("       stall ms per run:");
    for (const double s : stall) std::printf(" %.1f", s);
    std::printf("\n");
  }
  if (qEnvironmentVariableIsSet("BENCH_GUI_EVENTS"))
    for (const auto& e : app.log)
      std::printf("event at %9.1f ms: %6.1f ms, type %3d, %s\n", e.startMs, e.ms, e.type,
                  e.receiver.c_str());
  std::printf("longest single UI event: %.1f ms, type %d, receiver %s\n", app.longestMs,
              app.longestType, app.longestReceiver.c_str());
  std::printf(
      "ratio: window throughput as a share of headless (median of %d pairs)\n"
      "max stall: the UI thread's longest gap beyond its 33 ms tick over all runs\n"
      "max tick: the longest a tick's own work (charts, log, progress) took\n",
      repeats);
  return 0;
}
