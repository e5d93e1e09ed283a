// The feed's side of a run: a RunListener that copies the values the charts, the progress bar and
// the device timeline need into a LiveFeed. TrainingWorker adds it to fit()'s callbacks; a run on
// several processes (ProcessJob) calls it with the events fitbench-cli streams. Runs on the
// thread that trains (or reads the events); the LiveFeed is the only thing it shares.
#pragma once

#include <QElapsedTimer>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "core/run/run.h"
#include "core/training/training_control.h"
#include "ui/window/training_worker.h"

namespace fitbench {

// Copies the values the charts and the progress bar need into the feed; no allocation per batch
// beyond the feed's amortized growth. The first kFullResolutionPoints batches are all sent;
// after that, batch points are thinned to one per kBatchPointSeconds (and every epoch's last
// batch), so a model with microsecond steps neither floods the feed nor slows down for it; the
// step and sample counts stay exact.
class FeedCallback : public RunListener {
 public:
  FeedCallback(LiveFeed& feed, const TrainingControl& control, std::string metricKey,
               int64_t trainRows, int batchSize)
      : m_feed(feed),
        m_control(control),
        m_metricKey(std::move(metricKey)),
        m_valMetricKey(m_metricKey.empty() ? std::string() : "val_" + m_metricKey),
        m_trainRows(trainRows),
        m_batchSize(batchSize) {}

  void on_train_begin(const Logs&) override {
    m_feed.reset(params_.epochs, params_.steps);
    m_clock.start();
  }
  void on_epoch_begin(int epoch, const Logs&) override { m_epoch = epoch; }
  // The first steps' wall times, for the Capacity view's measured step (a bounded number: two
  // clock reads per step would cost microsecond steps a few percent for the whole run).
  void on_train_batch_begin(int, const Logs&) override {
    if (m_timedSteps < LiveFeed::kTimedSteps) m_batchBegin = m_clock.nsecsElapsed();
  }
  void on_train_batch_end(int batch, const Logs& logs) override {
    if (m_timedSteps < LiveFeed::kTimedSteps) {
      ++m_timedSteps;
      m_feed.addStepSeconds((m_clock.nsecsElapsed() - m_batchBegin) * 1e-9);
    }
    const int64_t start = int64_t(batch) * m_batchSize;
    m_steps += 1;
    m_samples += std::max<int64_t>(0, std::min<int64_t>(m_batchSize, m_trainRows - start));
    // Paused or stopping: send the point now, so the counts shown are exact while held. The
    // epoch's last batch is always sent.
    const bool must = m_pointsSent < kFullResolutionPoints || batch + 1 >= params_.steps ||
                      m_control.paused() || m_control.stop_requested();
    // Between points the clock is read every m_stride batches only, a stride that doubles while
    // reads find the interval not yet over (microsecond steps: a clock read costs as much as a
    // tenth of a step) and halves when a point came late.
    if (!must && --m_countdown > 0) return;
    const double now = m_clock.nsecsElapsed() * 1e-9;
    if (!must && now - m_lastPoint < kBatchPointSeconds) {
      m_stride = std::min<int64_t>(m_stride * 2, kMaxStride);
      m_countdown = m_stride;
      return;
    }
    if (now - m_lastPoint > 2 * kBatchPointSeconds) m_stride = std::max<int64_t>(m_stride / 2, 1);
    m_countdown = m_stride;
    m_lastPoint = now;
    ++m_pointsSent;
    const auto loss = logs.find("loss");
    const auto metric = m_metricKey.empty() ? logs.end() : logs.find(m_metricKey);
    m_feed.addBatch(m_epoch, batch, params_.steps, loss == logs.end() ? NAN : loss->second,
                    metric == logs.end() ? std::nullopt : std::optional<double>(metric->second),
                    m_steps, m_samples, now);
    m_steps = m_samples = 0;
  }
  void on_epoch_end(int epoch, Logs& logs) override {
    const auto value = [&logs](const std::string& key) -> std::optional<double> {
      if (key.empty()) return std::nullopt;
      const auto it = logs.find(key);
      return it == logs.end() ? std::nullopt : std::optional<double>(it->second);
    };
    m_feed.addEpoch(
        {epoch, value("loss"), value("val_loss"), value(m_metricKey), value(m_valMetricKey)});
  }
  // Every step's trace for the first kFullTraceSteps steps (what the timeline keeps), then one
  // per kBatchPointSeconds so the live timeline still moves on very long fast runs.
  void on_step_trace(const StepTrace& trace) override {
    ++m_traceSteps;
    if (m_traceSteps > kFullTraceSteps) {
      const double now = m_clock.nsecsElapsed() * 1e-9;
      if (now - m_lastTrace < kBatchPointSeconds && !m_control.paused()) return;
      m_lastTrace = now;
    }
    m_feed.addTrace(trace);
  }

 private:
  LiveFeed& m_feed;
  const TrainingControl& m_control;
  std::string m_metricKey;
  std::string m_valMetricKey;
  int64_t m_trainRows;
  int m_batchSize;
  int m_epoch = 0;
  int64_t m_steps = 0, m_samples = 0;  // since the last point sent
  double m_lastPoint = -1.0;
  int64_t m_pointsSent = 0;
  int64_t m_stride = 1, m_countdown = 1;  // batches between clock reads, and until the next
  int64_t m_traceSteps = 0;
  double m_lastTrace = -1.0;
  int64_t m_timedSteps = 0;  // steps whose wall time was sent
  qint64 m_batchBegin = 0;   // the clock at the timed step's begin (ns)
  QElapsedTimer m_clock;
  static constexpr double kBatchPointSeconds = 0.002;
  static constexpr int64_t kFullResolutionPoints = 5000;
  static constexpr int64_t kFullTraceSteps = 20000;
  static constexpr int64_t kMaxStride = 256;
};

}  // namespace fitbench
