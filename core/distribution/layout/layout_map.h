// keras.distribution.LayoutMap and the checks of a ModelParallel layout before training: which
// variables each entry of a layout map shards, and every problem Keras, JAX or fitbench would
// raise, as diagnostics the GUI shows beside the fields. Value types and free functions;
// thread-safe (LayoutMap as any value: const use from many threads, mutation from one).
//
// Lookup rule (keras/src/distribution/distribution_lib.py LayoutMap.__getitem__): a variable
// path equal to a key takes that key's layout; otherwise every key is tried as a regular
// expression with re.search (a match anywhere in the path, not a full match: "dense" matches
// "sequential/dense_1/kernel"); two or more matching keys are an error; none means replicated.
// Keys are Python regular expressions (PathPattern: Python's re syntax and error messages, matched
// without backtracking); what Python accepts but an automaton cannot run (backreferences,
// lookaround) is refused as a fitbench limit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/base/tensor.h"
#include "core/distribution/layout/device_mesh.h"
#include "core/distribution/layout/tensor_layout.h"
#include "core/distribution/spec/distribution_spec.h"
#include "core/nn/layer_spec.h"
#include "core/python/path_pattern.h"

namespace fitbench {

// A model variable as the layout map sees it.
struct VariableInfo {
  std::string path;  // "sequential/dense/kernel"
  Shape shape;       // {4, 8}; a bias is {8}

  bool operator==(const VariableInfo&) const = default;
};

// The variables a Sequential made from `spec` would have for `input_features` input columns,
// with Keras's automatic names and their shapes, in order; no weights are created.
// input_features <= 0 takes the InputLayer's width. Throws InputError as the model does (a bad
// layer config, a width contradicting the InputLayer, no width known).
std::vector<VariableInfo> model_variables(const ModelSpec& spec, int64_t input_features);

// A layout map as the experiment file and DistributionSpec hold it: key (regex) -> one mesh axis
// name per dimension, "" for a replicated dimension; in the map's order.
using LayoutEntries = std::vector<std::pair<std::string, std::vector<std::string>>>;

// The place of entry `key` in the experiment file: distribution.layout_map["dense.*kernel"].
std::string layout_entry_place(const std::string& key);

// Why `key` cannot be a layout map key ("is not a valid regular expression (...)"), or "" when
// it can: a regular expression of at most 1,000 bytes that PathPattern runs.
std::string layout_key_error(const std::string& key);

// What the check found for one entry of the map.
struct LayoutEntryCheck {
  std::string key;
  std::vector<std::string> axes;
  std::vector<std::string> variables;  // paths it matches (exactly or by regex), model order
  std::vector<std::string> errors;     // sentences (also in LayoutCheck::errors with places)
  std::string warning;                 // e.g. that it matches no variable; empty if none

  bool matches_nothing() const { return variables.empty(); }
};

// How one variable ends up laid out.
struct VariableLayout {
  std::string path;
  Shape shape;
  int entry = -1;                 // the entry that applies; -1: replicated (no match, ambiguous)
  bool ambiguous = false;         // matched by several keys (an error)
  std::vector<std::string> axes;  // one per dimension, "" = replicated (short layouts padded)
};

struct LayoutCheck {
  std::vector<LayoutEntryCheck> entries;   // in the map's order
  std::vector<VariableLayout> variables;   // in the model's order
  std::vector<LayoutDiagnostic> errors;    // Kind::kKeras or Kind::kFitbench
  std::vector<LayoutDiagnostic> warnings;  // Kind::kWarning

  bool ok() const { return errors.empty(); }
  // Throws the first error as InputError(place, message); does nothing when ok().
  void throw_if_invalid() const;
};

// Checks a ModelParallel setting against a model's variables:
//  - the mesh (check_device_mesh; device_count optional: the GUI may not know it yet);
//  - batch_dim_name ("" = the first axis) is a mesh axis;
//  - each entry: not a duplicate key, a valid regex, every axis a mesh axis, no axis twice;
//  - each variable: matched by at most one key (Keras's ambiguity error), a layout no longer than
//    its rank (shorter layouts replicate the remaining dimensions, as a JAX PartitionSpec), and
//    every sharded dimension divisible by its mesh axis's size (naming variable, shape, axis);
//  - fitbench's limits (Kind::kFitbench): at most two mesh axes, and variables sharded only
//    along the non-batch (model) axis;
//  - a warning for each valid entry that matches no variable.
// Places are the experiment file's: distribution.mesh..., distribution.batch_dim_name,
// distribution.layout_map["key"], distribution.layout_map["key"][dim].
LayoutCheck check_layout_map(const std::vector<VariableInfo>& variables,
                             const std::vector<int>& mesh_shape,
                             const std::vector<std::string>& axis_names,
                             const LayoutEntries& entries,
                             std::optional<int> device_count = std::nullopt,
                             const std::string& batch_dim_name = "");

// The same for a DistributionSpec of class ModelParallel.
LayoutCheck check_layout_map(const std::vector<VariableInfo>& variables,
                             const DistributionSpec& spec,
                             std::optional<int> device_count = std::nullopt);

// The layout map fitbench uses when a mesh is given without one (the CLI's --mesh RxC): every
// kernel (rank 2) of more than one output unit whose units divide by `model_size` is split by
// columns over `model_axis`, keyed by its exact path; everything else stays replicated (a
// one-unit output is never "split", not even over a model axis of one device).
LayoutEntries default_layout_map(const std::vector<VariableInfo>& variables,
                                 const std::string& model_axis, int model_size);

// The one rule for ModelParallel without a layout map, used by every run and shown by the
// window: when `spec` is ModelParallel on a two-axis mesh with no entries, fills its layout map
// with default_layout_map over the second (model) axis and returns true. A one-axis mesh, or a
// map with entries, is left as it is (false).
bool fill_default_layout(DistributionSpec& spec, const std::vector<VariableInfo>& variables);

// The entry a path resolves to by Keras's rule: exact key, else the single regex match.
struct LayoutLookup {
  int entry = -1;            // -1: none, or ambiguous
  bool exact = false;        // the key equals the path
  std::vector<int> matches;  // every regex match (when not exact); > 1 means ambiguous
};
// `patterns[i]` is entry i's compiled key, or nullopt when it is invalid (such keys never match).
LayoutLookup lookup_layout(const LayoutEntries& entries,
                           const std::vector<std::optional<PathPattern>>& patterns,
                           const std::string& path);

class LayoutMap {
 public:
  explicit LayoutMap(DeviceMesh device_mesh) : device_mesh_(std::move(device_mesh)) {}

  // layout_map[key] = layout: throws InputError for a key already present (as Keras) or an
  // invalid regular expression (Keras only finds it at lookup); binds the layout to the mesh.
  void set(const std::string& key, TensorLayout layout);
  // The shortcut Keras allows: a tuple of axis names ("" for None).
  void set(const std::string& key, std::vector<std::string> axes);

  // layout_map[path]: the exact key's layout, else the one key whose regex is found in the
  // path; nullopt when none matches. Throws InputError when several keys match (Keras's words).
  std::optional<TensorLayout> get(const std::string& path) const;

  bool erase(const std::string& key);
  size_t size() const { return layouts_.size(); }
  const DeviceMesh& device_mesh() const { return device_mesh_; }
  // The keys and axes in insertion order (what DistributionSpec::layout_map holds).
  LayoutEntries entries() const;

 private:
  DeviceMesh device_mesh_;
  std::vector<std::pair<std::string, TensorLayout>> layouts_;
  std::vector<std::optional<PathPattern>> patterns_;
};

}  // namespace fitbench
