#include "core/distribution/layout/layout_map.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/base/error.h"
#include "core/distribution/spec/strategies.h"
#include "core/nn/network.h"

namespace fitbench {
namespace {

using Kind = LayoutDiagnostic::Kind;

// A search costs up to the key's compiled size times the path's length, for every variable, on
// the window's UI thread as the user types: keys over 1,000 bytes are refused before they are
// read.
constexpr size_t kMaxKeyLength = 1000;

// Why a key cannot be a layout key, and whose rule that is.
struct KeyProblem {
  std::string message;  // a sentence without the place
  Kind kind = Kind::kKeras;
};

std::optional<PathPattern> compile(const std::string& key, KeyProblem* problem) {
  if (key.size() > kMaxKeyLength) {
    if (problem)
      *problem = {"is " + std::to_string(key.size()) + " bytes long; a layout key is at most " +
                      std::to_string(kMaxKeyLength) + " bytes",
                  Kind::kFitbench};
    return std::nullopt;
  }
  PathPattern::Error error;
  auto pattern = PathPattern::compile(key, &error);
  if (!pattern && problem) {
    // A syntax error is Python's (so Keras's) too; the rest is fitbench's limit.
    *problem =
        error.python_accepts
            ? KeyProblem{error.message, Kind::kFitbench}
            : KeyProblem{"is not a valid regular expression (" + error.message + ")", Kind::kKeras};
  }
  return pattern;
}

}  // namespace

std::string layout_key_error(const std::string& key) {
  KeyProblem problem;
  return compile(key, &problem) ? std::string() : problem.message;
}

namespace {

std::string ambiguity_message(const std::string& path, const LayoutEntries& entries,
                              const std::vector<int>& matches) {
  std::vector<std::string> keys;
  for (int m : matches) keys.push_back(entries[static_cast<size_t>(m)].first);
  // distribution_lib.py LayoutMap.__getitem__'s ValueError.
  return "Path '" + path +
         "' matches multiple layout specification keys: " + python_str_list(keys) +
         ". Please make sure each tensor/variable path only matches at most one layout "
         "specification key in the LayoutMap.";
}

std::string some_paths(const std::vector<VariableInfo>& variables) {
  std::string s;
  const size_t shown = std::min<size_t>(variables.size(), 4);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + variables[i].path;
  if (variables.size() > shown) s += ", ...";
  return s;
}

}  // namespace

std::vector<VariableInfo> model_variables(const ModelSpec& spec, int64_t input_features) {
  Network network(spec);
  if (input_features <= 0) {
    if (!network.declared_input_units())
      throw InputError("model",
                       "the number of input features is not known: the model has no "
                       "InputLayer and no data was given");
    input_features = *network.declared_input_units();
  }
  network.build(input_features);
  std::vector<VariableInfo> out;
  for (const auto& v : network.variables()) out.push_back({v.path, v.shape});
  return out;
}

std::string layout_entry_place(const std::string& key) {
  // A key too long to read in a message is cut to its first 60 bytes (at a UTF-8 boundary).
  std::string shown = key;
  if (shown.size() > 80) {
    size_t cut = 60;
    while (cut > 0 && (static_cast<unsigned char>(shown[cut]) & 0xC0) == 0x80) --cut;
    shown = shown.substr(0, cut) + "...";
  }
  return "distribution.layout_map[" + nlohmann::json(shown).dump() + "]";
}

LayoutEntries default_layout_map(const std::vector<VariableInfo>& variables,
                                 const std::string& model_axis, int model_size) {
  LayoutEntries out;
  for (const auto& v : variables)
    if (v.shape.size() == 2 && v.shape[1] > 1 && model_size > 0 && v.shape[1] % model_size == 0)
      out.push_back({v.path, {"", model_axis}});
  return out;
}

bool fill_default_layout(DistributionSpec& spec, const std::vector<VariableInfo>& variables) {
  if (spec.class_name != kModelParallel || !spec.layout_map.empty() ||
      spec.mesh_shape.size() != 2 || spec.axis_names.size() != 2)
    return false;
  spec.layout_map = default_layout_map(variables, spec.axis_names[1], spec.mesh_shape[1]);
  return true;
}

void LayoutCheck::throw_if_invalid() const {
  if (!errors.empty()) throw InputError(errors.front().place, errors.front().message);
}

LayoutLookup lookup_layout(const LayoutEntries& entries,
                           const std::vector<std::optional<PathPattern>>& patterns,
                           const std::string& path) {
  LayoutLookup r;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].first == path) {
      r.entry = static_cast<int>(i);
      r.exact = true;
      return r;
    }
  }
  for (size_t i = 0; i < entries.size(); ++i)
    if (patterns[i] && patterns[i]->search(path)) r.matches.push_back(static_cast<int>(i));
  if (r.matches.size() == 1) r.entry = r.matches.front();
  return r;
}

LayoutCheck check_layout_map(const std::vector<VariableInfo>& variables,
                             const std::vector<int>& mesh_shape,
                             const std::vector<std::string>& axis_names,
                             const LayoutEntries& entries, std::optional<int> device_count,
                             const std::string& batch_dim_name) {
  LayoutCheck c;
  auto add = [&c](std::string place, std::string message, Kind kind, int entry) {
    if (entry >= 0) c.entries[static_cast<size_t>(entry)].errors.push_back(message);
    c.errors.push_back({std::move(place), std::move(message), kind, entry});
  };
  for (const auto& [key, axes] : entries) c.entries.push_back({key, axes, {}, {}, {}});

  // The mesh: its axis sizes are needed below only when shape and names line up.
  c.errors = check_device_mesh(mesh_shape, axis_names, device_count);
  const bool names_ok = !mesh_shape.empty() && mesh_shape.size() == axis_names.size();
  auto axis_size = [&](const std::string& name) -> int {
    if (!names_ok) return 0;
    auto it = std::find(axis_names.begin(), axis_names.end(), name);
    return it == axis_names.end() ? 0 : mesh_shape[static_cast<size_t>(it - axis_names.begin())];
  };
  const std::string valid = python_str_list(axis_names);
  std::string batch_axis = batch_dim_name;
  if (names_ok) {
    if (batch_axis.empty()) batch_axis = axis_names.front();
    if (std::find(axis_names.begin(), axis_names.end(), batch_axis) == axis_names.end())
      add("distribution.batch_dim_name",
          "Invalid axis names for Layout. Valid axis names: " + valid + ", Got '" + batch_axis +
              "' (batch_dim_name must be one of the mesh's axes)",
          Kind::kKeras, -1);
    if (mesh_shape.size() > 2)
      add("distribution.mesh.shape",
          "fitbench runs ModelParallel on a mesh of one or two axes (the batch axis and one model "
          "axis), got " +
              std::to_string(mesh_shape.size()) + " axes",
          Kind::kFitbench, -1);
  }

  // Each entry on its own.
  std::vector<std::optional<PathPattern>> patterns(entries.size());
  std::vector<bool> usable(entries.size(), true);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& [key, axes] = entries[i];
    const std::string place = layout_entry_place(key);
    const int entry = static_cast<int>(i);
    for (size_t j = 0; j < i; ++j) {
      if (entries[j].first != key) continue;
      add(place,
          key + " already exist in the LayoutMap. Please make sure to not use duplicated keys.",
          Kind::kKeras, entry);
      usable[i] = false;
      break;
    }
    KeyProblem problem;
    patterns[i] = compile(key, &problem);
    if (!patterns[i]) {
      add(place, problem.message, problem.kind, entry);
      usable[i] = false;
    }
    for (size_t d = 0; d < axes.size(); ++d) {
      const std::string& a = axes[d];
      if (a.empty()) continue;
      const std::string dim_place = place + "[" + std::to_string(d) + "]";
      if (std::find(axis_names.begin(), axis_names.end(), a) == axis_names.end()) {
        add(dim_place,
            "Invalid axis names for Layout. Valid axis names: " + valid + ", Got '" + a + "'",
            Kind::kKeras, entry);
      } else if (std::find(axes.begin(), axes.begin() + static_cast<long>(d), a) !=
                 axes.begin() + static_cast<long>(d)) {
        // JAX: a PartitionSpec cannot use the same mesh axis twice.
        add(dim_place,
            "mesh axis '" + a + "' already shards dimension " +
                std::to_string(std::find(axes.begin(), axes.end(), a) - axes.begin()) +
                "; a layout may use each mesh axis once",
            Kind::kKeras, entry);
      } else if (names_ok && a == batch_axis && axis_names.size() > 1) {
        add(dim_place,
            "fitbench shards variables along the model axis only, and '" + a +
                "' is the batch axis (batch_dim_name); use null to replicate this dimension",
            Kind::kFitbench, entry);
      } else if (names_ok && a == batch_axis) {
        add(dim_place,
            "fitbench shards variables along a model axis only, and this mesh's only axis '" + a +
                "' is the batch axis; add a model axis to the mesh or use null",
            Kind::kFitbench, entry);
      }
    }
  }
  // Unusable (duplicate or invalid) keys never match, as Keras would have rejected them first.
  std::vector<std::optional<PathPattern>> effective(entries.size());
  LayoutEntries effective_entries = entries;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (usable[i])
      effective[i] = patterns[i];
    else
      effective_entries[i].first.clear();  // an empty key is never a variable path
  }

  // Each variable.
  for (const auto& v : variables) {
    VariableLayout out{v.path, v.shape, -1, false, std::vector<std::string>(v.shape.size())};
    LayoutLookup found = lookup_layout(effective_entries, effective, v.path);
    if (found.exact) {
      c.entries[static_cast<size_t>(found.entry)].variables.push_back(v.path);
    } else {
      for (int m : found.matches) c.entries[static_cast<size_t>(m)].variables.push_back(v.path);
    }
    if (found.matches.size() > 1) {
      out.ambiguous = true;
      const std::string message = ambiguity_message(v.path, entries, found.matches);
      for (size_t k = 1; k < found.matches.size(); ++k)
        c.entries[static_cast<size_t>(found.matches[k])].errors.push_back(message);
      add("distribution.layout_map", message, Kind::kKeras, found.matches.front());
    } else if (found.entry >= 0) {
      out.entry = found.entry;
      const auto& [key, axes] = entries[static_cast<size_t>(found.entry)];
      const std::string place = layout_entry_place(key);
      const std::string shape = python_tuple(v.shape);
      if (axes.size() > v.shape.size()) {
        add(place,
            "the layout has " + counted(static_cast<long long>(axes.size()), "axis", "axes") +
                " but " + v.path + " has rank " + std::to_string(v.shape.size()) + " (shape " +
                shape + ")",
            Kind::kKeras, found.entry);
      } else {
        for (size_t d = 0; d < axes.size(); ++d) {
          out.axes[d] = axes[d];
          const int size = axes[d].empty() ? 0 : axis_size(axes[d]);
          if (size <= 1 || v.shape[d] % size == 0) continue;
          // The batch axis on a variable is already an error of its own (fitbench shards along
          // the model axis only): one message per dimension.
          if (names_ok && axes[d] == batch_axis) continue;
          add(place + "[" + std::to_string(d) + "]",
              v.path + " has shape " + shape + ": dimension " + std::to_string(d) + " of size " +
                  std::to_string(v.shape[d]) + " cannot be split evenly across the " +
                  std::to_string(size) + " devices of mesh axis '" + axes[d] + "'",
              Kind::kKeras, found.entry);
        }
      }
    }
    c.variables.push_back(std::move(out));
  }

  for (size_t i = 0; i < c.entries.size(); ++i) {
    auto& e = c.entries[i];
    if (!usable[i] || !e.variables.empty()) continue;
    e.warning = "matches no variable of the model, so it shards nothing (the variables are " +
                some_paths(variables) + ")";
    c.warnings.push_back(
        {layout_entry_place(e.key), e.warning, Kind::kWarning, static_cast<int>(i)});
  }
  return c;
}

LayoutCheck check_layout_map(const std::vector<VariableInfo>& variables,
                             const DistributionSpec& spec, std::optional<int> device_count) {
  return check_layout_map(variables, spec.mesh_shape, spec.axis_names, spec.layout_map,
                          device_count, spec.batch_dim_name);
}

void LayoutMap::set(const std::string& key, TensorLayout layout) {
  for (const auto& [k, l] : layouts_)
    if (k == key)
      throw InputError(layout_entry_place(key),
                       key + " already exist in the LayoutMap with value " + l.repr() +
                           ". Please make sure to not use duplicated "
                           "keys.");
  KeyProblem problem;
  auto pattern = compile(key, &problem);
  if (!pattern) throw InputError(layout_entry_place(key), problem.message);
  if (!layout.device_mesh()) layout.set_device_mesh(device_mesh_);
  layouts_.emplace_back(key, std::move(layout));
  patterns_.push_back(std::move(pattern));
}

void LayoutMap::set(const std::string& key, std::vector<std::string> axes) {
  set(key, TensorLayout(std::move(axes)));
}

std::optional<TensorLayout> LayoutMap::get(const std::string& path) const {
  const LayoutEntries keys = entries();
  LayoutLookup found = lookup_layout(keys, patterns_, path);
  if (found.matches.size() > 1)
    throw InputError("distribution.layout_map", ambiguity_message(path, keys, found.matches));
  if (found.entry < 0) return std::nullopt;
  return layouts_[static_cast<size_t>(found.entry)].second;
}

bool LayoutMap::erase(const std::string& key) {
  for (size_t i = 0; i < layouts_.size(); ++i) {
    if (layouts_[i].first != key) continue;
    layouts_.erase(layouts_.begin() + static_cast<long>(i));
    patterns_.erase(patterns_.begin() + static_cast<long>(i));
    return true;
  }
  return false;
}

LayoutEntries LayoutMap::entries() const {
  LayoutEntries out;
  for (const auto& [k, l] : layouts_) out.emplace_back(k, l.axes());
  return out;
}

}  // namespace fitbench
