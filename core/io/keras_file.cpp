// .keras and .weights.h5 through Debian's HDF5 (C API) and libzip. The HDF5 file is made and read
// in memory (the core driver and file images), so a .keras archive is assembled without
// temporary files and a .weights.h5 file is written atomically like every other output.
#include "core/io/keras_file.h"

#include <zip.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <fstream>
#include <mutex>

#include "core/base/error.h"
#include "core/io/hdf5_handle.h"
#include "core/io/json_file.h"
#include "core/io/json_reader.h"
#include "core/io/keras_config.h"
#include "core/io/model_file.h"

namespace fitbench {
namespace {

using json_io::Json;

[[noreturn]] void write_failed(const std::string& what) {
  throw std::runtime_error("cannot write the Keras weights (" + what + ")");
}

void check(herr_t status, const char* what) {
  if (status < 0) write_failed(what);
}

// A scalar variable-length UTF-8 string attribute, as h5py writes a str.
void write_name_attr(hid_t group, const std::string& name) {
  H5Handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  check(H5Tset_size(type.get(), H5T_VARIABLE), "string type");
  check(H5Tset_cset(type.get(), H5T_CSET_UTF8), "string type");
  H5Handle space(H5Screate(H5S_SCALAR), H5Sclose);
  H5Handle attr(H5Acreate2(group, "name", type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Aclose);
  if (!attr.ok()) write_failed("attribute");
  const char* text = name.c_str();
  check(H5Awrite(attr.get(), type.get(), &text), "attribute");
}

hid_t make_group(hid_t parent, const std::string& name) {
  const hid_t g = H5Gcreate2(parent, name.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) write_failed("group " + name);
  return g;
}

// <parent>/<name>/vars with its name attribute; returns the vars group.
hid_t make_vars(hid_t parent, const std::string& group, const std::string& name) {
  H5Handle g(make_group(parent, group), H5Gclose);
  const hid_t vars = make_group(g.get(), "vars");
  write_name_attr(vars, name);
  return vars;
}

// A contiguous little-endian dataset "<index>" of `shape` (empty: a scalar).
void write_dataset(hid_t vars, size_t index, const Shape& shape, hid_t file_type, hid_t mem_type,
                   const void* data) {
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  H5Handle space(dims.empty()
                     ? H5Screate(H5S_SCALAR)
                     : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr),
                 H5Sclose);
  const std::string name = std::to_string(index);
  H5Handle set(
      H5Dcreate2(vars, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
      H5Dclose);
  if (!set.ok()) write_failed("dataset " + name);
  check(H5Dwrite(set.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), "dataset");
}

void write_floats(hid_t vars, size_t index, const NamedWeight& w) {
  write_dataset(vars, index, w.shape, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, w.values.data());
}

void write_int_scalar(hid_t vars, size_t index, int64_t value) {
  const int32_t v = static_cast<int32_t>(std::min<int64_t>(value, INT32_MAX));
  write_dataset(vars, index, {}, H5T_STD_I32LE, H5T_NATIVE_INT32, &v);
}

const NamedWeight& weight_at(const ModelFile& model, const std::string& path) {
  for (const NamedWeight& w : model.weights)
    if (w.path == path) return w;
  throw InputError("weights", "has no values for the model's variable \"" + path + "\"");
}

// The weights file's bytes, as model.save_weights writes them.
std::string weights_image(const ModelFile& model) {
  const std::vector<KerasLayerVars> layers = keras_layer_vars(model.config);
  const int64_t features = keras_input_units(model.config);
  for (const KerasLayerVars& layer : layers)
    for (const NamedWeight& v : layer.variables) {
      const NamedWeight& w = weight_at(model, v.path);
      if (w.shape != v.shape) throw InputError("weights", "\"" + v.path + "\" has another shape");
      for (float f : w.values)
        if (!std::isfinite(f))
          throw InputError("weights", "\"" + v.path + "\" holds NaN or infinite values");
    }

  std::lock_guard lock(hdf5_lock());
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
  check(H5Pset_fapl_core(fapl.get(), 1 << 16, false), "memory file");
  static std::atomic<int> counter{0};
  const std::string name = "fitbench-weights-" + std::to_string(counter++) + ".h5";
  H5Handle file(H5Fcreate(name.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl.get()), H5Fclose);
  if (!file.ok()) write_failed("memory file");
  {
    H5Handle root_layers(make_group(file.get(), "layers"), H5Gclose);
    if (model.data && !model.data->mean.empty()) {
      // Normalization: mean, variance (float32) and its count (an int the loader expects).
      H5Handle vars(make_vars(root_layers.get(), kNormalizationGroup, kNormalizationGroup),
                    H5Gclose);
      NamedWeight mean{"mean", {features}, {}}, variance{"variance", {features}, {}};
      for (int64_t f = 0; f < features; ++f) {
        mean.values.push_back(static_cast<float>(model.data->mean.at(static_cast<size_t>(f))));
        const double s = model.data->stddev.at(static_cast<size_t>(f));
        variance.values.push_back(static_cast<float>(s * s));
      }
      write_floats(vars.get(), 0, mean);
      write_floats(vars.get(), 1, variance);
      write_int_scalar(vars.get(), 2, 0);
    }
    for (const KerasLayerVars& layer : layers) {
      H5Handle vars(make_vars(root_layers.get(), layer.group, layer.name), H5Gclose);
      for (size_t i = 0; i < layer.variables.size(); ++i)
        write_floats(vars.get(), i, weight_at(model, layer.variables[i].path));
    }
  }
  if (model.optimizer) {
    const OptimizerState& o = *model.optimizer;
    std::string name = o.name;
    if (name.empty() && model.compile) name = keras_snake_case(model.compile->optimizer.class_name);
    H5Handle vars(make_vars(file.get(), "optimizer", name), H5Gclose);
    size_t i = 0;
    write_int_scalar(vars.get(), i++, o.iterations);
    if (o.learning_rate)
      write_dataset(vars.get(), i++, {}, H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, &*o.learning_rate);
    for (const NamedWeight& slot : o.slot_variables) write_floats(vars.get(), i++, slot);
  }
  {
    H5Handle vars(make_group(file.get(), "vars"), H5Gclose);
    write_name_attr(vars.get(), model.config.name.empty() ? "sequential" : model.config.name);
  }
  check(H5Fflush(file.get(), H5F_SCOPE_GLOBAL), "flush");
  const ssize_t size = H5Fget_file_image(file.get(), nullptr, 0);
  if (size <= 0) write_failed("file image");
  std::string bytes(static_cast<size_t>(size), '\0');
  if (H5Fget_file_image(file.get(), bytes.data(), bytes.size()) != size) write_failed("file image");
  return bytes;
}

std::string local_time(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  char text[64];
  std::strftime(text, sizeof text, format, &tm);
  return text;
}

// Python's json.dumps with its defaults (", " and ": " separators, non-ASCII as \u escapes), as
// Keras writes.
std::string python_json(const Json& doc) {
  std::string out;
  const auto write = [&](const auto& self, const Json& v) -> void {
    if (v.is_object()) {
      out += '{';
      bool first = true;
      for (const auto& [key, value] : v.items()) {
        if (!first) out += ", ";
        first = false;
        out += Json(key).dump(-1, ' ', true, Json::error_handler_t::replace) + ": ";
        self(self, value);
      }
      out += '}';
    } else if (v.is_array()) {
      out += '[';
      for (size_t i = 0; i < v.size(); ++i) {
        if (i) out += ", ";
        self(self, v[i]);
      }
      out += ']';
    } else {
      out += v.dump(-1, ' ', true, Json::error_handler_t::replace);
    }
  };
  write(write, doc);
  return out;
}

struct ZipMember {
  std::string name;
  std::string bytes;
  std::time_t mtime;
};

// A stored (uncompressed) zip as Python's zipfile writes it, in memory.
std::string zip_image(const std::vector<ZipMember>& members) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (buffer == nullptr) write_failed("zip buffer");
  zip_source_keep(buffer);
  zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &error);
  if (archive == nullptr) {
    zip_source_free(buffer);
    write_failed("zip archive");
  }
  for (const ZipMember& m : members) {
    zip_source_t* data = zip_source_buffer(archive, m.bytes.data(), m.bytes.size(), 0);
    const zip_int64_t index =
        data ? zip_file_add(archive, m.name.c_str(), data, ZIP_FL_ENC_UTF_8) : -1;
    if (index < 0) {
      if (data) zip_source_free(data);
      zip_discard(archive);
      zip_source_free(buffer);
      write_failed("zip member " + m.name);
    }
    zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0);
    zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), m.mtime, 0);
    zip_file_set_external_attributes(archive, static_cast<zip_uint64_t>(index), 0, ZIP_OPSYS_UNIX,
                                     0600u << 16);
  }
  if (zip_close(archive) < 0) {
    zip_discard(archive);
    zip_source_free(buffer);
    write_failed("zip archive");
  }
  std::string bytes;
  if (zip_source_open(buffer) == 0) {
    zip_source_seek(buffer, 0, SEEK_END);
    const zip_int64_t size = zip_source_tell(buffer);
    zip_source_seek(buffer, 0, SEEK_SET);
    bytes.resize(static_cast<size_t>(std::max<zip_int64_t>(size, 0)));
    if (size <= 0 || zip_source_read(buffer, bytes.data(), size) != size) bytes.clear();
    zip_source_close(buffer);
  }
  zip_source_free(buffer);
  if (bytes.empty()) write_failed("zip archive");
  return bytes;
}

// 1980-01-01 00:00:00 local time, the date Python's zipfile gives members written from strings.
std::time_t zip_epoch() {
  std::tm tm{};
  tm.tm_year = 80;
  tm.tm_mday = 1;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}

}  // namespace

bool is_keras_archive(const std::filesystem::path& file) { return file.extension() == ".keras"; }

bool is_keras_weights(const std::filesystem::path& file) {
  const std::string name = file.filename().string();
  const std::string suffix = ".weights.h5";
  return name.size() > suffix.size() &&
         name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
}

void write_keras_weights(const ModelFile& model, const std::filesystem::path& file,
                         StagedFiles* into) {
  check_weights_finite(model, file);
  std::string bytes;
  try {
    bytes = weights_image(model);
  } catch (const InputError& e) {
    throw e.within(file.string());
  }
  json_io::write_file_atomically(file, bytes, into);
}

void write_keras_archive(const ModelFile& model, const std::filesystem::path& file,
                         StagedFiles* into) {
  check_weights_finite(model, file);
  std::vector<ZipMember> members;
  try {
    const Json metadata = {{"keras_version", "3.16.0"},
                           {"date_saved", local_time("%Y-%m-%d@%H:%M:%S")}};
    members.push_back({"metadata.json", python_json(metadata), zip_epoch()});
    members.push_back({"config.json", python_json(keras_model_json(model)), zip_epoch()});
    members.push_back({"model.weights.h5", weights_image(model), std::time(nullptr)});
  } catch (const InputError& e) {
    throw e.within(file.string());
  }
  json_io::write_file_atomically(file, zip_image(members), into);
}

}  // namespace fitbench
