// Experiment files (docs/experiment-format.md): the top level, data, devices and distribution
// sections; the model, compile and fit sections are read by model_config.cpp, compile_config.cpp
// and fit_config.cpp.
#include "core/io/experiment.h"

#include <algorithm>

#include "core/base/error.h"
#include "core/distribution/collectives/collective_algorithms.h"
#include "core/distribution/layout/layout_map.h"
#include "core/io/json_file.h"
#include "core/io/json_reader.h"
#include "core/io/keras_json.h"

namespace fitbench {

using json_io::fail;
using json_io::fail_expected;
using json_io::fail_unsupported;
using json_io::index_path;
using json_io::join;
using json_io::Json;
using json_io::key_path;
using json_io::ObjectReader;

namespace {

const std::vector<std::string> kGenerators = {"seed",     "seed_legacy", "circle", "xor",
                                              "gaussian", "spiral",      "moons",  "blobs",
                                              "plane",    "sine"};

// The generators whose feature count is a parameter (core/data/generators.cpp; the Playground's
// sets, moons and sine have fixed features).
bool uses_features(const std::string& generator) {
  return generator == "seed" || generator == "seed_legacy" || generator == "blobs";
}

// A path relative to base_dir made absolute; kept as written when there is no base_dir.
std::string resolve(const std::string& path, const std::filesystem::path& base_dir) {
  const std::filesystem::path p(path);
  if (p.is_absolute() || base_dir.empty()) return path;
  return std::filesystem::absolute(base_dir / p).lexically_normal().string();
}

std::vector<std::string> read_column_list(const Json& v, const std::string& path,
                                          bool allow_single) {
  std::vector<std::string> columns;
  if (allow_single && v.is_string()) {
    columns.push_back(v.get<std::string>());
  } else if (v.is_array() && !v.empty()) {
    for (size_t i = 0; i < v.size(); ++i) {
      columns.push_back(json_io::to_string(v[i], index_path(path, i), "a column name"));
    }
  } else {
    fail_expected(path,
                  allow_single ? "a column name or a list of column names"
                               : "a non-empty list of column names",
                  v);
  }
  return columns;
}

DataSpec parse_data(const Json& doc, const std::string& path, const std::filesystem::path& base) {
  if (!doc.is_object()) fail_expected(path, "a JSON object", doc);
  DataSpec data;
  const bool csv = doc.contains("csv");
  if (csv && doc.contains("generator"))
    fail(key_path(path, "csv"), "cannot be combined with \"generator\"");
  if (doc.contains("dataset")) {
    for (const char* other : {"generator", "csv"})
      if (doc.contains(other))
        fail(key_path(path, "dataset"), std::string("cannot be combined with \"") + other + "\"");
    ObjectReader r(doc, path,
                   {"dataset", "path", "subset", "scale", "validation_data", "standardize"});
    data.generator.clear();
    const Json& name = r.require("dataset", "a Keras data set name");
    data.dataset = json_io::to_string(name, r.path_of("dataset"), "a Keras data set name");
    if (data.dataset != "fashion_mnist")
      fail_unsupported(r.path_of("dataset"), name,
                       "; the data set it reads is \"fashion_mnist\" "
                       "(keras.datasets.fashion_mnist)");
    if (const Json* dir = r.get_non_null("path"))
      data.dataset_dir = resolve(json_io::to_path(*dir, r.path_of("path")), base);
    data.subset = r.integer("subset", 0, "0 (every image) or a positive number of images", 0,
                            int64_t{1} << 40);
    data.scale = r.boolean("scale", true);
    if (const Json* v = r.get_non_null("validation_data")) {
      if (!v->is_string() || v->get<std::string>() != "test")
        fail_expected(r.path_of("validation_data"),
                      "\"test\" (validate on the test images) or null", *v);
      data.validation_test = true;
    }
    data.standardize = r.boolean("standardize", false);
    return data;
  }
  if (doc.contains("directory")) {
    for (const char* other : {"generator", "csv"})
      if (doc.contains(other))
        fail(key_path(path, "directory"), std::string("cannot be combined with \"") + other + "\"");
    ObjectReader r(doc, path,
                   {"directory", "image_size", "color_mode", "label_mode", "validation_split",
                    "subset", "seed", "shuffle", "unreadable", "standardize"});
    data.generator.clear();
    data.directory =
        resolve(json_io::to_path(r.require("directory", "a folder with one subfolder per class"),
                                 r.path_of("directory")),
                base);
    if (const Json* size = r.get_non_null("image_size")) {
      const std::string at = r.path_of("image_size");
      const auto too_big = [&](int64_t v) {
        if (v > 16384) fail(at, std::to_string(v) + " pixels is too large: at most 16384 per side");
      };
      if (size->is_number_integer()) {
        const std::vector<int64_t> d = json_io::to_dims(Json::array({*size}), at);
        too_big(d[0]);
        data.image_height = data.image_width = d[0];
      } else {
        const std::vector<int64_t> dims = json_io::to_dims(*size, at);
        if (dims.size() != 2)
          fail_expected(at, "[height, width] in pixels (or one number for a square)", *size);
        too_big(dims[0]);
        too_big(dims[1]);
        data.image_height = dims[0];
        data.image_width = dims[1];
      }
    }
    const auto one_of = [&](const char* key, const std::string& fallback,
                            std::initializer_list<const char*> values) {
      std::string expected;
      for (const char* v : values)
        expected += (expected.empty() ? "" : ", ") + std::string("\"") + v + "\"";
      const std::string value = r.string(key, fallback, "one of " + expected);
      for (const char* v : values)
        if (value == v) return value;
      fail_expected(r.path_of(key), "one of " + expected, *r.get(key));
    };
    data.color_mode = one_of("color_mode", "rgb", {"grayscale", "rgb", "rgba"});
    data.label_mode = one_of("label_mode", "int", {"int", "categorical", "binary"});
    data.image_validation_split =
        r.number("validation_split", 0.0, "a fraction in (0, 1), or 0 for none",
                 {.lo = 0.0, .hi = 1.0, .hi_open = true});
    data.image_subset = one_of("subset", "both", {"training", "validation", "both"});
    if (data.image_subset != "both" && data.image_validation_split == 0.0)
      fail(r.path_of("subset"),
           "\"" + data.image_subset + "\" needs a validation_split (the fraction that validates)");
    if (const Json* seed = r.get_non_null("seed"))
      data.seed = json_io::to_uint64(*seed, r.path_of("seed"), "a non-negative integer");
    if (data.seed > 0xffffffffULL)
      fail(r.path_of("seed"), "must be below 2^32, as NumPy's RandomState seeds are");
    data.image_shuffle = r.boolean("shuffle", true);
    data.skip_unreadable = one_of("unreadable", "refuse", {"refuse", "skip"}) == "skip";
    data.standardize = r.boolean("standardize", false);
    return data;
  }
  if (csv) {
    ObjectReader r(doc, path, {"csv", "target", "features", "delimiter", "standardize"});
    data.generator.clear();
    const Json& file = r.require("csv", "the CSV file");
    data.csv = json_io::to_path(file, r.path_of("csv"));
    data.csv = resolve(data.csv, base);
    data.target = read_column_list(r.require("target", "the target column or columns"),
                                   r.path_of("target"), true);
    if (const Json* features = r.get_non_null("features")) {
      data.features_columns = read_column_list(*features, r.path_of("features"), false);
    }
    const std::string delimiter = r.string("delimiter", ",", "a single ASCII character");
    if (delimiter.size() != 1)
      fail_expected(r.path_of("delimiter"), "a single ASCII character", *r.get("delimiter"));
    data.delimiter = delimiter[0];
    data.standardize = r.boolean("standardize", false);
    return data;
  }
  if (!doc.contains("generator")) {
    fail(path,
         "needs \"generator\" (e.g. \"circle\"), \"csv\" (a file), \"dataset\" "
         "(\"fashion_mnist\") or \"directory\" (a folder of images, one subfolder per class)");
  }
  const Json& generator = doc.at("generator");
  data.generator = json_io::to_string(generator, key_path(path, "generator"), "a generator name");
  if (std::find(kGenerators.begin(), kGenerators.end(), data.generator) == kGenerators.end()) {
    fail_unsupported(key_path(path, "generator"), generator,
                     "; expected one of: " + join(kGenerators));
  }
  if (!uses_features(data.generator) && doc.contains("features")) {
    fail(key_path(path, "features"), "is not used by the \"" + data.generator +
                                         "\" generator (only seed, seed_legacy and blobs take it)");
  }
  if (data.generator != "blobs" && doc.contains("classes")) {
    fail(key_path(path, "classes"),
         "is not used by the \"" + data.generator + "\" generator (only blobs takes it)");
  }
  std::vector<std::string> keys = {"generator", "samples", "noise", "seed"};
  if (uses_features(data.generator)) keys.push_back("features");
  if (data.generator == "blobs") keys.push_back("classes");
  keys.push_back("standardize");
  ObjectReader r(doc, path, keys);
  constexpr int64_t kMax = int64_t{1} << 40;
  data.samples = r.integer("samples", data.samples, "a positive integer", 1, kMax);
  data.noise = r.number("noise", data.noise, "a number >= 0", {.lo = 0.0});
  if (const Json* seed = r.get("seed")) {
    data.seed = json_io::to_uint64(*seed, r.path_of("seed"), "a non-negative integer");
  }
  data.features = r.integer("features", data.features, "a positive integer", 1, kMax);
  data.classes = r.integer("classes", data.classes, "an integer >= 2", 2, kMax);
  data.standardize = r.boolean("standardize", false);
  return data;
}

Json data_to_json(const DataSpec& data) {
  Json doc = Json::object();
  if (!data.dataset.empty()) {
    doc["dataset"] = data.dataset;
    if (!data.dataset_dir.empty()) doc["path"] = data.dataset_dir;
    if (data.subset > 0) doc["subset"] = data.subset;
    doc["scale"] = data.scale;
    if (data.validation_test) doc["validation_data"] = "test";
  } else if (!data.directory.empty()) {
    doc["directory"] = data.directory;
    doc["image_size"] = Json::array({data.image_height, data.image_width});
    doc["color_mode"] = data.color_mode;
    doc["label_mode"] = data.label_mode;
    if (data.image_validation_split > 0.0) {
      doc["validation_split"] = data.image_validation_split;
      doc["subset"] = data.image_subset;
    }
    doc["seed"] = data.seed;
    doc["shuffle"] = data.image_shuffle;
    doc["unreadable"] = data.skip_unreadable ? "skip" : "refuse";
  } else if (!data.csv.empty()) {
    doc["csv"] = data.csv;
    doc["target"] = data.target.size() == 1 ? Json(data.target[0]) : Json(data.target);
    if (!data.features_columns.empty()) doc["features"] = data.features_columns;
    if (data.delimiter != ',') doc["delimiter"] = std::string(1, data.delimiter);
  } else {
    doc["generator"] = data.generator;
    doc["samples"] = data.samples;
    doc["noise"] = data.noise;
    doc["seed"] = data.seed;
    if (uses_features(data.generator)) doc["features"] = data.features;
    if (data.generator == "blobs") doc["classes"] = data.classes;
  }
  doc["standardize"] = data.standardize;
  return doc;
}

DevicesSpec parse_devices(const Json& doc, const std::string& path) {
  ObjectReader r(doc, path,
                 {"type", "count", "speed", "link_latency_us", "link_gbps", "allreduce",
                  "batch_norm_statistics"});
  DevicesSpec devices;
  devices.type = r.string("type", "cpu", "\"cpu\", \"gpu\" or \"tpu\"");
  if (devices.type != "cpu" && devices.type != "gpu" && devices.type != "tpu") {
    fail_expected(r.path_of("type"), "\"cpu\", \"gpu\" or \"tpu\"", *r.get("type"));
  }
  if (auto count = r.optional_integer(
          "count", "a whole number of devices from 1 to " + std::to_string(kMaxDeviceCount), 1,
          kMaxDeviceCount)) {
    devices.count = static_cast<int>(*count);
  }
  // Rehearsal knobs (docs/experiment-format.md#devices).
  if (const Json* speed = r.get_non_null("speed")) {
    if (!speed->is_array() || speed->empty())
      fail_expected(r.path_of("speed"), "a list of relative speeds, one per device", *speed);
    for (size_t i = 0; i < speed->size(); ++i) {
      devices.speed.push_back(json_io::to_number((*speed)[i], index_path(r.path_of("speed"), i),
                                                 "a relative speed from 0.01 to 1",
                                                 {.lo = kMinDeviceSpeed, .hi = 1.0}));
    }
    if (devices.count && static_cast<int>(devices.speed.size()) != *devices.count)
      fail(r.path_of("speed"),
           "has " + counted(static_cast<long long>(devices.speed.size()), "entry", "entries") +
               " but devices.count is " + std::to_string(*devices.count) +
               "; give one speed per device");
  }
  devices.link_latency_us =
      r.number("link_latency_us", 0.0, "a number of microseconds from 0 to 100000 (100 ms)",
               {.lo = 0.0, .hi = kMaxLinkLatencyUs});
  devices.link_gbps =
      r.number("link_gbps", 0.0, "0 (unlimited) or a bandwidth in GB/s from 0.01 to 10000",
               {.lo = 0.0, .hi = kMaxLinkGbps});
  if (devices.link_gbps > 0.0 && devices.link_gbps < kMinLinkGbps)
    fail_expected(r.path_of("link_gbps"), "0 (unlimited) or a bandwidth in GB/s from 0.01 to 10000",
                  *r.get("link_gbps"));
  const std::string choices = collective_algorithm_choices();
  devices.allreduce = r.string("allreduce", DevicesSpec{}.allreduce, choices);
  if (find_collective_algorithm(devices.allreduce) == nullptr)
    fail_expected(r.path_of("allreduce"), choices, *r.get("allreduce"));
  const char* statistics = "\"global\" or \"per_device\"";
  devices.batch_norm_statistics =
      r.string("batch_norm_statistics", DevicesSpec{}.batch_norm_statistics, statistics);
  if (devices.batch_norm_statistics != "global" && devices.batch_norm_statistics != "per_device")
    fail_expected(r.path_of("batch_norm_statistics"), statistics, *r.get("batch_norm_statistics"));
  return devices;
}

DistributionSpec parse_distribution(const Json& doc, const std::string& path) {
  DistributionSpec dist;
  if (doc.is_null()) return dist;
  if (!doc.is_object()) fail_expected(path, "null or {\"class_name\": \"DataParallel\"}", doc);
  const Json* class_name = doc.contains("class_name") ? &doc.at("class_name") : nullptr;
  if (class_name == nullptr)
    fail(key_path(path, "class_name"), "is required (DataParallel or ModelParallel)");
  dist.class_name = json_io::to_string(*class_name, key_path(path, "class_name"));
  if (dist.class_name == "DataParallel") {
    ObjectReader r(doc, path, {"class_name"});
    return dist;
  }
  if (dist.class_name != "ModelParallel") {
    fail_unsupported(key_path(path, "class_name"), *class_name,
                     "; expected one of: DataParallel, ModelParallel");
  }
  ObjectReader r(doc, path, {"class_name", "mesh", "layout_map", "batch_dim_name"});
  ObjectReader mesh(r.require("mesh", "the device mesh {\"shape\": [...], \"axis_names\": [...]}"),
                    r.path_of("mesh"), {"shape", "axis_names"});
  const std::vector<int64_t> shape =
      json_io::to_dims(mesh.require("shape", "the mesh's size per axis"), mesh.path_of("shape"));
  for (size_t i = 0; i < shape.size(); ++i) {
    // No axis can be larger than the whole device count (checked before narrowing to int).
    if (shape[i] > kMaxDeviceCount) {
      fail(index_path(mesh.path_of("shape"), i),
           "must be at most " + std::to_string(kMaxDeviceCount) +
               " devices (the most fitbench simulates), got " + std::to_string(shape[i]));
    }
    dist.mesh_shape.push_back(static_cast<int>(shape[i]));
  }
  const Json& names = mesh.require("axis_names", "one name per mesh axis");
  const std::string wanted =
      dist.mesh_shape.size() == 1
          ? std::string("a list of 1 axis name")
          : "a list of " + std::to_string(dist.mesh_shape.size()) + " axis names";
  if (!names.is_array()) fail_expected(mesh.path_of("axis_names"), wanted, names);
  if (names.size() != dist.mesh_shape.size()) {
    fail(mesh.path_of("axis_names"),
         "must be " + wanted + ", one per entry of shape, got " + std::to_string(names.size()));
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const std::string place = index_path(mesh.path_of("axis_names"), i);
    const std::string name = json_io::to_string(names[i], place, "an axis name");
    if (name.empty()) fail_expected(place, "a non-empty axis name", names[i]);
    if (std::find(dist.axis_names.begin(), dist.axis_names.end(), name) != dist.axis_names.end()) {
      fail(place, "\"" + name + "\" is already the name of another axis");
    }
    dist.axis_names.push_back(name);
  }
  const std::string axes = join(dist.axis_names);
  if (const Json* layouts = r.get_non_null("layout_map")) {
    if (!layouts->is_object())
      fail_expected(r.path_of("layout_map"), "an object {regex: [axes]}", *layouts);
    for (auto it = layouts->begin(); it != layouts->end(); ++it) {
      const std::string place = layout_entry_place(it.key());
      if (const std::string why = layout_key_error(it.key()); !why.empty()) fail(place, why);
      if (!it->is_array())
        fail_expected(place, "a list with an axis name or null per dimension", *it);
      std::vector<std::string> layout;
      for (size_t i = 0; i < it->size(); ++i) {
        const Json& axis = (*it)[i];
        if (axis.is_null()) {
          layout.emplace_back();
          continue;
        }
        const std::string name =
            json_io::to_string(axis, index_path(place, i), "an axis name or null");
        if (std::find(dist.axis_names.begin(), dist.axis_names.end(), name) ==
            dist.axis_names.end()) {
          fail_expected(index_path(place, i), "null or one of the mesh's axes (" + axes + ")",
                        axis);
        }
        layout.push_back(name);
      }
      dist.layout_map.emplace_back(it.key(), std::move(layout));
    }
  }
  if (const Json* batch = r.get_non_null("batch_dim_name")) {
    dist.batch_dim_name = json_io::to_string(*batch, r.path_of("batch_dim_name"));
    if (std::find(dist.axis_names.begin(), dist.axis_names.end(), dist.batch_dim_name) ==
        dist.axis_names.end()) {
      fail_expected(r.path_of("batch_dim_name"), "one of the mesh's axes (" + axes + ")", *batch);
    }
  }
  return dist;
}

Json distribution_to_json(const DistributionSpec& dist) {
  if (dist.class_name.empty()) return Json(nullptr);
  Json doc = Json::object();
  doc["class_name"] = dist.class_name;
  if (dist.class_name != "ModelParallel") return doc;
  Json mesh = Json::object();
  mesh["shape"] = dist.mesh_shape;
  mesh["axis_names"] = dist.axis_names;
  doc["mesh"] = std::move(mesh);
  Json layouts = Json::object();
  for (const auto& [regex, axes] : dist.layout_map) {
    Json layout = Json::array();
    for (const std::string& axis : axes)
      layout.push_back(axis.empty() ? Json(nullptr) : Json(axis));
    layouts[regex] = std::move(layout);
  }
  doc["layout_map"] = std::move(layouts);
  if (!dist.batch_dim_name.empty()) doc["batch_dim_name"] = dist.batch_dim_name;
  return doc;
}

ExperimentSpec parse_document(const Json& doc, const std::filesystem::path& base_dir) {
  // A model file given where an experiment belongs: say so rather than list the keys.
  if (doc.is_object() && doc.contains("format") && doc.contains("weights") && !doc.contains("data"))
    fail("",
         "is a model file (\"format\": \"fitbench-model\"), not an experiment; "
         "`fitbench-cli evaluate` and `predict` take model files, and an experiment starts from "
         "one with initial_weights");
  ObjectReader r(doc, "",
                 {"name", "description", "seed", "devices", "distribution", "data", "model",
                  "compile", "fit", "initial_weights", "sweep"});
  ExperimentSpec spec;
  spec.name = r.string("name", "");
  spec.description = r.string("description", "", "a string (Markdown)");
  spec.seed = r.optional_uint64("seed", "null or a non-negative integer");
  if (const Json* devices = r.get_non_null("devices"))
    spec.devices = parse_devices(*devices, "devices");
  if (const Json* dist = r.get("distribution"))
    spec.distribution = parse_distribution(*dist, "distribution");
  spec.data = parse_data(r.require("data", "where the training data comes from"), "data", base_dir);
  const Json& model = r.require("model", "a Keras Sequential model config");
  spec.model = parse_model_config(model, "model");
  if (const Json* compile = r.get_non_null("compile")) {
    spec.compile = parse_compile(*compile, "compile");
  } else if (model.contains("compile_config") && !model.at("compile_config").is_null()) {
    // A compiled model's to_json() carries its compile() arguments.
    spec.compile = parse_compile(model.at("compile_config"), "model.compile_config");
  } else {
    r.require("compile", "the optimizer, loss and metrics");
  }
  if (const Json* fit = r.get_non_null("fit")) spec.fit = parse_fit(*fit, "fit");
  if (!spec.data.directory.empty() && spec.data.has_own_validation() &&
      spec.fit.validation_split > 0.0)
    fail("fit.validation_split",
         "cannot be combined with data.validation_split: the folder's validation subset is the "
         "validation data; remove one of the two");
  if (spec.data.validation_test && spec.fit.validation_split > 0.0)
    fail("fit.validation_split",
         "cannot be combined with data.validation_data \"test\": the test images are the "
         "validation data; remove one of the two");
  if (const Json* weights = r.get_non_null("initial_weights")) {
    const std::string file = json_io::to_path(*weights, "initial_weights");
    spec.initial_weights = resolve(file, base_dir);
  }
  if (const Json* sweep = r.get_non_null("sweep")) {
    // Checked in full by plan_sweep, which needs the rest of the experiment.
    if (!sweep->is_object())
      fail_expected("sweep", "null or an object (method, objective, parameters, ...)", *sweep);
    spec.sweep = *sweep;
  }
  return spec;
}

}  // namespace

ExperimentSpec parse_experiment(const Json& doc, const std::string& source,
                                const std::filesystem::path& base_dir) {
  try {
    return parse_document(doc, base_dir);
  } catch (const InputError& e) {
    if (source.empty()) throw;
    throw e.within(source);
  }
}

ExperimentSpec parse_experiment(const nlohmann::json& doc, const std::string& source,
                                const std::filesystem::path& base_dir) {
  return parse_experiment(Json(doc), source, base_dir);
}

ExperimentSpec read_experiment(const std::filesystem::path& file) {
  const Json doc = json_io::read_json_file(file);
  return parse_experiment(doc, file.string(), std::filesystem::absolute(file).parent_path());
}

Json experiment_to_ordered_json(const ExperimentSpec& spec) {
  Json doc = Json::object();
  doc["name"] = spec.name;
  if (!spec.description.empty()) doc["description"] = spec.description;
  if (spec.seed) doc["seed"] = *spec.seed;
  const DevicesSpec& dev = spec.devices;
  if (dev.type != "cpu" || dev.count || !dev.speed.empty() || dev.link_latency_us != 0.0 ||
      dev.link_gbps != 0.0 || dev.allreduce != "ring" || dev.batch_norm_statistics != "global") {
    Json devices = Json::object();
    devices["type"] = dev.type;
    if (dev.count) devices["count"] = *dev.count;
    if (!dev.speed.empty()) devices["speed"] = dev.speed;
    if (dev.link_latency_us != 0.0) devices["link_latency_us"] = dev.link_latency_us;
    if (dev.link_gbps != 0.0) devices["link_gbps"] = dev.link_gbps;
    if (dev.allreduce != "ring") devices["allreduce"] = dev.allreduce;
    if (dev.batch_norm_statistics != "global")
      devices["batch_norm_statistics"] = dev.batch_norm_statistics;
    doc["devices"] = std::move(devices);
  }
  if (!spec.distribution.class_name.empty())
    doc["distribution"] = distribution_to_json(spec.distribution);
  doc["data"] = data_to_json(spec.data);
  doc["model"] = model_config_to_ordered_json(spec.model);
  doc["compile"] = compile_to_ordered_json(spec.compile);
  doc["fit"] = fit_to_ordered_json(spec.fit);
  if (!spec.initial_weights.empty()) doc["initial_weights"] = spec.initial_weights;
  if (!spec.sweep.is_null()) doc["sweep"] = spec.sweep;
  return doc;
}

nlohmann::ordered_json experiment_to_json(const ExperimentSpec& spec) {
  return experiment_to_ordered_json(spec);
}

void write_experiment(const ExperimentSpec& spec, const std::filesystem::path& file) {
  json_io::write_file_atomically(file, json_io::dump_document(experiment_to_ordered_json(spec)));
}

}  // namespace fitbench
