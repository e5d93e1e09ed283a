// Reading .keras archives (libzip) and Keras weights files (HDF5 file images): the model through
// parse_keras_model_json, the layers' variables from layers/<group>/vars/<i> in Keras's order,
// the Normalization statistics and the optimizer's variables. A damaged container, a missing
// group or dataset, a wrong shape or type is refused with a sentence naming the place.
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string_view>

#include "core/base/child_check.h"
#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/base/sanitized.h"
#include "core/file_checks.h"
#include "core/io/hdf5_handle.h"
#include "core/io/json_file.h"
#include "core/io/keras_config.h"
#include "core/io/keras_file.h"

namespace fitbench {
namespace {

// The number of values of a shape, saturating at INT64_MAX (a damaged file's dimensions may
// overflow).
int64_t element_count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && n > INT64_MAX / d)) return INT64_MAX;
    n *= d;
  }
  return n;
}

std::string read_bytes(const std::filesystem::path& file) {
  check_regular_file(file, file.string());
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(file.string(), std::string("cannot be read: ") + std::strerror(errno));
  const std::streamoff size = in.tellg();
  if (size < 0) throw InputError(file.string(), "cannot be read");
  if (static_cast<uint64_t>(size) > kMaxKerasFileBytes)
    throw InputError(file.string(), "is " + std::to_string(size >> 20) +
                                        " MiB, more than the 4 GiB fitbench reads");
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size))
    throw InputError(file.string(), std::string("cannot be read: ") + std::strerror(errno));
  return bytes;
}

// An HDF5 file image opened read-only. The caller holds hdf5_lock().
class H5Image {
 public:
  H5Image(std::string_view bytes, const std::string& place) : place_(place) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    if (bytes.size() < 8 || std::memcmp(bytes.data(), "\x89HDF\r\n\x1a\n", 8) != 0)
      throw InputError(place, "is not an HDF5 file (Keras weights are HDF5)");
    H5Handle fapl(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    if (H5Pset_fapl_core(fapl.get(), 1 << 16, false) < 0 ||
        H5Pset_file_image(fapl.get(), const_cast<char*>(bytes.data()), bytes.size()) < 0)
      throw InputError(place, "cannot be opened as an HDF5 file");
    file_ = H5Fopen("keras-weights.h5", H5F_ACC_RDONLY, fapl.get());
    if (file_ < 0) throw InputError(place, "is a damaged HDF5 file and cannot be opened");
  }
  ~H5Image() { H5Fclose(file_); }
  H5Image(const H5Image&) = delete;
  H5Image& operator=(const H5Image&) = delete;

  const std::string& place() const { return place_; }
  // Whether `path` names a group. A name that exists but whose link or object header HDF5
  // cannot read is a damaged file, said as such rather than as a missing group.
  bool has_group(const std::string& path) const {
    // Each step must exist before the next is asked for.
    std::string sofar;
    size_t start = 0;
    while (start <= path.size()) {
      const size_t slash = path.find('/', start);
      sofar = path.substr(0, slash);
      const htri_t exists = H5Lexists(file_, sofar.c_str(), H5P_DEFAULT);
      if (exists < 0) fail(sofar, "cannot be read (the file is damaged here)");
      if (exists == 0) return false;
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    H5O_info_t info;
    if (H5Oget_info_by_name2(file_, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT) < 0)
      fail(path, "cannot be read (the file is damaged here: its object header is unreadable)");
    return info.type == H5O_TYPE_GROUP;
  }
  // The number of members of a group ("0", "1", ... in a vars group).
  size_t members(const std::string& group) const {
    H5Handle g(H5Gopen2(file_, group.c_str(), H5P_DEFAULT), H5Gclose);
    H5G_info_t info;
    if (!g.ok() || H5Gget_info(g.get(), &info) < 0) fail(group, "cannot be read");
    return static_cast<size_t>(info.nlinks);
  }
  // A dataset's shape; refuses anything but a number dataset.
  Shape shape(const std::string& path) const {
    if (H5Lexists(file_, path.c_str(), H5P_DEFAULT) <= 0) fail(path, "is missing");
    H5Handle set(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
    if (!set.ok()) fail(path, "is not a dataset");
    H5Handle type(H5Dget_type(set.get()), H5Tclose);
    const H5T_class_t c = H5Tget_class(type.get());
    if (c != H5T_FLOAT && c != H5T_INTEGER)
      fail(path, "holds neither floats nor integers, so it cannot be a variable's value");
    const size_t bytes = H5Tget_size(type.get());
    if (bytes != 8 && bytes != 4 && bytes != 2 && !(c == H5T_INTEGER && bytes == 1))
      fail(path, std::string("holds ") + (c == H5T_FLOAT ? "floats" : "integers") + " of " +
                     std::to_string(bytes) +
                     " bytes, which no variable has (Keras stores floats of 2, 4 or 8 bytes "
                     "and integers of 1 to 8)");
    H5Handle space(H5Dget_space(set.get()), H5Sclose);
    const int rank = H5Sget_simple_extent_ndims(space.get());
    if (rank < 0 || rank > 8) fail(path, "has an unreadable shape");
    hsize_t dims[8];
    H5Sget_simple_extent_dims(space.get(), dims, nullptr);
    return Shape(dims, dims + rank);
  }
  std::vector<float> floats(const std::string& path, const Shape& expected) const {
    const Shape got = shape(path);
    if (got != expected)
      fail(path, "has shape " + text(got) + " but the model's variable has shape " +
                     text(expected) + " (the file was saved from another model)");
    int64_t n = 1;
    for (int64_t d : expected) n *= d;
    H5Handle set(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
    check_stored(set.get(), path, n);
    std::vector<float> values(static_cast<size_t>(n));
    if (n > 0 &&
        H5Dread(set.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()) < 0)
      fail(path, "cannot be read");
    for (float v : values)
      if (!std::isfinite(v)) fail(path, "holds NaN or infinite values");
    return values;
  }
  int64_t integer(const std::string& path) const {
    if (!shape(path).empty()) fail(path, "must be a scalar");
    H5Handle set(H5Dopen2(file_, path.c_str(), H5P_DEFAULT), H5Dclose);
    long long v = 0;
    if (H5Dread(set.get(), H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0)
      fail(path, "cannot be read as an integer");
    return v;
  }
  // A dataset may declare values it does not store (HDF5 then reads its fill value): a damaged
  // file's dimensions are refused before memory is taken for them. Keras stores its variables
  // uncompressed, all of their bytes; a compressed dataset may hold at most deflate's largest
  // ratio (1032:1) fewer bytes than its values.
  void check_stored(hid_t set, const std::string& path, int64_t values) const {
    if (values <= 0) return;
    H5Handle type(H5Dget_type(set), H5Tclose);
    H5Handle dcpl(H5Dget_create_plist(set), H5Pclose);
    const size_t element = type.ok() ? H5Tget_size(type.get()) : 0;
    if (element == 0 || !dcpl.ok()) fail(path, "cannot be read");
    const int filters = H5Pget_nfilters(dcpl.get());
    const double stored = static_cast<double>(H5Dget_storage_size(set));
    const double needed = static_cast<double>(values) * static_cast<double>(element);
    if (stored * (filters > 0 ? 1032.0 : 1.0) < needed)
      fail(path, "declares " + std::to_string(values) + " values of " + std::to_string(element) +
                     " bytes but stores only " + std::to_string(static_cast<long long>(stored)) +
                     " bytes of them (the file is damaged)");
  }
  [[noreturn]] void fail(const std::string& path, const std::string& message) const {
    throw InputError(place_ + ": " + path, message);
  }

 private:
  static std::string text(const Shape& s) {
    std::string out = "(";
    for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
  }
  std::string place_;
  hid_t file_ = -1;
};

// Whether the Normalization layer's statistics are read: a .keras file's config says whether
// the model has the layer; a weights file alone has its group or not.
enum class Statistics { kNone, kRequired, kIfPresent };

// Everything the read of a weights image depends on besides its bytes and its place in messages,
// taken from the model: plain values, so that the check program (fitbench-hdf5-check) is given
// exactly these, as JSON. (Not the place: a file's name need not be UTF-8, which JSON text is.)
struct ImageRequest {
  std::vector<KerasLayerVars> layers;
  int64_t features = 0;
  Statistics statistics = Statistics::kNone;
  std::vector<double> mean, variance;  // from the config; empty: from the weights
  bool has_rate = true;                // the optimizer keeps its learning rate (no schedule)
};

// What a weights image holds for the model.
struct ImageContents {
  std::vector<NamedWeight> weights;
  bool has_statistics = false;
  std::vector<double> mean, stddev;
  std::optional<OptimizerState> optimizer;
};

// The request's version: a check program of another build refuses one it does not know.
constexpr const char* kImageRequestKind = "fitbench keras weights image 1";

nlohmann::json request_json(const ImageRequest& r) {
  nlohmann::json layers = nlohmann::json::array();
  for (const KerasLayerVars& layer : r.layers) {
    nlohmann::json variables = nlohmann::json::array();
    for (const NamedWeight& v : layer.variables)
      variables.push_back({{"path", v.path}, {"shape", v.shape}});
    layers.push_back({{"group", layer.group}, {"name", layer.name}, {"variables", variables}});
  }
  return {{"kind", kImageRequestKind},
          {"layers", layers},
          {"features", r.features},
          {"statistics", static_cast<int>(r.statistics)},
          {"mean", r.mean},
          {"variance", r.variance},
          {"has_rate", r.has_rate}};
}

// Throws std::exception (nlohmann's or std::invalid_argument) for a request of another kind or
// shape.
ImageRequest parse_request(const nlohmann::json& doc) {
  if (doc.at("kind").get<std::string>() != kImageRequestKind)
    throw std::invalid_argument("another kind of request");
  ImageRequest r;
  for (const nlohmann::json& layer : doc.at("layers")) {
    KerasLayerVars vars{
        layer.at("group").get<std::string>(), layer.at("name").get<std::string>(), {}};
    for (const nlohmann::json& v : layer.at("variables"))
      vars.variables.push_back({v.at("path").get<std::string>(), v.at("shape").get<Shape>(), {}});
    r.layers.push_back(std::move(vars));
  }
  r.features = doc.at("features").get<int64_t>();
  const int statistics = doc.at("statistics").get<int>();
  if (statistics < 0 || statistics > static_cast<int>(Statistics::kIfPresent))
    throw std::invalid_argument("no such statistics");
  r.statistics = static_cast<Statistics>(statistics);
  r.mean = doc.at("mean").get<std::vector<double>>();
  r.variance = doc.at("variance").get<std::vector<double>>();
  r.has_rate = doc.at("has_rate").get<bool>();
  return r;
}

// The weights, Normalization statistics and optimizer state of a weights file image. The caller
// holds hdf5_lock().
ImageContents read_image(std::string_view bytes, const std::string& place, const ImageRequest& r) {
  const std::vector<KerasLayerVars>& layers = r.layers;
  const int64_t features = r.features;
  H5Image h5(bytes, place);
  ImageContents out;
  for (const KerasLayerVars& layer : layers) {
    const std::string vars = "layers/" + layer.group + "/vars";
    if (!h5.has_group(vars))
      h5.fail(vars, "is missing: the model's layer \"" + layer.name +
                        "\" has no weights here (Keras keeps a model's layers under "
                        "layers/<class name in snake_case>, _1, _2, ... for repeats)");
    const size_t n = h5.members(vars);
    if (n != layer.variables.size())
      h5.fail(vars, "holds " + counted(static_cast<long long>(n), "variable") +
                        " but the layer \"" + layer.name + "\" has " +
                        std::to_string(layer.variables.size()));
    for (size_t i = 0; i < layer.variables.size(); ++i) {
      NamedWeight w = layer.variables[i];
      w.values = h5.floats(vars + "/" + std::to_string(i), w.shape);
      out.weights.push_back(std::move(w));
    }
  }
  const std::string norm = std::string("layers/") + kNormalizationGroup + "/vars";
  if (r.statistics == Statistics::kRequired ||
      (r.statistics == Statistics::kIfPresent && h5.has_group(norm) && h5.members(norm) >= 2)) {
    std::vector<double> m = r.mean, v = r.variance;
    if (m.empty()) {
      if (!h5.has_group(norm)) h5.fail(norm, "is missing: the Normalization layer's statistics");
      for (const char* which : {"0", "1"}) {
        const std::vector<float> values = h5.floats(norm + "/" + which, Shape{features});
        (which[0] == '0' ? m : v).assign(values.begin(), values.end());
      }
    }
    if (m.size() == 1) m.assign(static_cast<size_t>(features), m[0]);
    if (v.size() == 1) v.assign(static_cast<size_t>(features), v[0]);
    if (static_cast<int64_t>(m.size()) != features || v.size() != m.size())
      throw InputError(place, "the Normalization layer has " + std::to_string(m.size()) +
                                  " statistics but the model has " + std::to_string(features) +
                                  " features");
    out.has_statistics = true;
    out.mean = m;
    // keras Normalization divides by max(sqrt(variance), epsilon()).
    for (double x : v) out.stddev.push_back(std::max(std::sqrt(x), 1e-7));
  }
  if (h5.has_group("optimizer/vars") && h5.members("optimizer/vars") > 0) {
    OptimizerState state;
    // The group's name attribute is not read: it is a variable-length string, kept in HDF5's
    // global heap, whose reader crashes or hangs on damaged files; the name comes from the
    // compile options when the model is written again.
    const size_t n = h5.members("optimizer/vars");
    size_t i = 0;
    state.iterations = h5.integer("optimizer/vars/0");
    ++i;
    if (r.has_rate && i < n) {
      const std::string path = "optimizer/vars/" + std::to_string(i++);
      state.learning_rate = h5.floats(path, Shape{}).front();
    }
    // A slot is shaped like one of the model's variables: a larger one is damage, refused before
    // anything is allocated for it.
    int64_t largest = 1;
    for (const KerasLayerVars& layer : layers)
      for (const NamedWeight& v : layer.variables)
        largest = std::max(largest, element_count(v.shape));
    for (; i < n; ++i) {
      const std::string path = "optimizer/vars/" + std::to_string(i);
      NamedWeight slot{path, h5.shape(path), {}};
      if (element_count(slot.shape) > largest)
        h5.fail(path,
                "holds more values than any variable of the model, so it cannot be one of "
                "its optimizer's slots (the file is damaged or from another model)");
      slot.values = h5.floats(path, slot.shape);
      if (slot.shape.empty()) slot.shape = {1};
      state.slot_variables.push_back(std::move(slot));
    }
    out.optimizer = std::move(state);
  }
  return out;
}

// The check program's path: beside this program, else the build tree's.
#ifndef FITBENCH_HDF5_CHECK_BUILT
#define FITBENCH_HDF5_CHECK_BUILT ""
#endif
const std::string& hdf5_check_program() {
  static const std::string program =
      check_program("fitbench-hdf5-check", FITBENCH_HDF5_CHECK_BUILT);
  return program;
}

// The memory the check program may take for a weights image of `bytes`: the image three or four
// times (the request, HDF5's copy of it, the values read out of it, twice their bytes for 16-bit
// floats) and HDF5's own, with room to spare: a 353 MB file of 88 million values takes 1.05 GB
// there, against 2.65 GB allowed. A sanitizer build's programs take several times more. Never more
// than this process could take itself. A damaged file that makes HDF5 allocate without end (a
// local heap whose free list leads back to itself) reaches it within a second or two.
int64_t check_memory_limit(size_t bytes) {
#ifdef FITBENCH_SANITIZED
  constexpr int64_t kBase = int64_t{1} << 30, kPerByte = 12;
#else
  constexpr int64_t kBase = int64_t{512} << 20, kPerByte = 6;
#endif
  return std::min(kBase + kPerByte * static_cast<int64_t>(bytes),
                  std::max<int64_t>(process_memory_limit().bytes, kBase));
}

// Fills `model`'s weights, its Normalization statistics (into model.data; `mean` and `variance`
// from the config if given) and its optimizer state from a weights file image, read first by the
// check program (core/base/child_check.h): a file that makes HDF5 crash, loop or allocate without
// end is refused with a sentence. The program gets a minute, and a second more per 16 MiB of file,
// and the memory of check_memory_limit.
void read_weights_image(const std::string& bytes, const std::string& place, ModelFile& model,
                        Statistics statistics, const std::vector<double>& mean,
                        const std::vector<double>& variance) {
  const ImageRequest request{keras_layer_vars(model.config),
                             keras_input_units(model.config),
                             statistics,
                             mean,
                             variance,
                             !(model.compile && model.compile->optimizer.schedule)};
  const std::string header = request_json(request).dump() + "\n";
  check_in_child(place, "HDF5", 60.0 + static_cast<double>(bytes.size()) / (16 << 20),
                 check_memory_limit(bytes.size()), hdf5_check_program(), {header, bytes});
  ImageContents contents;
  {
    std::lock_guard lock(hdf5_lock());
    contents = read_image(bytes, place, request);
  }
  model.weights = std::move(contents.weights);
  if (contents.has_statistics) {
    ModelData data = model.data.value_or(ModelData{});
    data.mean = std::move(contents.mean);
    data.stddev = std::move(contents.stddev);
    model.data = std::move(data);
  }
  model.optimizer = std::move(contents.optimizer);
}

// A zip member's bytes, or none when the archive has no such member.
std::optional<std::string> member(zip_t* archive, const char* name, const std::string& place) {
  const zip_int64_t index = zip_name_locate(archive, name, 0);
  if (index < 0) return std::nullopt;
  zip_stat_t st;
  if (zip_stat_index(archive, static_cast<zip_uint64_t>(index), 0, &st) != 0 ||
      !(st.valid & ZIP_STAT_SIZE))
    throw InputError(place + ": " + name, "cannot be read from the archive");
  if (st.size > kMaxKerasFileBytes)
    throw InputError(place + ": " + name, "is larger than the 4 GiB fitbench reads");
  zip_file_t* f = zip_fopen_index(archive, static_cast<zip_uint64_t>(index), 0);
  if (f == nullptr)
    throw InputError(place + ": " + name, std::string("cannot be read: ") + zip_strerror(archive));
  // The size in the archive's directory is a claim, not an amount of memory to take: the bytes
  // are read in pieces as they arrive, so a damaged directory cannot make the reader allocate
  // what the member does not hold.
  std::string bytes;
  std::string error;
  constexpr zip_uint64_t kPiece = zip_uint64_t{1} << 20;
  while (bytes.size() < st.size) {
    const size_t at = bytes.size();
    const zip_uint64_t want = std::min<zip_uint64_t>(kPiece, st.size - at);
    bytes.resize(at + static_cast<size_t>(want));
    const zip_int64_t got = zip_fread(f, bytes.data() + at, want);
    if (got <= 0) {
      if (got < 0) error = zip_file_strerror(f);
      bytes.resize(at);
      break;
    }
    bytes.resize(at + static_cast<size_t>(got));
  }
  zip_fclose(f);
  if (bytes.size() != st.size)
    throw InputError(place + ": " + name,
                     "is damaged: " + (error.empty() ? std::string("it ends early") : error));
  return bytes;
}

}  // namespace

ModelFile read_keras_archive(const std::filesystem::path& file) {
  const std::string place = file.string();
  const std::string bytes = read_bytes(file);
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(bytes.data(), bytes.size(), 0, &error);
  zip_t* archive =
      source ? zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error) : nullptr;
  if (archive == nullptr) {
    const std::string why = zip_error_strerror(&error);
    zip_error_fini(&error);
    if (source) zip_source_free(source);
    throw InputError(place, "is not a .keras file: it cannot be read as a zip archive (" + why +
                                "); Keras saves models as zips of config.json and "
                                "model.weights.h5");
  }
  std::optional<std::string> config, weights;
  try {
    config = member(archive, "config.json", place);
    weights = member(archive, "model.weights.h5", place);
  } catch (...) {
    zip_discard(archive);
    throw;
  }
  zip_discard(archive);
  if (!config) throw InputError(place, "has no config.json, so it holds no Keras model");
  if (!weights) throw InputError(place, "has no model.weights.h5, so it holds no weights");
  const KerasModelConfig parsed = parse_keras_model_json(
      json_io::parse_json_text(*config, place + ": config.json"), place + ": config.json");
  ModelFile model;
  model.config = parsed.model;
  model.compile = parsed.compile;
  try {
    keras_input_units(model.config);
  } catch (const InputError& e) {
    throw e.within(place + ": config.json");
  }
  read_weights_image(*weights, place + ": model.weights.h5", model,
                     parsed.normalization ? Statistics::kRequired : Statistics::kNone, parsed.mean,
                     parsed.variance);
  return model;
}

int check_keras_weights_request(int fd) {
  // The request is a file in memory (core/base/child_check.cpp): read whole, in one piece.
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_size < 0) return kCheckRequestRefused;
  std::string request(static_cast<size_t>(st.st_size), '\0');
  size_t at = 0;
  while (at < request.size()) {
    const ssize_t got = ::read(fd, request.data() + at, request.size() - at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return kCheckRequestRefused;
    at += static_cast<size_t>(got);
  }
  const size_t line = request.find('\n');
  if (line == std::string::npos) return kCheckRequestRefused;
  ImageRequest parsed;
  try {
    parsed = parse_request(nlohmann::json::parse(std::string_view(request).substr(0, line)));
  } catch (const std::exception&) {
    return kCheckRequestRefused;
  }
  // Got through: whether the image is read or refused, fitbench reads it itself next.
  try {
    std::lock_guard lock(hdf5_lock());
    (void)read_image(std::string_view(request).substr(line + 1), "the weights image", parsed);
  } catch (...) {
  }
  return 0;
}

ModelFile read_keras_weights(const std::filesystem::path& file, ModelFile like) {
  const std::string bytes = read_bytes(file);
  try {
    keras_input_units(like.config);
  } catch (const InputError&) {
    throw InputError(file.string(), "cannot be loaded into a model without an input shape");
  }
  like.data.reset();
  read_weights_image(bytes, file.string(), like, Statistics::kIfPresent, {}, {});
  return like;
}

}  // namespace fitbench
