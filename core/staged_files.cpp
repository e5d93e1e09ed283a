#include "core/staged_files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "core/base/error.h"
#include "core/file_checks.h"

namespace fitbench {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void cannot_write(const fs::path& display, int error) {
  throw InputError(display.string(), std::string("cannot be written: ") + std::strerror(error));
}

// write(2) until every byte is out; errno on failure.
bool write_all(int fd, const std::string& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      if (n == 0) errno = EIO;
      return false;
    }
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string temporary_prefix(const fs::path& target) {
  return "." + target.filename().string() + ".tmp-";
}

fs::path temporary_name(const fs::path& target) {
  return random_sibling(target.parent_path(), temporary_prefix(target));
}

// Removes the temporaries an earlier writer of `target` left when it was killed between naming
// its file and renaming it over the target: `.<name>.tmp-` and random_sibling's 16 hex digits,
// nothing else. A writer of the same file at this very moment would lose its rename and say so.
void remove_stale_temporaries(const fs::path& folder, const fs::path& target) {
  const std::string prefix = temporary_prefix(target);
  std::error_code error;
  for (fs::directory_iterator it(folder, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.size() != prefix.size() + 16 || name.compare(0, prefix.size(), prefix) != 0) continue;
    if (name.find_first_not_of("0123456789abcdef", prefix.size()) != std::string::npos) continue;
    std::error_code ignored;
    if (it->is_regular_file(ignored)) fs::remove(it->path(), ignored);
  }
}

}  // namespace

StagedFiles::~StagedFiles() {
  for (Staged& s : files_) drop(s);
}

void StagedFiles::drop(Staged& s) {
  if (s.fd >= 0) ::close(s.fd);
  s.fd = -1;
  if (!s.named.empty()) {
    std::error_code ignored;
    fs::remove(s.named, ignored);
    s.named.clear();
  }
}

void StagedFiles::stage(const fs::path& file, const std::string& bytes) {
  Staged s;
  s.display = file;
  s.target = write_target(file);
  const fs::path folder = s.target.parent_path().empty() ? fs::path(".") : s.target.parent_path();
  remove_stale_temporaries(folder, s.target);
  // The mode is 0666 less the umask, as a file made by open(2) or std::ofstream gets.
  s.fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
  if (s.fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without unnamed temporaries: a named one, which a kill can leave behind.
    s.named = temporary_name(s.target);
    s.fd = ::open(s.named.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (s.fd < 0) s.named.clear();
  }
  if (s.fd < 0) cannot_write(file, errno);
  if (!write_all(s.fd, bytes)) {
    const int error = errno;
    drop(s);
    cannot_write(file, error);
  }
  files_.push_back(std::move(s));
}

// Gives a staged file the target's name: linked under a temporary name, then renamed over the
// target (linkat cannot replace a file).
void StagedFiles::name(Staged& s) {
  if (s.named.empty()) {
    const fs::path temp = temporary_name(s.target);
    const std::string self = "/proc/self/fd/" + std::to_string(s.fd);
    if (::linkat(AT_FDCWD, self.c_str(), AT_FDCWD, temp.c_str(), AT_SYMLINK_FOLLOW) != 0 &&
        ::linkat(s.fd, "", AT_FDCWD, temp.c_str(), AT_EMPTY_PATH) != 0)
      cannot_write(s.display, errno);
    s.named = temp;
  }
  if (::close(s.fd) != 0) {
    s.fd = -1;
    const int error = errno;
    drop(s);
    cannot_write(s.display, error);
  }
  s.fd = -1;
  if (::rename(s.named.c_str(), s.target.c_str()) != 0) {
    const int error = errno;
    drop(s);
    cannot_write(s.display, error);
  }
  s.named.clear();
}

void StagedFiles::commit() {
  if (files_.size() > 1)
    for (const Staged& s : files_)
      if (::unlink(s.target.c_str()) != 0 && errno != ENOENT) cannot_write(s.display, errno);
  for (Staged& s : files_) name(s);
  files_.clear();
}

}  // namespace fitbench
