#include "core/base/child_check.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/base/error.h"

namespace fitbench {
namespace {

std::atomic<bool> enabled{true};

// The child's exit status, waited for without a limit (it has ended or been killed).
int reap(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return status;
}

}  // namespace

void set_child_checks(bool on) { enabled = on; }

void check_in_child(const std::string& place, const std::string& library, double limit_seconds,
                    const std::function<void()>& work) {
  if (!enabled) return;
  // The child holds the pipe's write end until it ends: the parent wakes when the pipe closes.
  int ends[2];
  if (::pipe2(ends, O_CLOEXEC) != 0) return;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(ends[0]);
    ::close(ends[1]);
    return;
  }
  if (pid == 0) {
    ::close(ends[0]);
    // No core file (a desktop would report the crash of fitbench), and nothing printed: the
    // child's only answer is whether it got through.
    const struct rlimit no_core { 0, 0 };
    ::setrlimit(RLIMIT_CORE, &no_core);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    try {
      work();
    } catch (...) {
    }
    ::_exit(0);
  }
  ::close(ends[1]);
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(limit_seconds);
  bool ended = false;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) break;
    pollfd fd{ends[0], POLLIN, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    // Closed: the child has ended (it never writes). A poll that fails waits for the end instead.
    if (ready > 0 || (ready < 0 && errno != EINTR)) {
      ended = true;
      break;
    }
  }
  ::close(ends[0]);
  if (!ended) {
    ::kill(pid, SIGKILL);
    reap(pid);
    char limit[32];
    std::snprintf(limit, sizeof limit, "%.3g", limit_seconds);
    throw InputError(place, "was not read: the " + library +
                                " library had not finished with it after " + limit +
                                " s (a damaged file can make it loop), so it was stopped");
  }
  const int status = reap(pid);
  // -1: the child was reaped elsewhere (SIGCHLD ignored); its answer is lost, and the caller reads
  // unguarded, as without the check.
  if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0)) return;
  const std::string how =
      WIFSIGNALED(status) ? std::string("crashes on it (") + ::strsignal(WTERMSIG(status)) + ")"
                          : "fails on it (exit status " + std::to_string(WEXITSTATUS(status)) + ")";
  throw InputError(place, "is a damaged " + library + " file: the " + library + " library " + how +
                              ", so nothing was read (fitbench tries such files in a separate "
                              "process first)");
}

}  // namespace fitbench
