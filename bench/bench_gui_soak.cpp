// The window over a long session: Run / Reset cycles and experiment opens in one process, with
// the process's resident memory (VmRSS) and thread count (from /proc/self/status) read after a
// warm-up and at the end. Targets (issue "Hardening"): under 20 MB of growth and no new threads
// over 500 cycles and 200 opens. Measured, not asserted in CI; the exit code says whether the
// targets were met (1 when not).
//   bench_gui_soak [--cycles N] [--opens N] [--forget]
// --forget empties the session's runs and the log after every cycle: what is left of the growth
// is neither.
// The cycles train one_vs_data_parallel.json (DataParallel on 4 devices: device threads, the
// timeline, the batch split and the collectives view all fed) for 2 epochs each, as Run and Reset
// do from the toolbar; every run stays in the session's runs, as the window keeps them. The
// opens go round every example in resources/examples. Run with QT_QPA_PLATFORM=offscreen (set
// here when unset) or under xvfb-run.
#include <QApplication>
#include <QDir>
#include <QEventLoop>
#include <QPlainTextEdit>
#include <QTimer>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "bench/bench_util.h"
#include "core/io/experiment.h"
#include "ui/common/session_runs.h"
#include "ui/window/main_window.h"

using namespace fitbench;

namespace {

using Usage = bench::ProcessUsage;
using bench::process_usage;

// Lets queued events (the last ticks, deferred deletes) run, so that a reading is not taken
// halfway through the window's own work.
void settle() {
  for (int i = 0; i < 3; ++i) {
    QCoreApplication::sendPostedEvents(nullptr, QEvent::DeferredDelete);
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
  }
}

bool run_once(MainWindow& window) {
  QEventLoop loop;
  bool ok = false;
  const auto connection = QObject::connect(&window, &MainWindow::runEnded, &loop, [&](bool good) {
    ok = good;
    loop.quit();
  });
  QTimer::singleShot(0, &window, [&] { window.run(); });
  loop.exec();
  QObject::disconnect(connection);
  return ok;
}

void print(const char* what, int done, const Usage& u, const Usage& base) {
  std::printf("%-7s %5d   rss %7.1f MB (%+6.1f)   threads %3d (%+d)\n", what, done, u.rss_mb,
              u.rss_mb - base.rss_mb, u.threads, u.threads - base.threads);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  int cycles = 500, opens = 200;
  bool forget = false;
  for (int i = 1; i < argc; ++i) forget = forget || std::strcmp(argv[i], "--forget") == 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--cycles") == 0) cycles = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--opens") == 0) opens = std::max(1, std::atoi(argv[i + 1]));
  }
  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("fitbench-bench"));
  std::printf("host: %s\nload before: %s\n", bench::host_cpu().c_str(),
              bench::load_average().c_str());
  MainWindow window;
  window.setProperty("batch", true);
  window.resize(1440, 900);
  window.show();
  settle();

  // Run / Reset.
  const QString examples = QStringLiteral(FITBENCH_SOURCE_DIR "/resources/examples/");
  ExperimentSpec spec = read_experiment((examples + "one_vs_data_parallel.json").toStdString());
  spec.fit.epochs = 2;
  window.loadSpec(spec, QString());
  const int warmup = std::min(20, cycles);
  Usage base;
  int failed = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int c = 1; c <= cycles; ++c) {
    if (!run_once(window)) ++failed;
    window.reset();
    if (forget) {
      window.sessionRuns()->clear();
      window.logView()->clear();
    }
    if (c == warmup) {
      settle();
      base = process_usage();
      print("cycles", c, base, base);
    } else if (c % 100 == 0 || c == cycles) {
      settle();
      print("cycles", c, process_usage(), base);
      std::printf("        log lines %d, runs kept %zu\n", window.logView()->blockCount(),
                  window.sessionRuns()->runs().size());
    }
  }
  settle();
  const Usage cycled = process_usage();
  const double cycle_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const size_t kept = window.sessionRuns()->runs().size();

  // Opens, round every example.
  QStringList files = QDir(examples).entryList({"*.json"}, QDir::Files, QDir::Name);
  const int warm_opens = std::min(static_cast<int>(files.size()), opens);
  Usage open_base;
  int refused = 0;
  for (int o = 1; o <= opens; ++o) {
    QString error;
    if (!window.openFile(examples + files[(o - 1) % files.size()], &error, true)) {
      ++refused;
      std::printf("open refused: %s\n", qPrintable(error));
    }
    if (o == warm_opens) {
      settle();
      open_base = process_usage();
      print("opens", o, open_base, open_base);
    } else if (o % 50 == 0 || o == opens) {
      settle();
      print("opens", o, process_usage(), open_base);
    }
  }
  settle();
  const Usage opened = process_usage();

  const double cycle_growth = cycled.rss_mb - base.rss_mb;
  const double open_growth = opened.rss_mb - open_base.rss_mb;
  const bool met = cycle_growth < 20.0 && open_growth < 20.0 && cycled.threads <= base.threads &&
                   opened.threads <= open_base.threads && failed == 0 && refused == 0;
  std::printf(
      "%d Run / Reset cycles in %.0f s (%d failed; %zu runs kept in the session): %+.1f MB, %+d "
      "threads after cycle %d\n",
      cycles, cycle_seconds, failed, kept, cycle_growth, cycled.threads - base.threads, warmup);
  std::printf("%d opens of %lld examples (%d refused): %+.1f MB, %+d threads after open %d\n",
              opens, static_cast<long long>(files.size()), refused, open_growth,
              opened.threads - open_base.threads, warm_opens);
  std::printf("targets (under 20 MB each, no new threads): %s\n", met ? "met" : "NOT met");
  return met ? 0 : 1;
}
