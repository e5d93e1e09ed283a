// The device timeline's modelled time: for each measured step, the same step as the step model
// predicts it on a target (core's predict_step_phases at the step's own rows): every device's
// forward, backward and update at the target's FLOP/s, the collectives at the link model's
// seconds, waiting where a device is done before a collective, the steps laid end to end on a
// modelled clock. And whether the measured collectives are mostly thread synchronization (the
// rule in docs/workbench.md). Value holder without widgets; UI thread only (not thread-safe).
#pragma once

#include <QString>
#include <map>
#include <optional>

#include "core/run/capacity.h"
#include "core/run/step_time.h"
#include "core/run/target.h"
#include "ui/rehearsal/trace_store.h"

namespace fitbench {

// Measured and modelled collectives per step and device, in microseconds.
struct SynchronizationCheck {
  double measuredShare = 0.0;  // of the measured step, in percent
  double measuredUs = 0.0;     // per device in the median step (of the latest 1,000)
  double modelledUs = 0.0;     // per step and device, the link model's
  // Measured collectives take at least 25% of the steps' time and, in the median step, 3 times
  // what the link model gives.
  bool dominated() const { return measuredShare >= 25.0 && measuredUs >= 3.0 * modelledUs; }
};

class ModelledSteps {
 public:
  // The run whose steps are modelled (none: no modelled time) and the target; forgets the
  // steps modelled so far.
  void setInput(std::optional<CapacityInput> input);
  void setTarget(const Target& target);
  const std::optional<CapacityInput>& input() const { return m_input; }
  const Target& target() const { return m_target; }

  // The modelled store: measured's steps, each as modelled, with its capacity. Rebuilt when the
  // input or target changed, else extended by the steps measured added since.
  const TraceStore& sync(const TraceStore& measured);
  // Why there is no modelled time for the run ("" when there is).
  const QString& problem() const { return m_problem; }
  // The phases of a step of `rows` rows of the batch (the cached prediction; none without an
  // input or when the model refuses it).
  const StepPhases* phases(int64_t rows);

  // Measured against modelled collectives over the kept steps of `measured` (sync() first).
  SynchronizationCheck synchronization(const TraceStore& measured) const;

 private:
  // The modelled copy of `step`, starting at m_clock (which it moves on); false when the
  // step's devices are not the model's.
  bool model(const StepTrace& step, StepTrace& out);

  std::optional<CapacityInput> m_input;
  Target m_target = this_machine();
  std::map<int64_t, StepPhases> m_cache;  // by the step's rows
  int64_t m_rowsFactor = 1;               // measured shard rows summed / the batch's rows
  TraceStore m_store;
  bool m_stale = true;
  size_t m_seen = 0;  // measured steps appended (kept and dropped) that m_store has
  double m_clock = 0.0;
  QString m_problem;
};

}  // namespace fitbench
