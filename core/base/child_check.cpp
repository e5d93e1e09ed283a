#include "core/base/child_check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/base/error.h"
#include "core/base/memory_limit.h"

extern char** environ;

namespace fitbench {
namespace {

std::atomic<bool> enabled{true};

// The program's exit status, waited for without a limit (it has ended or been killed); -1 when it
// was reaped elsewhere (SIGCHLD ignored).
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

// The request as a file in memory, read from its start: -1 when there is no memory for it.
int request_file(const std::vector<std::string_view>& input) {
  const int fd = ::memfd_create("fitbench-check-request", MFD_CLOEXEC);
  if (fd < 0) return -1;
  off_t at = 0;
  for (std::string_view piece : input)
    while (!piece.empty()) {
      const ssize_t wrote = ::pwrite(fd, piece.data(), piece.size(), at);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) {
        ::close(fd);
        return -1;
      }
      piece.remove_prefix(static_cast<size_t>(wrote));
      at += wrote;
    }
  return fd;
}

// Starts `program` with the request on its standard input and the write end of `done` as its
// standard output, which it holds until it ends. Returns its pid, or -1.
pid_t spawn(const std::string& program, int request, int done) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  if (::posix_spawn_file_actions_init(&actions) != 0) return -1;
  if (::posix_spawnattr_init(&attributes) != 0) {
    ::posix_spawn_file_actions_destroy(&actions);
    return -1;
  }
  // No signal blocked or ignored in the program, whatever this thread has.
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  pid_t pid = -1;
  char* argv[] = {const_cast<char*>(program.c_str()), nullptr};
  if (::posix_spawn_file_actions_adddup2(&actions, request, STDIN_FILENO) == 0 &&
      ::posix_spawn_file_actions_adddup2(&actions, done, STDOUT_FILENO) == 0 &&
      ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0) == 0 &&
      ::posix_spawnattr_setsigmask(&attributes, &none) == 0 &&
      ::posix_spawnattr_setsigdefault(&attributes, &all) == 0 &&
      ::posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF) ==
          0 &&
      ::posix_spawn(&pid, program.c_str(), &actions, &attributes, argv, environ) != 0)
    pid = -1;
  ::posix_spawnattr_destroy(&attributes);
  ::posix_spawn_file_actions_destroy(&actions);
  return pid;
}

// The resident memory of a running child, from its /proc/<pid>/statm opened as `statm`; -1 when
// it cannot be read.
int64_t resident_bytes(int statm) {
  char text[128];
  const ssize_t got = ::pread(statm, text, sizeof text - 1, 0);
  if (got <= 0) return -1;
  text[got] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return -1;
  return static_cast<int64_t>(resident) * ::sysconf(_SC_PAGESIZE);
}

}  // namespace

void set_child_checks(bool on) { enabled = on; }

std::string check_program(const std::string& name, const std::string& built) {
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path beside = self.parent_path() / name;
    if (::access(beside.c_str(), X_OK) == 0) return beside.string();
  }
  if (!built.empty() && ::access(built.c_str(), X_OK) == 0) return built;
  return {};
}

void check_in_child(const std::string& place, const std::string& library, double limit_seconds,
                    int64_t limit_bytes, const std::string& program,
                    const std::vector<std::string_view>& input) {
  if (!enabled || program.empty()) return;
  const int request = request_file(input);
  if (request < 0) return;
  // The program holds the pipe's write end until it ends: the caller wakes when the pipe closes.
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) {
    ::close(request);
    return;
  }
  const pid_t pid = spawn(program, request, ends[1]);
  ::close(request);
  ::close(ends[1]);
  if (pid < 0) {
    ::close(ends[0]);
    return;
  }
  // Its memory is read while it runs (the file stays valid until it is reaped): a damaged file
  // can make a library allocate without end, and an allocation that fails inside the program
  // would change its answer, not stop it.
  const int statm = limit_bytes > 0 ? ::open(("/proc/" + std::to_string(pid) + "/statm").c_str(),
                                             O_RDONLY | O_CLOEXEC)
                                    : -1;
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_seconds);
  enum class End { kEnded, kTime, kMemory } end = End::kTime;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    if (statm >= 0 && resident_bytes(statm) > limit_bytes) {
      end = End::kMemory;
      break;
    }
    pollfd fd{ends[0], POLLIN, 0};
    const int wait_ms = statm >= 0 ? 20 : 1000;
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), wait_ms)));
    // Closed: the program has ended (it never writes). A poll that fails waits for the end.
    if (ready > 0 || (ready < 0 && errno != EINTR)) {
      end = End::kEnded;
      break;
    }
  }
  ::close(ends[0]);
  if (statm >= 0) ::close(statm);
  if (end != End::kEnded) {
    ::kill(pid, SIGKILL);
    reap(pid);
    if (end == End::kMemory)
      throw InputError(place, "was not read: the " + library + " library took more than " +
                                  bytes_text(limit_bytes) +
                                  " of memory for it (a damaged file can make it allocate "
                                  "without end), so it was stopped");
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", limit_seconds);
    throw InputError(place, "was not read: the " + library +
                                " library had not finished with it after " + limit +
                                " s (a damaged file can make it loop), so it was stopped");
  }
  const int status = reap(pid);
  if (status == -1 || (WIFEXITED(status) &&
                       (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == kCheckRequestRefused)))
    return;
  const std::string how =
      WIFSIGNALED(status) ? std::string("crashes on it (") + ::strsignal(WTERMSIG(status)) + ")"
                          : "fails on it (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  throw InputError(place, "is a damaged " + library + " file: the " + library + " library " + how +
                              ", so nothing was read (fitbench tries such files in a separate "
                              "process first)");
}

}  // namespace fitbench
