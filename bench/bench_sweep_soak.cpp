// fitbench-cli over a long sweep: `fitbench-cli sweep` of 1,000 short xor trials (a random
// search of Adam's learning rate, the example's 30 epochs each, --jobs 2), started as a child
// process whose resident memory (VmRSS) and thread count are read from /proc/<pid>/status every 50
// ms, and whose finished trials are counted from the trial folders it writes. Targets (issue
// "Hardening"): under 20 MB of growth after the first 100 trials and no new threads. Measured,
// not asserted in CI; the exit code says whether the targets were met (1 when not).
//   bench_sweep_soak [--trials N] [--jobs N]
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_util.h"
#include "core/io/json_file.h"

extern char** environ;

namespace fs = std::filesystem;

namespace {

using Usage = fitbench::bench::ProcessUsage;

int trials_done(const fs::path& out) {
  std::error_code ec;
  int n = 0;
  for (fs::directory_iterator it(out, ec), end; !ec && it != end; it.increment(ec))
    n += it->path().filename().string().rfind("trial_", 0) == 0;
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int trials = 1000, jobs = 2;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--trials") == 0) trials = std::max(1, std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--jobs") == 0) jobs = std::max(1, std::atoi(argv[i + 1]));
  }
  std::printf("host: %s\nload before: %s\n", fitbench::bench::host_cpu().c_str(),
              fitbench::bench::load_average().c_str());
  char dir_template[] = "/tmp/fitbench-sweep-soak-XXXXXX";
  if (!mkdtemp(dir_template)) {
    std::perror("mkdtemp");
    return 2;
  }
  const fs::path dir = dir_template;
  auto spec = fitbench::json_io::read_json_file(FITBENCH_SOURCE_DIR "/resources/examples/xor.json");
  spec["sweep"] = nlohmann::ordered_json::parse(R"({"method": "random", "seed": 1,
    "objective": "loss", "parameters": {"compile.optimizer.config.learning_rate":
      {"class_name": "Float", "config": {"min_value": 0.001, "max_value": 0.3, "sampling": "log"}}}})");
  spec["sweep"]["max_trials"] = trials;
  const fs::path experiment = dir / "soak.json";
  fitbench::json_io::write_file_atomically(experiment, fitbench::json_io::dump_document(spec));
  const fs::path out = dir / "out";

  const std::string jobs_text = std::to_string(jobs);
  std::vector<std::string> args = {
      FITBENCH_CLI, "sweep", experiment.string(), "--out", out.string(), "--jobs", jobs_text};
  std::vector<char*> argv_child;
  for (std::string& a : args) argv_child.push_back(a.data());
  argv_child.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  const auto start = std::chrono::steady_clock::now();
  if (posix_spawn(&pid, FITBENCH_CLI, &actions, nullptr, argv_child.data(), environ) != 0) {
    std::perror("posix_spawn " FITBENCH_CLI);
    return 2;
  }
  posix_spawn_file_actions_destroy(&actions);

  // The baseline is the most the process used over the first 100 trials (a trial's threads
  // come and go; the allocator's pools fill up); growth is the most it used after them, less
  // that.
  const int warmup = std::min(100, trials);
  Usage base, peak, last;
  int status = 0, reported = 0;
  bool warm = false;
  for (;;) {
    const pid_t ended = waitpid(pid, &status, WNOHANG);
    if (ended == pid) break;
    const Usage u = fitbench::bench::process_usage(std::to_string(pid));
    const int done = trials_done(out);
    if (u.threads > 0) {
      Usage& into = warm ? peak : base;
      into.rss_mb = std::max(into.rss_mb, u.rss_mb);
      into.threads = std::max(into.threads, u.threads);
      last = u;
      if (!warm && done >= warmup) {
        warm = true;
        peak = base;
        reported = done / 100 * 100;
        std::printf("trials %4d   rss %7.1f MB   threads %3d (the most so far: the baseline)\n",
                    done, base.rss_mb, base.threads);
      } else if (warm && done / 100 * 100 > reported) {
        reported = done / 100 * 100;
        std::printf("trials %4d   rss %7.1f MB (%+6.1f)   threads %3d (%+d)\n", done, u.rss_mb,
                    u.rss_mb - base.rss_mb, u.threads, u.threads - base.threads);
      }
      std::fflush(stdout);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bool exited = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  const int done = trials_done(out);
  const double growth = peak.rss_mb - base.rss_mb;
  const bool met =
      exited && warm && done == trials && growth < 20.0 && peak.threads <= base.threads;
  std::printf(
      "%d trials in %.0f s (exit %s, %d trial folders): after trial %d, rss %+.1f MB at most "
      "(%+.1f at the last reading), threads %+d at most\n",
      trials, seconds, exited ? "0" : "non-zero", done, warmup, growth, last.rss_mb - base.rss_mb,
      peak.threads - base.threads);
  std::printf("targets (under 20 MB, no new threads): %s\n", met ? "met" : "NOT met");
  std::error_code ignored;
  fs::remove_all(dir, ignored);
  return met ? 0 : 1;
}
