// What the fuzz targets share: the repository's own files (examples, for a base experiment) and a
// private file on tmpfs for readers that take a path. Each target is one libFuzzer entry point
// (LLVMFuzzerTestOneInput); built with FITBENCH_FUZZ it runs under libFuzzer, otherwise
// run_corpus.cpp drives it over tests/fuzz/<target>/ as a regression test.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace fitbench::fuzz {

// A folder of this process's own under /dev/shm (or the temporary folder).
inline const std::filesystem::path& private_dir() {
  static const std::filesystem::path dir = [] {
    std::filesystem::path base = std::filesystem::exists("/dev/shm")
                                     ? std::filesystem::path("/dev/shm")
                                     : std::filesystem::temp_directory_path();
    std::filesystem::path d = base / ("fitbench-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

// A file named `name` in private_dir(), holding `data`. Its path is the same on every call with
// the same name.
inline std::filesystem::path input_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::filesystem::path file = private_dir() / name;
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return file;
}

inline std::string example(const std::string& name) {
  return std::string(FITBENCH_SOURCE_DIR) + "/resources/examples/" + name;
}

}  // namespace fitbench::fuzz
