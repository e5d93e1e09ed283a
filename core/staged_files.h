// Files written whole before any of them takes its name: each is written into an unnamed
// temporary in its folder (Linux O_TMPFILE, so a kill -9 while it is written leaves nothing
// behind), then commit() puts them all in place. A kill in the microseconds between naming a
// file and renaming it over its target can leave `.<name>.tmp-<16 hex digits>`: the next stage()
// of the same file removes it. One instance per set of outputs; not shared between threads.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fitbench {

class StagedFiles {
 public:
  StagedFiles() = default;
  ~StagedFiles();  // a file staged and not committed is dropped; the old one stays
  StagedFiles(const StagedFiles&) = delete;
  StagedFiles& operator=(const StagedFiles&) = delete;

  // Writes `bytes` for `file` (through a symbolic link to the file it names; a folder, FIFO,
  // socket or device is refused, as write_target does). Nothing at `file` changes yet. Throws
  // InputError("<file>", "cannot be written: ...") when the bytes cannot all be written.
  void stage(const std::filesystem::path& file, const std::string& bytes);

  // Puts every staged file in place. One file replaces the old one in a single rename, so a
  // reader sees the old or the new content. Several files belong together (a run's history and
  // its model): the old files are removed first, then the new ones named, so no moment pairs a
  // new file with an old one. Throws InputError("<file>", "cannot be written: ...").
  void commit();

  size_t size() const { return files_.size(); }

 private:
  struct Staged {
    std::filesystem::path display;  // as given, for messages
    std::filesystem::path target;   // after symbolic links
    int fd = -1;                    // the unnamed temporary
    std::filesystem::path named;    // or a named one where the file system has no O_TMPFILE
  };
  void name(Staged& s);
  void drop(Staged& s);
  std::vector<Staged> files_;
};

}  // namespace fitbench
