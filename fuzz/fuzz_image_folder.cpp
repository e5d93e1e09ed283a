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
// content. Entries are taken in order: a later entry of the same name replaces the content; a
// name under an earlier file, or naming an earlier folder, is left out; names that could leave
// the folder are skipped; reading stops after 64 names.
//
// Speed: the folder on tmpfs holds the names only (empty files) and follows the last input's
// layout, creating and removing only what differs; the decoder finds each file's bytes in memory
// by its path. The reader still walks a real folder; an input that changes only contents costs
// no file operation beyond that walk.
#include <fcntl.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/base/error.h"
#include "core/data/dataset.h"
#include "core/data/image_folder.h"
#include "fuzz/fuzz_util.h"

namespace {

using namespace fitbench;
namespace fs = std::filesystem;

// One input's folder: each file's name (relative, '/' between parts) with its bytes, and every
// folder those names imply.
struct Layout {
  std::map<std::string, std::string> files;
  std::set<std::string> folders;
};

const fs::path& folder_dir() {
  static const fs::path dir = fitbench::fuzz::private_dir() / "folder";
  return dir;
}

void empty_folder() {
  std::error_code ec;
  fs::remove_all(folder_dir(), ec);
  fs::create_directories(folder_dir());
}

Layout& current() {  // what this input laid out; the decoder reads its bytes from here
  static Layout layout;
  return layout;
}

DecodedImage decode(const fs::path& file, std::string& error) {
  const std::string& root = folder_dir().string();
  const std::string path = file.string();
  const auto found = path.size() > root.size() + 1 && path.compare(0, root.size(), root) == 0
                         ? current().files.find(path.substr(root.size() + 1))
                         : current().files.end();
  if (found == current().files.end()) {  // the folder holds only the input's names
    std::fprintf(stderr, "fuzz_image_folder: %s was not laid out by this input\n", path.c_str());
    std::abort();
  }
  const std::string& bytes = found->second;
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

// The name with one '/' between its parts if it stays inside the folder (relative, no "..", no
// "." and no NUL), else "".
std::string inside(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string::npos) return {};
  std::string parts;
  for (const fs::path& part : fs::path(name)) {
    if (part == ".." || part == "." || part.empty()) return {};
    parts += (parts.empty() ? "" : "/") + part.string();
  }
  return parts;
}

// Adds a file unless an earlier file is one of its folders or an earlier name is a folder of its
// own; a name already a file gets the new bytes.
void add(Layout& layout, const std::string& name, std::string bytes) {
  if (layout.folders.count(name)) return;
  std::vector<std::string> parents;
  for (size_t slash = name.find('/'); slash != std::string::npos; slash = name.find('/', slash + 1))
    parents.push_back(name.substr(0, slash));
  for (const std::string& parent : parents)
    if (layout.files.count(parent)) return;
  layout.folders.insert(parents.begin(), parents.end());
  layout.files[name] = std::move(bytes);
}

// Makes the folder on disk hold `next`'s names, given that it holds `last`'s: removes what went
// away (files, then folders, deepest first), creates what is new. False if the disk disagreed.
bool sync(const Layout& last, const Layout& next) {
  const fs::path& dir = folder_dir();
  std::error_code ec;
  bool ok = true;
  for (const auto& [name, bytes] : last.files)
    if (!next.files.count(name)) ok = fs::remove(dir / name, ec) && ok;
  for (auto it = last.folders.rbegin(); it != last.folders.rend(); ++it)
    if (!next.folders.count(*it)) ok = fs::remove(dir / *it, ec) && ok;  // empty by now
  for (const std::string& name : next.folders)  // a folder sorts before the names under it
    if (!last.folders.count(name)) ok = fs::create_directory(dir / name, ec) && ok;
  for (const auto& [name, bytes] : next.files)
    if (!last.files.count(name)) {
      const int fd = ::open((dir / name).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      ok = fd >= 0 && ok;
      if (fd >= 0) ::close(fd);
    }
  return ok;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool installed = [] {
    set_image_decoder(decode);
    empty_folder();
    return true;
  }();
  (void)installed;
  if (size < 4) return 0;
  Layout next;
  size_t at = 4;
  int files = 0;
  while (at < size && files < 64) {
    const size_t name_size = data[at++];
    if (at + name_size > size) break;
    const std::string name =
        inside(std::string(reinterpret_cast<const char*>(data + at), name_size));
    at += name_size;
    if (at >= size) break;
    const size_t content_size = data[at++];
    if (at + content_size > size) break;
    if (!name.empty()) {
      add(next, name, std::string(reinterpret_cast<const char*>(data + at), content_size));
      ++files;
    }
    at += content_size;
  }
  if (!sync(current(), next)) {  // start again from an empty folder
    empty_folder();
    if (!sync(Layout(), next)) {
      std::fprintf(stderr, "fuzz_image_folder: cannot lay out the input's files in %s\n",
                   folder_dir().c_str());
      std::abort();
    }
  }
  current() = std::move(next);

  DataSpec spec;
  spec.generator.clear();
  spec.directory = folder_dir().string();
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
