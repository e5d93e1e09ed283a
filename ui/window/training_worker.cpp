#include "ui/window/training_worker.h"

#include <QElapsedTimer>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ostream>
#include <streambuf>
#ifdef __linux__
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/spec/devices.h"
#include "core/run/run.h"
#include "core/run/run_plan.h"
#include "core/training/callback.h"
#include "ui/window/feed_callback.h"

namespace fitbench {

void LiveFeed::reset(int epochsTotal, int steps) {
  std::lock_guard lock(m_mutex);
  QString text = std::move(m_pending.text);  // printed before training began
  m_pending = FeedUpdate{};
  m_pending.text = std::move(text);
  m_pending.epochs_total = epochsTotal;
  m_pending.steps = steps;
  m_pending.any = true;
  m_traceHead = m_traceCount = 0;
  m_traceDropped = 0;
}

void LiveFeed::addBatch(int epoch, int batch, int steps, double loss, std::optional<double> metric,
                        int64_t stepsSince, int64_t samplesSince, double elapsed) {
  const double x = epoch + double(batch + 1) / std::max(steps, 1);
  std::lock_guard lock(m_mutex);
  m_pending.batchLoss.append(QPointF(x, loss));
  // A metric's NaN (a diverged run) is a point the chart counts as not drawn; none is no metric.
  if (metric) m_pending.batchMetric.append(QPointF(x, *metric));
  m_pending.epoch = epoch;
  m_pending.step = batch + 1;
  m_pending.steps = steps;
  m_pending.stepsDone += stepsSince;
  m_pending.samplesDone += samplesSince;
  m_pending.elapsed = elapsed;
  m_pending.any = true;
}

void LiveFeed::addEpoch(const FeedUpdate::Epoch& epoch) {
  std::lock_guard lock(m_mutex);
  m_pending.epochs.push_back(epoch);
  m_pending.any = true;
}

void LiveFeed::addText(const std::string& text) {
  std::lock_guard lock(m_mutex);
  m_pending.text += QString::fromStdString(text);
  m_pending.any = true;
}

void LiveFeed::addStepSeconds(double seconds) {
  std::lock_guard lock(m_mutex);
  m_pending.stepSeconds.append(seconds);
  m_pending.any = true;
}

void LiveFeed::setGrid(const DecisionGridResult& grid) {
  std::lock_guard lock(m_mutex);
  m_pending.grid = grid;
  m_pending.any = true;
}

void LiveFeed::addTrace(const StepTrace& trace) {
  std::lock_guard lock(m_mutex);
  if (m_traceRing.size() < kTraceRing) m_traceRing.resize(kTraceRing);
  if (m_traceCount == kTraceRing) {  // full: the oldest pending step gives way
    m_traceHead = (m_traceHead + 1) % kTraceRing;
    --m_traceCount;
    ++m_traceDropped;
  }
  m_traceRing[(m_traceHead + m_traceCount) % kTraceRing] = trace;  // reuses the slot's storage
  ++m_traceCount;
  m_pending.any = true;
}

FeedUpdate LiveFeed::take() {
  std::lock_guard lock(m_mutex);
  FeedUpdate out = std::move(m_pending);
  out.traces.reserve(m_traceCount);
  for (size_t i = 0; i < m_traceCount; ++i)
    out.traces.push_back(m_traceRing[(m_traceHead + i) % kTraceRing]);
  out.tracesDropped = m_traceDropped;
  m_traceHead = m_traceCount = 0;
  m_traceDropped = 0;
  // Progress and counters carry over; the lists start empty again.
  m_pending = FeedUpdate{};
  m_pending.epoch = out.epoch;
  m_pending.epochs_total = out.epochs_total;
  m_pending.step = out.step;
  m_pending.steps = out.steps;
  m_pending.elapsed = out.elapsed;
  m_pending.stepsDone = out.stepsDone;
  m_pending.samplesDone = out.samplesDone;
  return out;
}

namespace {

// Sends what fit() prints to the feed's log text, a whole line at a time (the progress printer
// writes a line in many small pieces; one feed call per line keeps microsecond epochs cheap).
class FeedStreambuf : public std::streambuf {
 public:
  explicit FeedStreambuf(LiveFeed& feed) : m_feed(feed) { m_line.reserve(256); }
  ~FeedStreambuf() override { sync(); }

 protected:
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    m_line.append(s, static_cast<size_t>(n));
    if (std::memchr(s, '\n', static_cast<size_t>(n)) != nullptr) sync();
    return n;
  }
  int_type overflow(int_type c) override {
    if (c == traits_type::eof()) return traits_type::not_eof(c);
    m_line.push_back(traits_type::to_char_type(c));
    if (c == '\n') sync();
    return c;
  }
  int sync() override {
    if (!m_line.empty()) {
      m_feed.addText(m_line);
      m_line.clear();
    }
    return 0;
  }

 private:
  LiveFeed& m_feed;
  std::string m_line;  // text since the last newline
};

}  // namespace

TrainingWorker::TrainingWorker(std::shared_ptr<LiveFeed> feed,
                               std::shared_ptr<TrainingControl> control)
    : m_feed(std::move(feed)), m_control(std::move(control)) {}

QString TrainingWorker::chartMetricKey(const ExperimentSpec& spec) {
  // Keras logs each metric under the identifier it was given ("acc", "mse", "accuracy"), or an
  // object's own name.
  if (spec.compile.metrics.empty()) return {};
  return QString::fromStdString(spec.compile.metric_name(0));
}

void TrainingWorker::run(const RunRequest& request) {
#ifdef __linux__
  // Training yields to the UI thread when both want a core: this thread, and the device threads
  // it starts (they inherit it), run at nice +5 (on Linux a nice value is per thread). With the
  // UI idle, training still gets every core.
  setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), 5);
#endif
  try {
    // Relative paths (data.csv, initial_weights) start from the experiment's folder.
    PlanContext context;
    context.base_dir = request.baseDir.toStdString();
    context.experiment_file = request.experimentFile.toStdString();
    RunPlan plan = plan_run(request.spec, request.overrides, context);

    const int64_t trainRows = plan.train_rows();
    FeedCallback feedCallback(*m_feed, *m_control, chartMetricKey(plan.spec).toStdString(),
                              trainRows, plan.spec.fit.batch_size);
    // After feedCallback: its on_train_begin resets the feed, and the grid's first message (why
    // no boundary can be drawn) must survive it.
    DecisionGrid decisionGrid(plan.data, trainRows);
    decisionGrid.setSink([feed = m_feed.get()](const DecisionGridResult& g) { feed->setGrid(g); });
    FeedStreambuf buf(*m_feed);
    std::ostream out(&buf);
    // The plan's notes and warnings, in the log where the user sees the run.
    for (const PlanNotice& n : plan.notices)
      out << (n.kind == PlanNotice::Kind::kWarning ? "Warning: " : "Note: ") << n.text << "\n";
    RunIO io;
    io.out = &out;
    io.warnings = &out;
    io.interactive = false;
    io.control = m_control.get();
    io.callbacks = {&decisionGrid};
    QStringList names;
    for (const std::string& d : plan.device_names) names << QString::fromStdString(d);
    emit started(int(names.size()), names,
                 QString::fromStdString(plan.spec.distribution.class_name),
                 std::make_shared<const CapacityInput>(capacity_input(plan)));

    RunResult ran = execute_run(plan, io, &feedCallback);
    for (const PlanNotice& n : ran.notices) out << n.text << "\n";
    out.flush();
    emit finished(std::make_shared<RunResult>(std::move(ran)));
  } catch (const InputError& e) {
    emit errorOccurred(QString::fromStdString(e.what()));
  } catch (const std::exception& e) {
    emit errorOccurred(QStringLiteral("Training failed: ") + QString::fromUtf8(e.what()));
  }
}

}  // namespace fitbench
