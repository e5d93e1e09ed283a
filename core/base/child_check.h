// A third-party reader tried first in a child process. Debian's HDF5 (1.10) has crashes on damaged
// files that fitbench cannot check for without parsing HDF5 itself (a NULL read in its metadata
// accumulator, HDF5 issues 584 and 1311, reached through a damaged local heap): what the library
// does with a file is run first in a forked copy of this process, and only a file the copy got
// through is read here. A crash or a hang there becomes a sentence; fitbench itself goes on.
#pragma once

#include <functional>
#include <string>

namespace fitbench {

// Runs `work` in a forked child of this process and waits for it, at most `limit_seconds`. Returns
// when the child got through `work` (returning or throwing: the caller then runs `work` itself, the
// same code on the same bytes from the same state, and gets the same result or error). Throws
// InputError(place, ...) naming `library` when the child died (a signal, or a sanitizer's exit) or
// was still running at the limit (it is killed). When no child can be started (no memory or
// processes left for one), returns and the caller reads unguarded, as it would without the check.
// The caller holds whatever lock keeps other threads out of the library, so the child's copy of
// it is consistent. The child writes nothing: its standard error goes to /dev/null.
void check_in_child(const std::string& place, const std::string& library, double limit_seconds,
                    const std::function<void()>& work);

// Turns the checks off (check_in_child returns at once) or back on. For the keras_file fuzz target
// under libFuzzer, whose coverage and sanitizer reports need the read in its own process
// (docs/fuzzing.md); fitbench itself never turns them off.
void set_child_checks(bool on);

}  // namespace fitbench
