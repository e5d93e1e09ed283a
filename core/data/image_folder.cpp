// A folder of images as keras.utils.image_dataset_from_directory reads one
// (keras/src/utils/image_dataset_utils.py, dataset_utils.py: index_directory,
// get_training_or_validation_split; tf.image.resize's bilinear kernel).

#include "core/data/image_folder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <random>
#include <system_error>

#include "core/base/error.h"
#include "core/base/memory_limit.h"
#include "core/base/tasks.h"
#include "core/base/text.h"

namespace fitbench {
namespace {

ImageDecoder& decoder_slot() {
  static ImageDecoder decoder;
  return decoder;
}

// Keras's ALLOWLIST_FORMATS, compared with the name in lower case.
bool has_image_extension(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* ext : {".bmp", ".gif", ".jpeg", ".jpg", ".png"}) {
    const std::string e(ext);
    if (lower.size() >= e.size() && lower.compare(lower.size() - e.size(), e.size(), e) == 0)
      return true;
  }
  return false;
}

// os.walk(class_dir) without following links, sorted by folder, each folder's files by name.
std::vector<std::filesystem::path> class_files(const std::filesystem::path& class_dir,
                                               const std::string& place) {
  std::vector<std::pair<std::string, std::vector<std::string>>> folders;  // (folder, its files)
  std::vector<std::filesystem::path> pending = {class_dir};
  while (!pending.empty()) {
    const std::filesystem::path folder = pending.back();
    pending.pop_back();
    std::error_code ec;
    std::filesystem::directory_iterator it(folder, ec), end;
    if (ec) throw InputError(place, folder.string() + " cannot be read: " + ec.message());
    std::vector<std::string> files;
    for (; it != end; it.increment(ec)) {
      if (ec) throw InputError(place, folder.string() + " cannot be read: " + ec.message());
      const std::filesystem::directory_entry& entry = *it;
      std::error_code kind;
      if (entry.is_directory(kind) && !entry.is_symlink(kind))
        pending.push_back(entry.path());
      else if (!entry.is_directory(kind))
        files.push_back(entry.path().filename().string());
    }
    std::sort(files.begin(), files.end());
    folders.emplace_back(folder.string(), std::move(files));
  }
  std::sort(folders.begin(), folders.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::filesystem::path> out;
  for (const auto& [folder, files] : folders)
    for (const std::string& name : files)
      if (has_image_extension(name)) out.push_back(std::filesystem::path(folder) / name);
  return out;
}

void add_note(Dataset& data, const std::string& note) { data.notes.push_back(note); }

uint8_t gray_of(const uint8_t* rgb) {
  return static_cast<uint8_t>(std::lround(0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2]));
}

}  // namespace

void set_image_decoder(ImageDecoder decoder) { decoder_slot() = std::move(decoder); }
bool has_image_decoder() { return static_cast<bool>(decoder_slot()); }

ImageFolderIndex index_image_folder(const std::filesystem::path& dir, const std::string& place) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    throw InputError(place, dir.string() + (std::filesystem::exists(dir, ec) ? " is not a folder"
                                                                             : " does not exist"));
  std::vector<std::string> classes;
  std::filesystem::directory_iterator it(dir, ec), end;
  if (ec) throw InputError(place, dir.string() + " cannot be read: " + ec.message());
  for (; it != end; it.increment(ec)) {
    if (ec) throw InputError(place, dir.string() + " cannot be read: " + ec.message());
    const std::string name = it->path().filename().string();
    std::error_code kind;
    if (!name.empty() && name[0] != '.' && std::filesystem::is_directory(it->path(), kind))
      classes.push_back(name);
  }
  std::sort(classes.begin(), classes.end());
  if (classes.empty())
    throw InputError(place, dir.string() +
                                " has no class subfolder: put each class's images in a "
                                "subfolder named after the class (" +
                                (dir / "cats").string() + ", " + (dir / "dogs").string() +
                                ", ...), as image_dataset_from_directory reads them");
  ImageFolderIndex index;
  index.class_names = classes;
  for (size_t k = 0; k < classes.size(); ++k)
    for (std::filesystem::path& f : class_files(dir / classes[k], place)) {
      index.files.push_back(std::move(f));
      index.labels.push_back(static_cast<int>(k));
    }
  return index;
}

std::vector<int64_t> numpy_shuffled_order(int64_t n, uint32_t seed) {
  // RandomState(seed) seeds MT19937 with init_genrand(seed), std::mt19937's own seeding; shuffle
  // swaps x[i] with x[random_interval(i)] for i from n - 1 down to 1, and random_interval draws
  // 32-bit words masked to the smallest all-ones mask >= i until one is <= i
  // (numpy/random/src/distributions/distributions.c).
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::mt19937 mt(seed);
  for (int64_t i = n - 1; i >= 1; --i) {
    uint64_t mask = static_cast<uint64_t>(i);
    for (int shift : {1, 2, 4, 8, 16, 32}) mask |= mask >> shift;
    uint64_t j;
    if (static_cast<uint64_t>(i) <= 0xffffffffULL) {
      do j = mt() & mask;
      while (j > static_cast<uint64_t>(i));
    } else {
      do j = ((static_cast<uint64_t>(mt()) << 32) | mt()) & mask;
      while (j > static_cast<uint64_t>(i));
    }
    std::swap(order[static_cast<size_t>(i)], order[static_cast<size_t>(j)]);
  }
  return order;
}

DecodedImage with_channels(const DecodedImage& image, int64_t channels) {
  if (image.channels == channels) return image;
  DecodedImage out;
  out.width = image.width;
  out.height = image.height;
  out.channels = channels;
  const size_t pixels = static_cast<size_t>(image.width * image.height);
  out.pixels.resize(pixels * static_cast<size_t>(channels));
  for (size_t p = 0; p < pixels; ++p) {
    const uint8_t* src = image.pixels.data() + p * static_cast<size_t>(image.channels);
    uint8_t* dst = out.pixels.data() + p * static_cast<size_t>(channels);
    const bool gray_source = image.channels == 1;
    const uint8_t alpha = image.channels == 4 ? src[3] : 255;
    if (channels == 1) {
      dst[0] = gray_source ? src[0] : gray_of(src);
    } else {
      for (int c = 0; c < 3; ++c) dst[c] = gray_source ? src[0] : src[c];
      if (channels == 4) dst[3] = alpha;
    }
  }
  return out;
}

void resize_bilinear(const DecodedImage& image, int64_t out_h, int64_t out_w, float* out) {
  // tensorflow/core/kernels/image/resize_bilinear_op.cc with half_pixel_centers: source
  // coordinate (i + 0.5) * scale - 0.5 in float, its floor and ceiling clamped to the image,
  // then top + (bottom - top) * y_lerp of the two rows' left + (right - left) * x_lerp.
  const int64_t h = image.height, w = image.width, c = image.channels;
  const float y_scale = static_cast<float>(h) / static_cast<float>(out_h);
  const float x_scale = static_cast<float>(w) / static_cast<float>(out_w);
  struct Interp {
    int64_t lower, upper;
    float lerp;
  };
  const auto interp = [](int64_t i, float scale, int64_t size) {
    const float in = (static_cast<float>(i) + 0.5f) * scale - 0.5f;
    const float in_floor = std::floor(in);
    Interp r;
    r.lower = std::max<int64_t>(static_cast<int64_t>(in_floor), 0);
    r.upper = std::min<int64_t>(static_cast<int64_t>(std::ceil(in)), size - 1);
    r.lerp = in - in_floor;
    return r;
  };
  std::vector<Interp> xs(static_cast<size_t>(out_w));
  for (int64_t x = 0; x < out_w; ++x) xs[static_cast<size_t>(x)] = interp(x, x_scale, w);
  const uint8_t* px = image.pixels.data();
  for (int64_t y = 0; y < out_h; ++y) {
    const Interp yi = interp(y, y_scale, h);
    const uint8_t* top = px + yi.lower * w * c;
    const uint8_t* bottom = px + yi.upper * w * c;
    for (int64_t x = 0; x < out_w; ++x) {
      const Interp& xi = xs[static_cast<size_t>(x)];
      for (int64_t k = 0; k < c; ++k) {
        const float tl = top[xi.lower * c + k], tr = top[xi.upper * c + k];
        const float bl = bottom[xi.lower * c + k], br = bottom[xi.upper * c + k];
        const float t = tl + (tr - tl) * xi.lerp;
        const float b = bl + (br - bl) * xi.lerp;
        *out++ = t + (b - t) * yi.lerp;
      }
    }
  }
}

Dataset load_image_folder(const DataSpec& spec) {
  const std::map<std::string, int64_t> channels_of = {{"grayscale", 1}, {"rgb", 3}, {"rgba", 4}};
  if (!channels_of.count(spec.color_mode))
    throw InputError("data.color_mode",
                     "must be \"grayscale\", \"rgb\" or \"rgba\", got \"" + spec.color_mode + "\"");
  if (spec.label_mode != "int" && spec.label_mode != "categorical" && spec.label_mode != "binary")
    throw InputError("data.label_mode", "must be \"int\", \"categorical\" or \"binary\", got \"" +
                                            spec.label_mode + "\"");
  if (spec.image_height < 1 || spec.image_width < 1)
    throw InputError("data.image_size", "must be two positive numbers of pixels (height, width)");
  const double split = spec.image_validation_split;
  if (!(split >= 0.0 && split < 1.0))
    throw InputError("data.validation_split",
                     "must be a fraction in (0, 1) (or 0 for none), got " + format_number(split));
  if (split == 0.0 && spec.image_subset != "both")
    throw InputError("data.subset",
                     "\"" + spec.image_subset + "\" needs a validation_split to take that part of");
  const int64_t channels = channels_of.at(spec.color_mode);
  const std::string place = "data.directory";
  const ImageFolderIndex index = index_image_folder(spec.directory, place);
  const int64_t classes = static_cast<int64_t>(index.class_names.size());
  if (spec.label_mode == "binary" && classes != 2)
    throw InputError("data.label_mode", "\"binary\" needs exactly 2 class subfolders; " +
                                            spec.directory + " has " +
                                            counted(classes, "class subfolder"));
  const int64_t n = static_cast<int64_t>(index.files.size());
  if (n == 0)
    throw InputError(place, spec.directory +
                                " holds no image: each class subfolder needs files ending in "
                                ".bmp, .gif, .jpeg, .jpg or .png");
  std::vector<int64_t> order(static_cast<size_t>(n));
  if (spec.image_shuffle) {
    order = numpy_shuffled_order(n, static_cast<uint32_t>(spec.seed));
  } else {
    for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  }
  // get_training_or_validation_split: int(validation_split * n) files at the end validate.
  const auto validation_count = static_cast<int64_t>(split * static_cast<double>(n));
  const int64_t training_count = n - validation_count;
  if (split > 0.0 && (validation_count == 0 || training_count == 0))
    throw InputError("data.validation_split",
                     format_number(split) + " of " + counted(n, "image") + " leaves no " +
                         (validation_count == 0 ? "validation" : "training") +
                         " image (Keras validates on int(" + format_number(split) + " * " +
                         std::to_string(n) + ") = " + std::to_string(validation_count) +
                         "); use a " + (validation_count == 0 ? "larger" : "smaller") +
                         " fraction or more images");
  int64_t first = 0, count = n;  // the files x and y take, in `order`
  if (spec.image_subset == "training") count = training_count;
  if (spec.image_subset == "validation") first = training_count, count = validation_count;
  if (spec.image_subset == "both") count = training_count;
  const bool with_validation = spec.image_subset == "both" && validation_count > 0;
  const int64_t loaded = count + (with_validation ? validation_count : 0);

  const int64_t values = spec.image_height * spec.image_width * channels;
  const MemoryLimit limit = process_memory_limit();
  const double bytes = static_cast<double>(loaded) * static_cast<double>(values) * 4.0;
  // Reading holds the decoded images and the arrays they are copied into: twice the arrays.
  if (limit.bytes > 0 && 2.0 * bytes > 0.8 * static_cast<double>(limit.bytes))
    throw InputError("data.image_size",
                     counted(loaded, "image") + " of " + std::to_string(spec.image_height) + " x " +
                         std::to_string(spec.image_width) + " x " + std::to_string(channels) +
                         " float32 values take " + format_number(std::round(bytes / 1048576.0)) +
                         " MiB, twice that while they are read, more than the " +
                         format_number(std::round(static_cast<double>(limit.bytes) / 1048576.0)) +
                         " MiB this process may use (" + limit.source +
                         "); use a smaller image_size, \"grayscale\" or fewer images");
  if (!has_image_decoder())
    throw InputError(place,
                     "this program reads no image files (it was built without "
                     "fitbench_imageio)");

  // Decode every file once, on every core (tasks of kFilesPerTask files); remember which fail.
  std::vector<float> pixels(static_cast<size_t>(loaded * values));
  std::vector<std::string> errors(static_cast<size_t>(loaded));
  const ImageDecoder& decode = decoder_slot();
  constexpr int64_t kFilesPerTask = 8;
  tbb::task_arena arena;
  run_tasks(arena, static_cast<size_t>((loaded + kFilesPerTask - 1) / kFilesPerTask),
            [&](size_t task) {
              const int64_t begin = static_cast<int64_t>(task) * kFilesPerTask;
              for (int64_t r = begin; r < std::min(loaded, begin + kFilesPerTask); ++r) {
                const int64_t file = order[static_cast<size_t>(first + r)];
                std::string& error = errors[static_cast<size_t>(r)];
                const DecodedImage image = decode(index.files[static_cast<size_t>(file)], error);
                if (image.pixels.empty() || image.width < 1 || image.height < 1) {
                  if (error.empty()) error = "cannot be decoded";
                  continue;
                }
                resize_bilinear(with_channels(image, channels), spec.image_height, spec.image_width,
                                pixels.data() + r * values);
              }
            });
  std::vector<std::string> unreadable;
  for (int64_t r = 0; r < loaded; ++r)
    if (!errors[static_cast<size_t>(r)].empty())
      unreadable.push_back(
          index.files[static_cast<size_t>(order[static_cast<size_t>(first + r)])].string() + " (" +
          errors[static_cast<size_t>(r)] + ")");
  if (!unreadable.empty() && !spec.skip_unreadable) {
    std::string list;
    for (size_t i = 0; i < unreadable.size() && i < 5; ++i) list += (i ? "; " : "") + unreadable[i];
    if (unreadable.size() > 5) list += "; and " + std::to_string(unreadable.size() - 5) + " more";
    throw InputError(place, counted(static_cast<int64_t>(unreadable.size()), "file") +
                                " cannot be read as images: " + list +
                                ". Fix or remove them, or set data.unreadable to \"skip\"");
  }

  const int64_t label_columns = spec.label_mode == "categorical" ? classes : 1;
  Dataset data;
  data.class_names = index.class_names;
  data.sample_shape = {spec.image_height, spec.image_width, channels};
  for (int64_t j = 0; j < values; ++j) data.feature_names.push_back("pixel" + std::to_string(j));
  if (spec.label_mode == "categorical")
    data.target_names = index.class_names;
  else
    data.target_names = {"label"};
  const auto fill = [&](Matrix& x, Matrix& y, int64_t from, int64_t rows) {
    int64_t kept = 0;
    for (int64_t r = from; r < from + rows; ++r) kept += errors[static_cast<size_t>(r)].empty();
    x.resize(kept, values);
    y = Matrix::Zero(kept, label_columns);
    int64_t row = 0;
    for (int64_t r = from; r < from + rows; ++r) {
      if (!errors[static_cast<size_t>(r)].empty()) continue;
      std::copy_n(pixels.data() + r * values, values, x.row(row).data());
      const int label = index.labels[static_cast<size_t>(order[static_cast<size_t>(first + r)])];
      if (spec.label_mode == "categorical")
        y(row, label) = 1.0f;
      else
        y(row, 0) = static_cast<float>(label);
      ++row;
    }
  };
  fill(data.x, data.y, 0, count);
  if (with_validation) fill(data.validation_x, data.validation_y, count, validation_count);
  if (data.x.rows() == 0)
    throw InputError(
        place, "every image of the " +
                   std::string(spec.image_subset == "validation" ? "validation" : "training") +
                   " part was left out as unreadable");
  if (!unreadable.empty()) {
    std::string note = spec.directory + ": skipped " +
                       counted(static_cast<int64_t>(unreadable.size()), "unreadable file") + ": ";
    for (size_t i = 0; i < unreadable.size(); ++i) note += (i ? "; " : "") + unreadable[i];
    add_note(data, note);
  }
  return data;
}

}  // namespace fitbench
