// Checks on the files fitbench reads and writes, so that a wrong path fails at once with a
// sentence naming it: reading a FIFO or a device would block or never end, writing over one
// would replace it, and a folder that takes no file should say so before a long training run
// rather than after it. Free functions; no shared state; the file system may change between a
// check and the use, which then fails with its own error.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace fitbench {

// Throws InputError(display, ...) unless `file` is a regular file (after symbolic links): "is a
// directory" or "is not a regular file (a FIFO, socket or device)". A missing file passes: the
// caller's open reports it.
void check_regular_file(const std::filesystem::path& file, const std::string& display);

// Where a write to `file` goes: `file` itself or, when it is a symbolic link, the file the link
// points to (so that writing keeps the link). Throws InputError(file, "is not a regular file ...")
// when that exists and is a directory, FIFO, socket or device.
std::filesystem::path write_target(const std::filesystem::path& file);

// Checks before long work that `file` can be written as write_file_atomically writes it: the
// target is a regular file or does not exist yet, and its folder takes a new file (one is made
// and removed again). Throws InputError(file, "cannot be written: ...") or as write_target does.
void check_writable_file(const std::filesystem::path& file);

// A path in `folder` ("." when empty) named `prefix` then 16 random hex digits, for a file made
// beside another (a write's temporary, a probe); not created here.
std::filesystem::path random_sibling(const std::filesystem::path& folder,
                                     const std::string& prefix);

// A file a run reads or writes, for check_outputs_apart: its path as given, where it was given
// ("--history", "fit.callbacks[1].config.filename") and what it is ("the experiment file").
struct RunFile {
  std::string path;
  std::string place;
  std::string what;
  // ModelCheckpoint's filepath: its fields ({epoch:02d}, {val_loss:.2f}) make a file per epoch.
  bool format_fields = false;
};

// Throws InputError(output.place, "<path> is <what>; write to another file") for the first
// output that names one of `inputs` or an earlier output, however the path is spelled (relative
// or absolute, "..", a symbolic link to it); an output with fields ({epoch}, {val_loss:.2f})
// names every file the fields can make. Nothing is read or written.
void check_outputs_apart(std::vector<RunFile> inputs, const std::vector<RunFile>& outputs);

}  // namespace fitbench
