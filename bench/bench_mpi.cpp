// Multi-process DataParallel against one process, in one run: start it with
//   mpirun --oversubscribe -np 2 bench_mpi
// (a) the MLP 784-512-512-10 (Adam, batch 256): samples/s of 2 processes x 1 device, through
// shared memory and through MPI's messages (FITBENCH_SHM_DISABLE=1, the path between machines) in
// turn, and, in rounds interleaved with them (the other rank sleeping meanwhile), of 1 process x 1
// device and of 1 process x 2 thread devices, with the ratios per round; (b) the seed model's
// step on the 2 processes, both ways, with the share of it spent in the collectives' spans; (c)
// the floor: one bare MPI_Allreduce of the seed's 5 gradient floats, and of the MLP's 669,706.
// Reports numbers only.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <thread>

#include "bench/bench_models.h"
#include "bench/bench_util.h"
#include "core/distribution/executors/distribution.h"
#include "core/distribution/trace/trace.h"
#include "core/python/random.h"
#include "mpi/mpi_process_group.h"

using namespace fitbench;
using namespace fitbench::bench;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Waits for every rank without spinning a core (MPI_Barrier polls): the sleeping rank leaves
// the machine to the one measuring.
void quiet_barrier() {
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  int done = 0;
  while (!done) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

std::unique_ptr<Sequential> model(const ModelSpec& spec, const CompileOptions& c, int features,
                                  const std::function<void(Sequential&)>& distribute) {
  set_random_seed(7);
  auto m = std::make_unique<Sequential>(spec);
  m->build(features);
  m->compile(c);
  if (distribute) distribute(*m);
  return m;
}

// The moments every training batch ended.
class BatchClock : public Callback {
 public:
  void on_train_begin(const Logs&) override { ends.clear(); }
  void on_train_batch_end(int, const Logs&) override { ends.push_back(Clock::now()); }
  std::vector<Clock::time_point> ends;
};

// Seconds of one fit() epoch over x, y in batches of `batch` (no shuffle, silent), and in
// `steady` the seconds per step after the first (fit()'s setup and first step left out).
double epoch(Sequential& m, const Matrix& x, const Matrix& y, int batch,
             Callback* callback = nullptr, double* steady = nullptr) {
  RunOptions run;
  BatchClock clock;
  run.callbacks.push_back(&clock);
  if (callback) run.callbacks.push_back(callback);
  const auto t0 = Clock::now();
  m.fit(x, y, FitOptions{.epochs = 1, .batch_size = batch, .shuffle = false, .verbose = 0}, run);
  if (steady && clock.ends.size() > 1)
    *steady = std::chrono::duration<double>(clock.ends.back() - clock.ends.front()).count() /
              static_cast<double>(clock.ends.size() - 1);
  return seconds_since(t0);
}

// Microseconds of one MPI_Allreduce of n floats (the median of 20 blocks).
double allreduce_us(int n, int per_block) {
  std::vector<float> in(static_cast<size_t>(n), 1.0f), out(in.size());
  std::vector<double> us;
  for (int b = 0; b < 21; ++b) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int i = 0; i < per_block; ++i)
      MPI_Allreduce(in.data(), out.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    if (b > 0) us.push_back(seconds_since(t0) * 1e6 / per_block);
  }
  return median(us);
}

// Microseconds of fitbench's exchange of n floats between 2 processes: MPI_Alltoallv of half
// the buffer each way, then MPI_Allgatherv of the summed halves (the median of 20 blocks).
double exchange_us(int n, int per_block) {
  std::vector<float> in(static_cast<size_t>(n), 1.0f), half(static_cast<size_t>(n)), out(in.size());
  const int a = n / 2, b = n - a;
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int mine = rank == 0 ? a : b;
  int send_counts[2] = {a, b}, send_displs[2] = {0, a};
  int recv_counts[2] = {mine, mine}, recv_displs[2] = {0, mine};
  int gather_counts[2] = {a, b}, gather_displs[2] = {0, a};
  std::vector<double> us;
  for (int blk = 0; blk < 21; ++blk) {
    MPI_Barrier(MPI_COMM_WORLD);
    const auto t0 = Clock::now();
    for (int i = 0; i < per_block; ++i) {
      MPI_Alltoallv(in.data(), send_counts, send_displs, MPI_FLOAT, half.data(), recv_counts,
                    recv_displs, MPI_FLOAT, MPI_COMM_WORLD);
      for (int j = 0; j < mine; ++j)
        half[static_cast<size_t>(j)] += half[static_cast<size_t>(mine + j)];
      MPI_Allgatherv(half.data(), mine, MPI_FLOAT, out.data(), gather_counts, gather_displs,
                     MPI_FLOAT, MPI_COMM_WORLD);
    }
    if (blk > 0) us.push_back(seconds_since(t0) * 1e6 / per_block);
  }
  return median(us);
}

}  // namespace

int main() {
  auto group = MpiProcessGroup::initialize(detect_process_layout(std::getenv));
  set_process_group(group);
  const int rank = group->rank(), processes = group->size();
  if (processes != 2) {
    if (rank == 0) std::fprintf(stderr, "bench_mpi: start it with mpirun -np 2\n");
    finalize_mpi();
    return 2;
  }
  if (rank == 0)
    std::printf("bench_mpi: %s; load %s; %s\n", host_cpu().c_str(), load_average().c_str(),
                mpi_library_version().c_str());

  // (a) The MLP.
  constexpr int kBatch = 256, kRows = 20 * kBatch, kRounds = 7;
  Rng rng(11);
  Matrix x(kRows, 784), y(kRows, 1);
  for (Index i = 0; i < kRows; ++i) {
    for (Index j = 0; j < 784; ++j) x(i, j) = static_cast<float>(rng.normal());
    y(i, 0) = static_cast<float>(rng.below(10));
  }
  RehearsalOptions across;
  across.processes = group;
  auto mpi2 = model(mlp_spec(), mlp_compile(), 784,
                    [&](Sequential& m) { use_data_parallel(m, 2, across); });
  // The same through MPI's messages, as between machines (FITBENCH_SHM_DISABLE=1): fit() sets up
  // its collectives, so sharing is turned off around its fit() calls.
  const bool shares = group->shares_memory();
  auto messages2 = model(mlp_spec(), mlp_compile(), 784,
                         [&](Sequential& m) { use_data_parallel(m, 2, across); });
  std::unique_ptr<Sequential> one, threads2;
  if (rank == 0) {
    one = model(mlp_spec(), mlp_compile(), 784, nullptr);
    threads2 =
        model(mlp_spec(), mlp_compile(), 784, [](Sequential& m) { use_data_parallel(m, 2); });
  }
  // Per round: whole-epoch samples/s (fit()'s setup included) and steady-state samples/s (the
  // steps after the first), and their ratios within the round.
  std::vector<double> e_mpi, e_one, e_threads, s_mpi, s_one, s_threads, r_one, r_threads, mlp_share;
  std::vector<double> s_messages, r_messages, messages_share, busy_mpi, busy_messages;
  for (int round = 0; round <= kRounds; ++round) {
    double step_mpi = 0, step_one = 0, step_threads = 0, step_messages = 0;
    double t_mpi = 0;
    // The two ways across processes, in turn (which goes first alternates).
    for (int way = 0; way < 2; ++way) {
      const bool shared = (way + round) % 2 == 0;
      TraceRecorder recorder(0);
      MPI_Barrier(MPI_COMM_WORLD);
      double step = 0;
      group->set_shares_memory(shared && shares);
      const double t = epoch(shared ? *mpi2 : *messages2, x, y, kBatch, &recorder, &step);
      group->set_shares_memory(shares);
      const DeviceUsage u = recorder.usage()[0];
      const double share = u.total_us > 0 ? u.communication_us / u.total_us : 0;
      const double busy_us = u.busy_us / (kRows / kBatch);
      if (shared) {
        t_mpi = t;
        step_mpi = step;
        if (round > 0) mlp_share.push_back(share), busy_mpi.push_back(busy_us);
      } else {
        step_messages = step;
        if (round > 0) messages_share.push_back(share), busy_messages.push_back(busy_us);
      }
    }
    quiet_barrier();
    double t_one = 0, t_threads = 0;
    if (rank == 0) {
      t_one = epoch(*one, x, y, kBatch, nullptr, &step_one);
      t_threads = epoch(*threads2, x, y, kBatch, nullptr, &step_threads);
    }
    quiet_barrier();
    if (round == 0) continue;  // warm-up
    e_mpi.push_back(kRows / t_mpi);
    e_one.push_back(kRows / t_one);
    e_threads.push_back(kRows / t_threads);
    s_mpi.push_back(kBatch / step_mpi);
    s_one.push_back(kBatch / step_one);
    s_threads.push_back(kBatch / step_threads);
    r_one.push_back(step_one / step_mpi);
    r_threads.push_back(step_threads / step_mpi);
    s_messages.push_back(kBatch / step_messages);
    r_messages.push_back(step_messages / step_mpi);
  }
  if (rank == 0) {
    std::printf(
        "MLP 784-512-512-10 Adam, batch %d, %d steps per epoch, median of %d rounds; samples/s "
        "in steady state (the steps after the first) and over the whole fit() (its setup "
        "included):\n",
        kBatch, kRows / kBatch, kRounds);
    std::printf("  1 process x 1 device          %9.0f  (whole fit() %6.0f)\n", median(s_one),
                median(e_one));
    std::printf("  1 process x 2 thread devices  %9.0f  (whole fit() %6.0f)\n", median(s_threads),
                median(e_threads));
    std::printf(
        "  2 processes x 1 device        %9.0f  (whole fit() %6.0f; %.0f%% of device 0's time "
        "in collectives, %.0f us a step busy; %s)\n",
        median(s_mpi), median(e_mpi), 100 * median(mlp_share), median(busy_mpi),
        shares ? "through shared memory" : "through MPI messages: the processes share no memory");
    std::printf(
        "  the same through MPI messages %9.0f  (%.0f%% in collectives, %.0f us a step busy; "
        "FITBENCH_SHM_DISABLE=1, as between machines)\n",
        median(s_messages), 100 * median(messages_share), median(busy_messages));
    std::printf(
        "  steady state: 2 processes / 1 process: %.2fx; 2 processes / 2 threads: %.2fx; "
        "shared memory / MPI messages: %.2fx\n",
        median(r_one), median(r_threads), median(r_messages));
  }

  // (b) The seed model's step across the 2 processes, and its MPI share.
  Matrix sx(128, 4), sy(128, 1);
  for (Index i = 0; i < 128; ++i) {
    for (Index j = 0; j < 4; ++j) sx(i, j) = static_cast<float>(rng.normal());
    sy(i, 0) = sx(i, 0) > 0 ? 1.0f : 0.0f;
  }
  auto seed = model(seed_spec(), seed_compile(), 4,
                    [&](Sequential& m) { use_data_parallel(m, 2, across); });
  epoch(*seed, sx, sy, 16);
  std::vector<double> step_us, mpi_share, step_messages_us;
  for (int round = 0; round < 21; ++round) {
    for (int way = 0; way < 2; ++way) {
      const bool shared = (way + round) % 2 == 0;
      TraceRecorder recorder(0);
      group->set_shares_memory(shared && shares);
      MPI_Barrier(MPI_COMM_WORLD);
      const double t = epoch(*seed, sx, sy, 16, &recorder);
      group->set_shares_memory(shares);
      const DeviceUsage u = recorder.usage()[0];
      if (shared) {
        step_us.push_back(t * 1e6 / 8);
        mpi_share.push_back(u.total_us > 0 ? u.communication_us / u.total_us : 0);
      } else {
        step_messages_us.push_back(t * 1e6 / 8);
      }
    }
  }
  // (c) The floor.
  const double floor_seed = allreduce_us(5, 2000);
  const double floor_mlp = allreduce_us(669706, 5);
  const double exchange_mlp = exchange_us(669706, 5);
  if (rank == 0) {
    std::printf("Seed model (Dense(1) on 4 features, batch 16) on 2 processes x 1 device:\n");
    std::printf(
        "  %.1f us per step (fit() with its per-batch work), %.0f%% of device 0's time in "
        "collectives (the gradients' and the totals' exchanges), through %s\n",
        median(step_us), 100 * median(mpi_share), shares ? "shared memory" : "MPI messages");
    std::printf("  %.1f us per step through MPI messages (FITBENCH_SHM_DISABLE=1)\n",
                median(step_messages_us));
    std::printf("Floor, a bare MPI_Allreduce on this machine (shared memory, 2 ranks):\n");
    std::printf("  5 floats (the seed's gradients): %.2f us; 669,706 floats (the MLP's): %.0f us\n",
                floor_seed, floor_mlp);
    std::printf(
        "  fitbench's exchange of the MLP's 669,706 floats (MPI_Alltoallv + MPI_Allgatherv, as "
        "DataParallel does it): %.0f us\n",
        exchange_mlp);
  }
  set_process_group(nullptr);
  mpi2.reset();
  messages2.reset();
  seed.reset();
  finalize_mpi();
  return 0;
}
