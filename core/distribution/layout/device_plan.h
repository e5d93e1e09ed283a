// Where a distributed run puts things, as data for the views and the CLI to lay out: which
// device of a ModelParallel mesh sits at which (batch, model) coordinate, which piece of each
// variable every device holds, and how a batch's rows are split. The executors use the same
// functions (make_model_parallel_plan places the mesh with mesh_placement and splits variables
// by split_dimension; shards come from shard_rows), so a picture is what the step does.
// Value types and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/distribution/layout/layout_map.h"
#include "core/distribution/spec/distribution_spec.h"

namespace fitbench {

// A mesh as a batch x model grid of flat mesh indices (the device names' indices): the batch
// axis is batch_dim_name (else the first axis), the model axis the other one; devices fill the
// mesh row-major over its shape, as numpy.reshape and keras.distribution.DeviceMesh do.
struct MeshPlacement {
  int batch = 1;               // devices along the batch axis (grid rows)
  int model = 1;               // devices along the model axis (grid columns)
  std::string batch_axis;      // the axes' names ("" when the spec has no mesh)
  std::string model_axis;      // "" when the mesh has a single axis
  std::vector<int> device{0};  // device[b * model + m]: the flat mesh index
  int at(int b, int m) const { return device[static_cast<size_t>(b * model + m)]; }
};

// The placement of spec's mesh; one device (a 1 x 1 grid) when the spec has no usable mesh.
MeshPlacement mesh_placement(const DistributionSpec& spec);

// How the lines of one axis of a mesh lie over P processes, process p hosting devices
// p*N/P .. (p+1)*N/P - 1 (as a ModelParallel run across processes places them). A line is a mesh
// row (batch group b: its model-axis devices, at positions m) or a mesh column (model index m:
// its batch-axis devices, at positions b).
struct MeshLines {
  bool within = true;      // every line lies inside one process
  int members = 0;         // a line's devices in each process that hosts some of it
  std::vector<int> lines;  // the lines this process hosts, ascending
  // The processes that host this process's lines host exactly these lines; they are numbered by
  // `color` (the lowest line) and ordered along the lines as by rank.
  int color = 0;
};

// The lines of the rows (rows true) or of the columns for process p of `processes`; fills `out`
// and returns "" when every line that spans processes has the same number of devices in each of
// them, consecutive and in rank order, and the processes of a line host the same lines (so that a
// communicator per group of processes serves them); else why not, as a sentence.
std::string mesh_lines(const MeshPlacement& mesh, int processes, int p, bool rows, MeshLines& out);

// "" when the mesh can be spread over `processes` processes (mesh_lines of both axes for every
// process); else why not, as a sentence naming what to change.
std::string mesh_process_error(const MeshPlacement& mesh, int processes);

// The dimension of `v` split over a model axis of `model` devices, or -1 when every device holds
// it whole (no axis named, or a model axis of one device). The last named dimension counts.
int split_dimension(const VariableLayout& v, int model);

// One piece of a variable and the devices that hold it.
struct VariablePiece {
  int variable = 0;            // index into the layouts given
  int dim = -1;                // the dimension split over the model axis; -1: held whole
  int64_t begin = 0, end = 0;  // the piece's range along dim
  std::vector<int> devices;    // flat mesh indices holding it, ascending
};

// Every variable's pieces, in the layouts' order: a split variable is cut into `model` equal
// ranges of its split dimension, range m held by the devices of grid column m; any other is one
// piece held by every device.
std::vector<VariablePiece> variable_pieces(const std::vector<VariableLayout>& variables,
                                           const MeshPlacement& mesh);

// The rows fit() trains on per epoch: with a validation_split in (0, 1), the first
// floor(samples * (1 - split)) rows (Sequential::fit, as Keras's data adapter); else all of them.
// Unlike validation_split_at it never fails: a view draws any setting, the Data tab says what is
// wrong with one that empties a side.
int64_t training_rows(int64_t samples, double validation_split);

// Rows of each of `parts` contiguous shards of a batch of `rows` (the first rows % parts get one
// more): DataParallel's devices, or ModelParallel's mesh rows.
std::vector<int64_t> batch_parts(int64_t rows, int parts);

}  // namespace fitbench
