#include "app/cli_processes.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <type_traits>
#include <vector>

#include "core/base/error.h"
#include "core/distribution/layout/batch_shards.h"
#include "core/distribution/spec/devices.h"
#ifdef FITBENCH_HAVE_MPI
#include "mpi/mpi_process_group.h"
#endif

namespace fitbench::cli {
namespace {

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// SIGUSR1 came (catch_stop_signal). A lock-free atomic: safe in a signal handler, and seen as
// one by ThreadSanitizer.
std::atomic<bool> stop_signal{false};
static_assert(std::atomic<bool>::is_always_lock_free);

void on_stop_signal(int) { stop_signal.store(true, std::memory_order_relaxed); }

// Whether rank 0's run has ended (its files written); read by say_ended.
volatile std::sig_atomic_t files_done = 0;

#ifdef FITBENCH_HAVE_MPI
// mpirun ends the ranks with SIGTERM (a rank died or failed) or passes on Ctrl+C: rank 0 says so
// before it goes (with write(), which a signal handler may call), then dies of the signal.
void say_ended(int signal_number) {
  static const char kBefore[] =
      "fitbench-cli: rank 0: the job was ended by mpirun (another rank died or failed, or it was "
      "interrupted) before the run ended; no output file was written\n";
  static const char kAfter[] =
      "fitbench-cli: rank 0: the job was ended by mpirun (another rank died or failed, or it was "
      "interrupted) after the run ended and its files were written\n";
  [[maybe_unused]] const ssize_t ignored =
      files_done ? ::write(2, kAfter, sizeof kAfter - 1) : ::write(2, kBefore, sizeof kBefore - 1);
  std::signal(signal_number, SIG_DFL);
  std::raise(signal_number);
}
#endif

}  // namespace

void catch_stop_signal() {
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGUSR1, &action, nullptr);
}

bool stop_signalled() { return stop_signal.load(std::memory_order_relaxed); }

void StopOnSignal::on_train_batch_end(int, const Logs&) {
  if (control_.stop_requested()) return;
  const bool mine = stop_signalled();
  if (processes_.multi() ? processes_.any(mine) : mine) control_.request_stop();
}

bool have_mpi() {
#ifdef FITBENCH_HAVE_MPI
  return true;
#else
  return false;
#endif
}

std::string install_mpi_hint() {
  return "this fitbench-cli was built without Open MPI, so it cannot run across processes; "
         "install openmpi-bin and libopenmpi-dev (scripts/deps.sh does) and rebuild";
}

ProcessRun::ProcessRun(const ProcessLayout& layout) : layout_(layout) {
  if (!layout_.multi()) return;
#ifdef FITBENCH_HAVE_MPI
  try {
    group_ = MpiProcessGroup::initialize(layout_);
  } catch (const std::runtime_error& e) {
    throw InputError(layout_.source, e.what());
  }
  set_process_group(group_);
  if (layout_.rank == 0) {
    std::signal(SIGTERM, say_ended);
    std::signal(SIGINT, say_ended);
  }
#else
  throw InputError(layout_.source,
                   "is " + std::to_string(layout_.size) + ": " + install_mpi_hint());
#endif
}

ProcessRun::~ProcessRun() {
  if (!group_) return;
  set_process_group(nullptr);
  group_.reset();
}

void finish_processes() {
#ifdef FITBENCH_HAVE_MPI
  finalize_mpi();
#endif
}

int ProcessRun::device_count(std::optional<int> per_process, std::optional<int> devices,
                             std::optional<int> experiment_count) {
  const int p = layout_.size;
  if (per_process) {
    if (devices && *devices != *per_process * p)
      throw InputError("--devices", std::to_string(*devices) + " is not " + std::to_string(p) +
                                        " processes x --devices-per-process " +
                                        std::to_string(*per_process));
    return *per_process * p;
  }
  if (devices) {
    if (*devices % p != 0)
      throw InputError("--devices",
                       std::to_string(*devices) + " devices cannot be spread evenly over " +
                           std::to_string(p) + " processes; give a multiple of the process count");
    return *devices;
  }
  if (experiment_count && *experiment_count % p == 0) return *experiment_count;
  return p;
}

void ProcessRun::check_same(const std::string& experiment_file, const QStringList& args) {
  if (!group_) return;
  std::string options;
  for (const QString& a : args.mid(1)) options += a.toStdString() + '\0';
  std::string build = FITBENCH_VERSION;
  build += '\0' + std::to_string(fnv1a(file_bytes("/proc/self/exe")));
  const std::vector<StartPart> parts = {
      {"the fitbench build", build},
      {"the experiment file " + experiment_file, file_bytes(experiment_file)},
      {"the options", options},
  };
  const std::string mismatch = start_mismatch(*group_, parts);
  if (mismatch.empty()) return;
  throw InputError("", mismatch);
}

ProcessRun::PlanOutcome ProcessRun::plan_outcome(const std::string& error) {
  PlanOutcome o;
  if (!group_) {
    o.all_planned = error.empty();
    o.say_mine = !error.empty();
    return o;
  }
  // Each process's verdict: 0 planned, else the hash of its error (alike errors hash alike).
  const uint64_t mine = error.empty() ? 0 : fnv1a(error) | 1;
  std::vector<uint64_t> all(static_cast<size_t>(layout_.size));
  group_->all_gather_bytes(&mine, sizeof mine, all.data());
  bool alike = true;
  std::string failed;
  int failures = 0;
  for (size_t r = 0; r < all.size(); ++r) {
    alike = alike && all[r] == all[0];
    if (all[r] != 0) failed += (failures++ ? ", " : "") + std::to_string(r);
  }
  if (failures == 0) return o;
  o.all_planned = false;
  o.say_mine = !error.empty() && (!alike || layout_.rank == 0);
  if (!alike) o.prefix = "rank " + std::to_string(layout_.rank) + ": ";
  if (layout_.rank == 0 && error.empty())
    o.others = (failures == 1 ? "rank " : "ranks ") + failed +
               " could not plan the run (said above); every process stops";
  return o;
}

void ProcessRun::run_ended() const { files_done = 1; }

void ProcessRun::gather(std::vector<DeviceUsage>& usage) const {
  if (!group_) return;
  static_assert(std::is_trivially_copyable_v<DeviceUsage>);
  std::vector<DeviceUsage> all(usage.size() * static_cast<size_t>(layout_.size));
  group_->all_gather_bytes(usage.data(), static_cast<int64_t>(usage.size() * sizeof(DeviceUsage)),
                           all.data());
  usage = std::move(all);
}

std::string ProcessRun::placement(int devices, int shards, const MeshPlacement* mesh,
                                  int batch_size, long long rows) const {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  const std::string process = "process " + std::to_string(layout_.rank) + " of " +
                              std::to_string(layout_.size) + " on " + host + " (local rank " +
                              std::to_string(layout_.local_rank) + ", pid " +
                              std::to_string(::getpid()) + ")";
  if (shards == 0)  // no distribution: the same whole run in every process
    return process + ": the whole run on a device of its own, every row of every batch of " +
           std::to_string(batch_size) + " (the experiment has no distribution)";
  const int k = devices / layout_.size, first = layout_.rank * k;
  int s = shards / layout_.size, first_shard = layout_.rank * s;
  if (mesh) {
    // The mesh rows of this process's devices (consecutive batch groups).
    int lo = mesh->batch, hi = -1;
    for (int b = 0; b < mesh->batch; ++b)
      for (int m = 0; m < mesh->model; ++m)
        if (const int d = mesh->at(b, m); d >= first && d < first + k) {
          lo = std::min(lo, b);
          hi = std::max(hi, b);
        }
    first_shard = lo;
    s = hi - lo + 1;
  }
  std::vector<Index> offsets(static_cast<size_t>(shards)), sizes(static_cast<size_t>(shards));
  shard_rows(batch_size, shards, offsets, sizes);
  const std::vector<std::string> names = list_devices("cpu", devices);
  std::string held;
  for (int d = first; d < first + k; ++d) held += (d == first ? "" : ", ") + names[d];
  const size_t last = static_cast<size_t>(first_shard + s - 1);
  const Index begin = offsets[static_cast<size_t>(first_shard)];
  const Index end = offsets[last] + sizes[last];
  std::string shard =
      end > begin ? "rows " + std::to_string(begin) + "-" + std::to_string(end - 1) : "no rows";
  return process + ": devices " + held + "; " + shard + " of every batch of " +
         std::to_string(batch_size) + " (its shard of the data set's " + std::to_string(rows) +
         " training rows)";
}

bool ProcessRun::any(bool mine) const {
  if (!group_) return mine;
  const int32_t said = mine ? 1 : 0;
  flags_.resize(static_cast<size_t>(layout_.size));  // once: no allocation per batch
  group_->all_gather_bytes(&said, sizeof said, flags_.data());
  for (const int32_t a : flags_)
    if (a) return true;
  return false;
}

std::string ProcessRun::crowding(int devices) const {
  const int k = devices / layout_.size;
  cpu_set_t mask;
  CPU_ZERO(&mask);
  if (k < 2 || ::sched_getaffinity(0, sizeof mask, &mask) != 0) return "";
  const int cpus = CPU_COUNT(&mask);
  if (cpus >= k) return "";
  return "warning: process " + std::to_string(layout_.rank) + " may run on " +
         std::to_string(cpus) + (cpus == 1 ? " CPU" : " CPUs") + " (its binding) but hosts " +
         std::to_string(k) + " devices, which then take turns on " + (cpus == 1 ? "it" : "them") +
         "; start mpirun with --bind-to none, or --map-by slot:PE=" + std::to_string(k) +
         " to give each process " + std::to_string(k) + " cores";
}

void ProcessRun::abort(int code) const {
#ifdef FITBENCH_HAVE_MPI
  if (group_) abort_mpi(code);
#endif
  std::exit(code);
}

}  // namespace fitbench::cli
