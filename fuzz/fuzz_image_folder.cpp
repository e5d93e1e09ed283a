// Folders of images as core/data/image_folder.h reads them: the input lays out a folder (file
// names with their subfolders, any bytes) and the settings; the folder is indexed, shuffled,
// split and loaded through a decoder that takes each file's first bytes as width, height and
// channels and the rest as pixels (the fuzz build has no Qt: the file names, the order, the
// split, the channel conversion and the resize are what is fuzzed). Refused with an InputError,
// or loaded into images whose values stay within 0 to 255 and whose labels name classes.
//
// Input: byte 0 the options (bits 0-1 color mode, 2-3 label mode, 4 shuffle, 5 skip unreadable,
// 6-7 subset), byte 1 the validation split (/ 256), bytes 2-3 the image size (1 to 16 each),
// then entries: a name length, the name ('/' separates subfolders), a content length, the
// content.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/image_folder.h"
#include "fuzz/fuzz_util.h"

namespace {

using namespace fitbench;
namespace fs = std::filesystem;

DecodedImage decode(const fs::path& file, std::string& error) {
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  DecodedImage image;
  if (bytes.size() < 3) {
    error = "too short";
    return image;
  }
  image.width = static_cast<uint8_t>(bytes[0]) % 9;
  image.height = static_cast<uint8_t>(bytes[1]) % 9;
  const int64_t channels[] = {1, 3, 4};
  image.channels = channels[static_cast<uint8_t>(bytes[2]) % 3];
  const size_t need = static_cast<size_t>(image.width * image.height * image.channels);
  if (image.width == 0 || image.height == 0 || bytes.size() - 3 < need) {
    error = "truncated";
    return {};
  }
  image.pixels.assign(bytes.begin() + 3, bytes.begin() + 3 + static_cast<std::ptrdiff_t>(need));
  return image;
}

// A name that stays inside the folder: relative, no "..", no empty part.
bool safe(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos) return false;
  for (const fs::path& part : fs::path(name))
    if (part == ".." || part == "." || part.empty()) return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = [] {
    set_image_decoder(decode);
    return true;
  }();
  (void)installed;
  if (size < 4) return 0;
  const fs::path dir = fitbench::fuzz::private_dir() / "folder";
  std::error_code ec;
  fs::remove_all(dir, ec);
  fs::create_directories(dir);
  DataSpec spec;
  spec.generator.clear();
  spec.directory = dir.string();
  const char* modes[] = {"grayscale", "rgb", "rgba", "rgb"};
  const char* labels[] = {"int", "categorical", "binary", "int"};
  const char* subsets[] = {"both", "training", "validation", "both"};
  spec.color_mode = modes[data[0] & 3];
  spec.label_mode = labels[(data[0] >> 2) & 3];
  spec.image_shuffle = (data[0] >> 4) & 1;
  spec.skip_unreadable = (data[0] >> 5) & 1;
  spec.image_validation_split = data[1] / 256.0;
  spec.image_subset = spec.image_validation_split > 0 ? subsets[(data[0] >> 6) & 3] : "both";
  spec.image_height = 1 + data[2] % 16;
  spec.image_width = 1 + data[3] % 16;
  size_t at = 4;
  int files = 0;
  while (at < size && files < 64) {
    const size_t name_size = data[at++];
    if (at + name_size > size) break;
    const std::string name(reinterpret_cast<const char*>(data + at), name_size);
    at += name_size;
    if (at >= size) break;
    const size_t content_size = data[at++];
    if (at + content_size > size) break;
    if (safe(name)) {
      const fs::path file = dir / name;
      fs::create_directories(file.parent_path(), ec);
      std::ofstream(file, std::ios::binary)
          .write(reinterpret_cast<const char*>(data + at),
                 static_cast<std::streamsize>(content_size));
      ++files;
    }
    at += content_size;
  }
  try {
    const Dataset d = load_dataset(spec, {});
    const int64_t values = spec.image_height * spec.image_width *
                           (spec.color_mode == "grayscale" ? 1
                            : spec.color_mode == "rgb"     ? 3
                                                           : 4);
    if (d.x.cols() != values || d.x.rows() == 0 || d.class_names.empty()) std::abort();
    for (const Matrix* m : {&d.x, &d.validation_x})
      if (m->size() > 0 && (!(m->minCoeff() >= 0.0f) || !(m->maxCoeff() <= 255.0f))) std::abort();
    const auto classes = static_cast<float>(d.class_names.size());
    for (const Matrix* y : {&d.y, &d.validation_y}) {
      if (y->size() == 0) continue;
      if (spec.label_mode == "categorical") {
        if (y->cols() != static_cast<Index>(classes)) std::abort();
      } else if (y->minCoeff() < 0.0f || y->maxCoeff() >= classes) {
        std::abort();
      }
    }
  } catch (const InputError&) {
  }
  return 0;
}
