// ModelledSteps: measured steps laid out again with the step model's seconds.

#include "ui/rehearsal/modelled_steps.h"

#include <QCoreApplication>
#include <algorithm>
#include <numeric>

#include "core/base/error.h"

namespace fitbench {
namespace {

constexpr size_t kMedianSteps = 1000;

// The rows predict_step takes for a step of the whole batch.
int64_t fullRows(const CapacityInput& in) {
  return std::min(in.batch_size, std::max<int64_t>(in.train_rows, 1));
}

// Every device does `collectives` one after another, from when the last one is ready.
double addCollectives(const std::vector<CollectiveCost>& collectives, StepTrace& out,
                      std::vector<double>& ready, CollectiveAlgorithm algorithm) {
  const double start = *std::max_element(ready.begin(), ready.end());
  const auto devices = static_cast<int64_t>(ready.size());
  for (size_t d = 0; d < ready.size(); ++d)
    if (ready[d] < start) {
      TraceSpan wait;
      wait.kind = SpanKind::kWaiting;
      wait.begin_us = ready[d];
      wait.duration_us = start - ready[d];
      out.spans[d].push_back(wait);
    }
  double at = start;
  for (const CollectiveCost& c : collectives) {
    TraceSpan span;
    span.kind = SpanKind::kCollective;
    span.op = c.op;
    span.algorithm = algorithm;
    span.begin_us = at;
    span.duration_us = c.seconds * 1e6;
    // The link model counts every message of the step; each device's share of them.
    span.bytes_sent = span.bytes_received = c.bytes_on_links / std::max<int64_t>(devices, 1);
    for (auto& spans : out.spans) spans.push_back(span);
    at += span.duration_us;
  }
  std::fill(ready.begin(), ready.end(), at);
  return at;
}

void addCompute(SpanKind kind, const std::vector<double>& seconds, StepTrace& out,
                std::vector<double>& ready) {
  for (size_t d = 0; d < ready.size(); ++d) {
    if (!(seconds[d] > 0.0)) continue;
    TraceSpan span;
    span.kind = kind;
    span.begin_us = ready[d];
    span.duration_us = seconds[d] * 1e6;
    out.spans[d].push_back(span);
    ready[d] += span.duration_us;
  }
}

}  // namespace

void ModelledSteps::setInput(std::optional<CapacityInput> input) {
  m_input = std::move(input);
  m_cache.clear();
  m_stale = true;
}

void ModelledSteps::setTarget(const Target& target) {
  m_target = target;
  m_cache.clear();
  m_stale = true;
}

const StepPhases* ModelledSteps::phases(int64_t rows) {
  if (!m_input) return nullptr;
  if (auto it = m_cache.find(rows); it != m_cache.end()) return &it->second;
  CapacityInput in = *m_input;
  in.batch_size = rows;
  try {
    return &m_cache.emplace(rows, predict_step_phases(in, m_target)).first->second;
  } catch (const InputError& e) {
    m_problem =
        QCoreApplication::translate("ModelledSteps", "The step model cannot plan this run: %1")
            .arg(QString::fromStdString(e.what()));
    return nullptr;
  }
}

const TraceStore& ModelledSteps::sync(const TraceStore& measured) {
  const size_t appended = measured.size() + measured.dropped();
  if (m_stale || appended < m_seen || m_store.capacity() != measured.capacity()) {
    m_store = TraceStore(measured.capacity());
    m_store.clear(measured.devices());
    m_seen = appended - measured.size();  // the dropped ones are not modelled
    m_clock = 0.0;
    m_problem.clear();
    m_stale = false;
    m_rowsFactor = 1;
    if (!m_input) {
      m_problem = QCoreApplication::translate(
          "ModelledSteps", "Modelled time needs the run's plan: press Run to see it.");
      return m_store;
    }
    if (const StepPhases* full = phases(fullRows(*m_input))) {
      int64_t rows = 0;
      for (const DevicePhases& d : full->devices) rows += d.rows;
      m_rowsFactor = std::max<int64_t>(rows / std::max<int64_t>(fullRows(*m_input), 1), 1);
    }
  }
  if (!m_problem.isEmpty()) return m_store;
  // Steps dropped before they were modelled are skipped, as the measured store dropped them.
  m_seen = std::max(m_seen, appended - measured.size());
  StepTrace out;
  for (size_t i = measured.size() - (appended - m_seen); i < measured.size(); ++i) {
    if (!model(measured.step(i), out)) break;
    m_store.append(out);
    ++m_seen;
  }
  return m_store;
}

bool ModelledSteps::model(const StepTrace& step, StepTrace& out) {
  const int64_t sum = std::accumulate(step.shard_rows.begin(), step.shard_rows.end(), int64_t{0});
  const StepPhases* p = phases(std::max<int64_t>(sum / m_rowsFactor, 1));
  if (!p) return false;
  const size_t devices = p->devices.size();
  if (devices != step.spans.size()) {
    m_problem = QCoreApplication::translate("ModelledSteps",
                                            "The step model plans %1 devices; the run has %2.")
                    .arg(devices)
                    .arg(step.spans.size());
    return false;
  }
  out.step = step.step;
  out.epoch = step.epoch;
  out.batch = step.batch;
  out.shard_rows.clear();
  out.spans.assign(devices, {});
  std::vector<double> ready(devices, m_clock), seconds(devices);
  for (size_t d = 0; d < devices; ++d) out.shard_rows.push_back(p->devices[d].rows);
  const CollectiveAlgorithm algorithm = m_input->options.algorithm;
  for (size_t d = 0; d < devices; ++d) seconds[d] = p->devices[d].forward_s;
  addCompute(SpanKind::kForward, seconds, out, ready);
  if (!p->forward_collectives.empty())
    addCollectives(p->forward_collectives, out, ready, algorithm);
  for (size_t d = 0; d < devices; ++d) seconds[d] = p->devices[d].backward_s;
  addCompute(SpanKind::kBackward, seconds, out, ready);
  if (!p->backward_collectives.empty())
    addCollectives(p->backward_collectives, out, ready, algorithm);
  for (size_t d = 0; d < devices; ++d) seconds[d] = p->devices[d].update_s;
  addCompute(SpanKind::kUpdate, seconds, out, ready);
  m_clock = *std::max_element(ready.begin(), ready.end());
  return true;
}

SynchronizationCheck ModelledSteps::synchronization(const TraceStore& measured) const {
  SynchronizationCheck check;
  if (measured.empty() || m_store.size() != measured.size()) return check;
  const auto sums = [](const std::vector<DeviceUsage>& usage) {
    double communication = 0.0, total = 0.0;
    for (const DeviceUsage& u : usage) {
      communication += u.communication_us;
      total += u.total_us;
    }
    return std::pair{communication, total};
  };
  const std::vector<DeviceUsage> measuredUsage = measured.usage();
  const auto [communication, total] = sums(measuredUsage);
  const double perStep =
      static_cast<double>(measured.size()) * static_cast<double>(measuredUsage.size());
  if (!(total > 0.0) || !(perStep > 0.0)) return check;
  check.measuredShare = 100.0 * communication / total;
  // The median step of the latest ones: a run's first steps (threads waking up) take far longer.
  std::vector<double> perDevice;
  const size_t first = measured.size() > kMedianSteps ? measured.size() - kMedianSteps : 0;
  for (size_t i = first; i < measured.size(); ++i) {
    const StepTrace& step = measured.step(i);
    double us = 0.0;
    for (const auto& spans : step.spans)
      for (const TraceSpan& span : spans)
        if (span.kind == SpanKind::kCollective) us += span.duration_us;
    perDevice.push_back(us / static_cast<double>(std::max<size_t>(step.spans.size(), 1)));
  }
  const auto middle = perDevice.begin() + static_cast<std::ptrdiff_t>(perDevice.size() / 2);
  std::nth_element(perDevice.begin(), middle, perDevice.end());
  check.measuredUs = *middle;
  check.modelledUs = sums(m_store.usage()).first / perStep;
  return check;
}

}  // namespace fitbench
