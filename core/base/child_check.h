// A third-party reader tried first in a separate process. Debian's HDF5 (1.10) has crashes on
// damaged files that fitbench cannot check for without parsing HDF5 itself (a NULL read in its
// metadata accumulator, HDF5 issues 584 and 1311, reached through a damaged local heap): what the
// library does with a file is run first by a small fitbench program (fitbench-hdf5-check), and only
// a file that program got through is read here. A crash, a hang or memory taken without end
// there becomes a sentence; fitbench itself goes on.
//
// The program is started with posix_spawn and exec, not a bare fork: a fork of a process whose
// other threads are busy (the window, a device pool) copies whatever locks they hold in the
// allocator or a library, and the copy can wait on them forever.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fitbench {

// The status a check program exits with when it cannot use the request (a program from another
// build of fitbench): the caller then reads unguarded, as without the check.
inline constexpr int kCheckRequestRefused = 64;

// Runs `program` with the concatenation of `input` on its standard input (its standard output and
// error go nowhere, and it must write no core file) and waits for it, at most `limit_seconds`,
// while its resident memory stays at most `limit_bytes` (0: no memory limit). The memory is
// watched from here every 20 ms rather than limited inside the program: no allocation fails in
// the program, so a refusal it answers is the one the caller's own read would give.
// Returns when it exited with status 0: it got through the work, returning or refusing the input,
// and the caller then does the same work on the same request itself, getting the same result or
// error. Also returns, and the caller reads unguarded as it would without the check, when the
// program could not be run (none given, no memory or processes left) or refused the request
// (kCheckRequestRefused). Throws InputError(place, ...) naming `library` when the program died (a
// signal, or any other exit status: a sanitizer's) or was still running at a limit, of time or of
// memory (it is killed).
void check_in_child(const std::string& place, const std::string& library, double limit_seconds,
                    int64_t limit_bytes, const std::string& program,
                    const std::vector<std::string_view>& input);

// The check program called `name`: the one beside this process's executable (an installed
// fitbench), else `built` (the build tree's, where the programs are in folders of their own),
// else, when neither is there, "" (no check).
std::string check_program(const std::string& name, const std::string& built);

// Turns the checks off (check_in_child returns at once) or back on. For the keras_file fuzz target
// under libFuzzer, whose coverage and sanitizer reports need the read in its own process
// (docs/fuzzing.md); fitbench itself never turns them off.
void set_child_checks(bool on);

}  // namespace fitbench
