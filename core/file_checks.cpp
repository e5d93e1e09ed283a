#include "core/file_checks.h"

#include <fcntl.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <iomanip>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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

// A path's text split around ModelCheckpoint's {epoch...} fields (its file_for_epoch reads them
// the same way: "{epoch", anything, "}"): {"ckpt-", ".json"} for "ckpt-{epoch:02d}.json".
std::vector<std::string> epoch_literals(const std::string& path) {
  std::vector<std::string> parts(1);
  for (size_t i = 0; i < path.size(); ++i) {
    const size_t close = path.compare(i, 6, "{epoch") == 0 ? path.find('}', i) : std::string::npos;
    if (close == std::string::npos) {
      parts.back() += path[i];
      continue;
    }
    parts.emplace_back();
    i = close;
  }
  return parts;
}

// Whether `text` is `literals` with a run of digits (or of a width's padding spaces) between each
// two: every position the match can reach is kept, so literals that hold digits cannot mislead it.
bool fills(const std::vector<std::string>& literals, const std::string& text) {
  if (text.compare(0, literals[0].size(), literals[0]) != 0) return false;
  std::vector<char> reach(text.size() + 1, 0);
  reach[literals[0].size()] = 1;
  for (size_t k = 1; k < literals.size(); ++k) {
    std::vector<char> next(text.size() + 1, 0);
    for (size_t p = 0; p < text.size(); ++p) {
      if (!reach[p]) continue;
      for (size_t q = p;
           q < text.size() && (std::isdigit(static_cast<unsigned char>(text[q])) || text[q] == ' ');
           ++q) {
        const std::string& lit = literals[k];
        if (text.compare(q + 1, lit.size(), lit) == 0) next[q + 1 + lit.size()] = 1;
      }
    }
    reach = std::move(next);
  }
  return reach[text.size()] != 0;
}

// Whether two paths of check_outputs_apart can be the same file.
bool same_file(const RunFile& file_a, const RunFile& file_b) {
  const std::string &a = file_a.path, &b = file_b.path;
  const auto normal = [](const std::string& f) {
    std::error_code ec;
    const fs::path abs = fs::absolute(f, ec);
    return (ec ? fs::path(f) : abs).lexically_normal().string();
  };
  const std::string na = normal(a), nb = normal(b);
  if (na == nb) return true;
  const std::vector<std::string> la =
      file_a.epoch_fields ? epoch_literals(na) : std::vector<std::string>{na};
  const std::vector<std::string> lb =
      file_b.epoch_fields ? epoch_literals(nb) : std::vector<std::string>{nb};
  if (la.size() == 1 && lb.size() == 1) {
    std::error_code ec;  // equivalent() for existing files (a link to the other one)
    return fs::equivalent(a, b, ec);
  }
  if (la.size() == 1) return fills(lb, na);
  if (lb.size() == 1) return fills(la, nb);
  // Two patterns: the same file when the first epoch's file of one is a file of the other.
  std::string first_a = la[0], first_b = lb[0];
  for (size_t k = 1; k < la.size(); ++k) first_a += "1" + la[k];
  for (size_t k = 1; k < lb.size(); ++k) first_b += "1" + lb[k];
  return fills(lb, first_a) || fills(la, first_b);
}

}  // namespace

void check_outputs_apart(std::vector<RunFile> inputs, const std::vector<RunFile>& outputs) {
  for (const RunFile& out : outputs) {
    for (const RunFile& in : inputs) {
      if (!same_file(out, in)) continue;
      const auto pattern = [](const RunFile& f) {
        return f.epoch_fields && epoch_literals(f.path).size() > 1;
      };
      // "ck-{epoch}.json can make ck-3.json, the experiment file" says which epoch's file.
      const std::string is = !pattern(out) ? " is "
                             : pattern(in) ? " can make the files of " + in.path + ", "
                                           : " can make " + in.path + ", ";
      throw InputError(out.place, out.path + is + in.what + "; write to another file");
    }
    inputs.push_back(out);
  }
}

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
