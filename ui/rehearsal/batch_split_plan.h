// What the batch split view draws, worked out without painting: how a batch's rows are split over
// the devices (one device, DataParallel) or the mesh rows (ModelParallel), which devices of the
// mesh hold which slice of each variable, and the sentences that say so. The numbers come from
// core (device_plan.h: the functions the executors use); this file adds the words. Value types
// and pure functions; thread-safe.
#pragma once

#include <QString>
#include <cstdint>
#include <string>
#include <vector>

#include "core/distribution/layout/device_mesh.h"
#include "core/distribution/layout/device_plan.h"
#include "core/distribution/layout/layout_map.h"
#include "core/distribution/trace/trace.h"

namespace fitbench {

// Everything the view needs to know about a run before it starts.
struct BatchSplitPlan {
  std::vector<std::string> devices;  // names in flat mesh order: "cpu:0", "cpu:1", ...
  std::string strategy;              // a strategy's class name (strategies.h); "": one device
  int64_t batchSize = 32;            // fit.batch_size
  int64_t trainingSamples = 0;  // rows trained on per epoch (after validation_split); 0: unknown
  std::vector<int> meshShape;   // ModelParallel: e.g. {2, 2}
  std::vector<std::string> axisNames;     // ModelParallel: e.g. {"batch", "model"}
  std::string batchDimName;               // ModelParallel: the batch axis; "" = the first axis
  std::vector<VariableLayout> variables;  // ModelParallel: check_layout_map(...).variables
  std::vector<LayoutDiagnostic> errors;   // ModelParallel: check_layout_map(...).errors
  int batchNormLayers = 0;                // the model's trainable BatchNormalization layers
  // devices.batch_norm_statistics "per_device": each DataParallel shard's own statistics.
  bool perDeviceStatistics = false;
};

// One batch as drawn: its rows and how many of them go to each part.
struct BatchSplit {
  QString title;               // "Full batch", "Last batch", "Epoch 2, batch 8 of 8"
  int64_t rows = 0;            // rows in this batch
  std::vector<int64_t> parts;  // rows per device (one device, DataParallel) or per mesh row
  bool partial = false;        // fewer rows than batch_size
};

// One piece of a variable, the devices that hold it (core's variable_pieces) and its sentence.
struct VariableSlice : VariablePiece {
  QString label;  // "cpu:1, cpu:3 hold kernel[:, 4:8]"
};

namespace batchsplit {

// Rows per device for a batch of `rows` on `devices` devices: DataParallelExecutor::shard_rows
// (contiguous shards; the first rows % devices get one more row).
std::vector<int64_t> shardRows(int64_t rows, int devices);

// The devices that train: 1 without a distribution, else the plan's device list.
int deviceCount(const BatchSplitPlan& plan);
// The plan's name for device d, "cpu:<d>" when the list is short.
QString deviceName(const BatchSplitPlan& plan, int d);

// The plan's mesh placement (core's mesh_placement, as make_model_parallel_plan places it).
MeshPlacement meshPlacement(const BatchSplitPlan& plan);

// The pieces of every variable, in the plan's order (core's variable_pieces), with their
// sentences.
std::vector<VariableSlice> variableSlices(const BatchSplitPlan& plan, const MeshPlacement& mesh);

// The batches to show before a run: a full batch and, when the epoch ends with fewer rows, the
// last partial one (the only one when trainingSamples < batchSize), split over the parts.
std::vector<BatchSplit> plannedBatches(const BatchSplitPlan& plan);
// The latest step's batch from its trace: shard_rows per device (per mesh row for ModelParallel).
BatchSplit liveBatch(const BatchSplitPlan& plan, const StepTrace& step);

// The rows fit() trains on per epoch (core's training_rows).
int64_t trainingSamples(int64_t samples, double validationSplit);

// The most rows a batch of this plan has: the batch size, or all the training samples when
// there are fewer (Keras then trains one batch of them); the batch size when they are unknown.
int64_t largestBatch(const BatchSplitPlan& plan);

// Batches per epoch, ceil(trainingSamples / batchSize) (Keras's steps per epoch); 0 if unknown.
int64_t batchesPerEpoch(const BatchSplitPlan& plan);

// "25 training samples, batch size 10: 3 batches per epoch, the last one 5 rows."
QString plannedCaption(const BatchSplitPlan& plan);
// "Epoch 2, batch 8 of 8 · 10 rows: last partial batch".
QString liveCaption(const BatchSplitPlan& plan, const StepTrace& step, int64_t rows);
// Whose statistics the model's BatchNormalization normalizes each shard by on these devices
// (the global batch's, or each device's own), or "" without BatchNormalization or devices.
QString statisticsNote(const BatchSplitPlan& plan);

// "1 row", "4 rows".
QString rowsText(int64_t rows);
// "rows 0–3" (or "row 4", "no rows") for `count` rows from `first`.
QString rowRange(int64_t first, int64_t count);

}  // namespace batchsplit
}  // namespace fitbench
