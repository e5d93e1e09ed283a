// What the Capacity view computes for one state of the experiment: the plan's capacity input
// (plan_capacity: the data loaded, the model's shapes and layout checked), its report row on the
// target, and the scaling sweep over 1, 2, 4, ..., 1024 devices. A value request in, a value
// result out, with no widgets: the view runs it on a thread of its own and drops stale results by
// their generation. computeCapacity is reentrant (core's planning is; sweeps plan in parallel).
#pragma once

#include <QString>
#include <QStringList>
#include <utility>
#include <vector>

#include "core/io/experiment.h"
#include "core/run/capacity_report.h"
#include "core/run/run_plan.h"

namespace fitbench {

struct CapacityRequest {
  quint64 generation = 0;  // the view's count of requests; a result answers one
  ExperimentSpec spec;     // the experiment as the panels hold it
  RunOverrides overrides;  // the window's device count
  QString baseDir;         // where relative paths start from
  Target target;
  CapacityScale scale;  // the what-ifs
};

struct CapacityResult {
  quint64 generation = 0;
  QString error;        // the plan's problems, a line each ("" when it could be made)
  QStringList notices;  // what plan_run would say before training
  CapacityInput input;  // scaled
  CapacityRow row;      // the plan on the target
  // The scaling curve: DataParallel and (n/m) x m meshes for each n of kScalingDevices.
  std::vector<std::pair<int, CapacityRow>> sweep;
};

// 1, 2, 4, ..., 1024.
std::vector<int> scalingDeviceCounts();

// The plan of `request`; every InputError becomes the result's error.
CapacityResult computeCapacity(const CapacityRequest& request);

}  // namespace fitbench
