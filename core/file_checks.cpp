#include "core/file_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>

#include "core/error.h"

namespace fitbench {
namespace fs = std::filesystem;

namespace {

// Throws unless `status` is that of a regular file or of nothing.
void require_regular(const fs::file_status& status, const std::string& place) {
  if (status.type() == fs::file_type::not_found || status.type() == fs::file_type::regular) return;
  if (status.type() == fs::file_type::directory) throw InputError(place, "is a directory");
  throw InputError(place, "is not a regular file (a FIFO, socket or device)");
}

}  // namespace

void check_regular_file(const fs::path& file, const std::string& display) {
  std::error_code ec;
  require_regular(fs::status(file, ec), display);
}

fs::path write_target(const fs::path& file) {
  std::error_code ec;
  fs::path target = file;
  // Follow a chain of links (a bounded number of them: a loop is left to the write to report).
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    const fs::path to = fs::read_symlink(target, ec);
    if (ec) break;
    target = to.is_absolute() ? to : target.parent_path() / to;
  }
  require_regular(fs::status(target, ec), file.string());
  return target;
}

fs::path random_sibling(const fs::path& folder, const std::string& prefix) {
  std::random_device device;
  std::ostringstream name;
  name << prefix << std::hex << std::setfill('0') << std::setw(8) << device() << std::setw(8)
       << device();
  return (folder.empty() ? fs::path(".") : folder) / name.str();
}

void check_writable_file(const fs::path& file) {
  const fs::path target = write_target(file);
  const fs::path probe = random_sibling(target.parent_path(), ".fitbench-check-");
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0)
    throw InputError(file.string(), std::string("cannot be written: ") + std::strerror(errno));
  ::close(fd);
  std::error_code ignored;
  fs::remove(probe, ignored);
}

}  // namespace fitbench
