// What the fuzz targets share: the repository's own files (examples, for a base experiment) and a
// private file on tmpfs for readers that take a path. Each target is one libFuzzer entry point
// (LLVMFuzzerTestOneInput); built with FITBENCH_FUZZ it runs under libFuzzer, otherwise
// run_corpus.cpp drives it over tests/fuzz/<target>/ as a regression test.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fitbench::fuzz {

// A folder of this process's own under /dev/shm (or the temporary folder), removed when the
// process exits. The process holds a lock on it while it lives; the folders of processes that
// were killed or crashed (their process is gone and nothing holds the lock) are removed when the
// next one is made, so tmpfs does not fill up with them over long fork-mode runs and test passes.
inline const std::filesystem::path& private_dir() {
  namespace fs = std::filesystem;
  struct Dir {
    fs::path path;
    int fd = -1;  // holds the lock
    Dir() {
      const fs::path base =
          fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path();
      const std::string prefix = "fitbench-fuzz-";
      std::vector<fs::path> stale;
      std::error_code ec;
      for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        const std::string digits = name.substr(std::min(name.size(), prefix.size()));
        if (name.rfind(prefix, 0) != 0 || digits.empty() || digits.size() > 9 ||
            digits.find_first_not_of("0123456789") != std::string::npos)
          continue;
        if (::kill(static_cast<pid_t>(std::stol(digits)), 0) == 0 || errno != ESRCH) continue;
        const int other = ::open(it->path().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (other < 0) continue;
        if (::flock(other, LOCK_EX | LOCK_NB) == 0) stale.push_back(it->path());
        ::close(other);
      }
      for (const fs::path& d : stale) fs::remove_all(d, ec);
      path = base / (prefix + std::to_string(::getpid()));
      fs::create_directories(path);
      fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      if (fd >= 0) ::flock(fd, LOCK_EX);
    }
    Dir(const Dir&) = delete;
    Dir& operator=(const Dir&) = delete;
    ~Dir() {
      std::error_code ec;
      fs::remove_all(path, ec);
      if (fd >= 0) ::close(fd);
    }
  };
  static const Dir dir;
  return dir.path;
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
