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

#include "core/base/error.h"
#include "core/python/python_format.h"

namespace fitbench {
namespace fs = std::filesystem;

namespace {

// Throws unless `status` is that of a regular file or of nothing; `ec` is the error status()
// gave, which says why there is no answer (a name too long, a folder that cannot be searched).
void require_regular(const fs::file_status& status, const std::error_code& ec,
                     const std::string& place) {
  if (status.type() == fs::file_type::not_found || status.type() == fs::file_type::regular) return;
  if (status.type() == fs::file_type::directory) throw InputError(place, "is a directory");
  if (ec == std::errc::filename_too_long)
    throw InputError(place,
                     "is a name too long for the file system (each name in a path may "
                     "hold 255 bytes, the whole path 4095)");
  if (status.type() == fs::file_type::none && ec)
    throw InputError(place, "cannot be looked at: " + ec.message());
  throw InputError(place, "is not a regular file (a FIFO, socket or device)");
}

// A ModelCheckpoint path as the files it can make: its literal text split around its fields
// (read as ModelCheckpoint reads them, Python's str.format), and for each field the characters
// it can write: a logged value any but '/', the epoch digits (with its spec's sign, fill and a
// float type's characters). "ckpt-{epoch:02d}.json" is {"ckpt-", ".json"}; a path without fields
// (or one that make_callbacks refuses) is one literal.
struct Pattern {
  std::vector<std::string> literals;
  std::vector<std::string> field_chars;  // between literals[k] and [k + 1]; "" for any but '/'
};

std::string epoch_chars(const std::string& spec) {
  std::string chars = "0123456789 +";
  if (spec.size() >= 2 && std::string("<>=^").find(spec[1]) != std::string::npos) chars += spec[0];
  if (!spec.empty() && std::string("eEfFgG%").find(spec.back()) != std::string::npos)
    chars += ".eE-%";
  return chars;
}

Pattern pattern_of(const std::string& path, bool fields) {
  if (!fields) return {{path}, {}};
  try {
    FormatTemplate t = parse_format_template(path);
    Pattern p{std::move(t.literals), {}};
    for (const auto& f : t.fields)
      p.field_chars.push_back(f.name == "epoch" ? epoch_chars(f.spec) : "");
    return p;
  } catch (const FormatError&) {
    return {{path}, {}};
  }
}

bool field_char(const std::string& chars, char c) {
  return chars.empty() ? c != '/' : chars.find(c) != std::string::npos;
}

// Whether `text` is the pattern's literals with a field's text (at least one character) between
// each two: every position the match can reach is kept, so literals that hold digits cannot
// mislead it.
bool fills(const Pattern& pattern, const std::string& text) {
  const std::vector<std::string>& literals = pattern.literals;
  if (text.compare(0, literals[0].size(), literals[0]) != 0) return false;
  std::vector<char> reach(text.size() + 1, 0);
  reach[literals[0].size()] = 1;
  for (size_t k = 1; k < literals.size(); ++k) {
    std::vector<char> next(text.size() + 1, 0);
    for (size_t p = 0; p < text.size(); ++p) {
      if (!reach[p]) continue;
      for (size_t q = p; q < text.size() && field_char(pattern.field_chars[k - 1], text[q]); ++q) {
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
  const Pattern pa = pattern_of(na, file_a.format_fields);
  const Pattern pb = pattern_of(nb, file_b.format_fields);
  if (pa.literals.size() == 1 && pb.literals.size() == 1) {
    std::error_code ec;  // equivalent() for existing files (a link to the other one)
    return fs::equivalent(a, b, ec);
  }
  if (pa.literals.size() == 1) return fills(pb, na);
  if (pb.literals.size() == 1) return fills(pa, nb);
  // Two patterns: the same file when the first epoch's file of one (every field "1") is a file
  // of the other.
  const auto first = [](const Pattern& p) {
    std::string text = p.literals[0];
    for (size_t k = 1; k < p.literals.size(); ++k) text += "1" + p.literals[k];
    return text;
  };
  return fills(pb, first(pa)) || fills(pa, first(pb));
}

}  // namespace

void check_outputs_apart(std::vector<RunFile> inputs, const std::vector<RunFile>& outputs) {
  for (const RunFile& out : outputs) {
    for (const RunFile& in : inputs) {
      if (!same_file(out, in)) continue;
      const auto pattern = [](const RunFile& f) {
        return pattern_of(f.path, f.format_fields).literals.size() > 1;
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
  const fs::file_status status = fs::status(file, ec);
  require_regular(status, ec, display);
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
  ec.clear();
  const fs::file_status status = fs::status(target, ec);
  require_regular(status, ec, file.string());
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
  const fs::path folder = target.parent_path().empty() ? fs::path(".") : target.parent_path();
  // An unnamed file in the folder: the folder never shows it, and a kill cannot leave it behind.
  int fd = ::open(folder.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A file system without unnamed temporaries: a named probe, removed at once.
    const fs::path probe = random_sibling(folder, ".fitbench-check-");
    fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0) {
      std::error_code ignored;
      fs::remove(probe, ignored);
    }
  }
  if (fd < 0)
    throw InputError(file.string(), std::string("cannot be written: ") + std::strerror(errno));
  ::close(fd);
}

}  // namespace fitbench
