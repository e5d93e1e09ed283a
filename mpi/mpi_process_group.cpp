#include "mpi/mpi_process_group.h"

#include <mpi.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

namespace fitbench {
namespace {

// Windows larger than this fail on this process (MpiProcessGroup::limit_shared_bytes).
int64_t shared_byte_limit = -1;

}  // namespace

// A group's communicator and what hangs on it.
struct Communicator {
  // One MPI-3 shared window over a communicator's window duplicate: a segment per process.
  struct Window {
    MPI_Win win = MPI_WIN_NULL;
    int64_t capacity = 0;  // floats per segment
    std::vector<float*> segments;

    void free() {
      if (win == MPI_WIN_NULL) return;
      MPI_Win_unlock_all(win);
      MPI_Win_free(&win);
      capacity = 0;
      segments.clear();
    }
  };

  MPI_Comm comm = MPI_COMM_NULL;  // MPI_COMM_WORLD, or a split of it (freed at the end)
  // The communicator's duplicate for the windows, whose errors return instead of ending the job:
  // a window that cannot be had falls back to MPI's messages. Made when the processes share a
  // machine.
  MPI_Comm window_comm = MPI_COMM_NULL;
  // The windows no handle holds. Handles take the last and return theirs to the end, in the
  // same order on every process, so the k-th window of one process is the k-th of every other.
  std::vector<std::unique_ptr<Window>> idle;

  // Collective over the communicator's processes.
  void free() {
    for (auto& w : idle) w->free();
    idle.clear();
    if (window_comm != MPI_COMM_NULL) MPI_Comm_free(&window_comm);
    if (comm != MPI_COMM_NULL && comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    comm = MPI_COMM_NULL;
  }
};

namespace {

// Every communicator a group uses, until the group ends or finalize_mpi frees what is left; the
// mutex also guards each one's idle windows (a handle may end on any thread).
std::mutex communicators_mutex;
std::vector<std::shared_ptr<Communicator>> communicators;

bool mpi_running() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  return initialized && !finalized;
}

class MpiSharedFloats final : public SharedFloats {
 public:
  MpiSharedFloats(std::shared_ptr<Communicator> comm, int rank, int size)
      : comm_(std::move(comm)), rank_(rank), size_(size) {
    std::lock_guard lock(communicators_mutex);
    if (comm_->idle.empty()) {
      window_ = std::make_unique<Communicator::Window>();
    } else {
      window_ = std::move(comm_->idle.back());
      comm_->idle.pop_back();
    }
  }
  ~MpiSharedFloats() override {
    std::lock_guard lock(communicators_mutex);
    comm_->idle.push_back(std::move(window_));
  }

  float* reserve(int64_t floats) override {
    Communicator::Window& w = *window_;
    if (floats > w.capacity || w.win == MPI_WIN_NULL) {
      w.free();
      floats = std::max<int64_t>(floats, 1);
      // Each process's segment on pages of its own (placed where that process first touches it).
      MPI_Info info;
      MPI_Info_create(&info);
      MPI_Info_set(info, "alloc_shared_noncontig", "true");
      float* base = nullptr;
      const int64_t bytes = floats * static_cast<int64_t>(sizeof(float));
      // Over the limit this process asks for nothing, as if the memory were not there.
      const bool allowed = shared_byte_limit < 0 || bytes <= shared_byte_limit;
      const bool made =
          MPI_Win_allocate_shared(static_cast<MPI_Aint>(allowed ? bytes : 0), sizeof(float), info,
                                  comm_->window_comm, &base, &w.win) == MPI_SUCCESS;
      MPI_Info_free(&info);
      if (!made) w.win = MPI_WIN_NULL;
      // Every process must take the same path; a window made on every process is freed by all.
      int ok = made && allowed ? 1 : 0, all = 0;
      MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm_->window_comm);
      if (!all) {
        if (w.win != MPI_WIN_NULL) MPI_Win_free(&w.win);
        w.win = MPI_WIN_NULL;
        w.capacity = 0;
        w.segments.clear();
        return nullptr;
      }
      w.segments.assign(static_cast<size_t>(size_), nullptr);
      for (int q = 0; q < size_; ++q) {
        MPI_Aint segment_bytes = 0;
        int unit = 0;
        void* at = nullptr;
        MPI_Win_shared_query(w.win, q, &segment_bytes, &unit, &at);
        w.segments[static_cast<size_t>(q)] = static_cast<float*>(at);
      }
      // One passive epoch for the window's life: MPI_Win_sync then orders the loads and stores.
      MPI_Win_lock_all(MPI_MODE_NOCHECK, w.win);
      w.capacity = floats;
    }
    return w.segments[static_cast<size_t>(rank_)];
  }
  const float* segment(int q) const override { return window_->segments[static_cast<size_t>(q)]; }
  int64_t capacity() const override { return window_->capacity; }
  void sync() override {
    if (window_->win != MPI_WIN_NULL) MPI_Win_sync(window_->win);
  }

 private:
  std::shared_ptr<Communicator> comm_;
  const int rank_, size_;
  std::unique_ptr<Communicator::Window> window_;
};

}  // namespace

std::shared_ptr<MpiProcessGroup> MpiProcessGroup::initialize(const ProcessLayout& layout) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (!initialized) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Init_thread failed");
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_FUNNELED)
    throw std::runtime_error(
        "this MPI library gives thread level " + std::to_string(provided) +
        " but fitbench needs MPI_THREAD_FUNNELED (its device threads meet the thread that calls "
        "MPI); use Open MPI 4.1 as Debian packages it (openmpi-bin, libopenmpi-dev)");
  auto group = std::shared_ptr<MpiProcessGroup>(new MpiProcessGroup());
  {
    std::lock_guard lock(communicators_mutex);
    communicators.push_back(std::make_shared<Communicator>());
    communicators.back()->comm = MPI_COMM_WORLD;
    group->comm_ = communicators.back();
  }
  group->local_rank_ = layout.local_rank;
  group->attach();
  if (group->size_ != layout.size || group->rank_ != layout.rank)
    throw std::runtime_error(
        "says process " + std::to_string(layout.rank) + " of " + std::to_string(layout.size) +
        " but MPI started this one as rank " + std::to_string(group->rank_) + " of " +
        std::to_string(group->size_) +
        "; fitbench's processes talk through MPI: start them with mpirun and leave "
        "KERAS_DISTRIBUTION_* unset, or set them to the ranks mpirun gives");
  group->shared_ = group->shared_possible_;
  return group;
}

void MpiProcessGroup::attach() {
  Communicator* comm = comm_.get();
  MPI_Comm_rank(comm->comm, &rank_);
  MPI_Comm_size(comm->comm, &size_);
  // Sharing memory needs every process of the communicator on this machine, and every process
  // willing.
  MPI_Comm node = MPI_COMM_NULL;
  int node_size = 0;
  MPI_Comm_split_type(comm->comm, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  const char* off = std::getenv("FITBENCH_SHM_DISABLE");
  int mine = node_size == size_ && !(off && std::strcmp(off, "1") == 0) ? 1 : 0, all = 0;
  MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, comm->comm);
  shared_possible_ = all == 1;
  if (shared_possible_ && comm->window_comm == MPI_COMM_NULL) {
    MPI_Comm_dup(comm->comm, &comm->window_comm);
    MPI_Comm_set_errhandler(comm->window_comm, MPI_ERRORS_RETURN);
  }
}

MpiProcessGroup::~MpiProcessGroup() {
  // A split's communicator ends with its group (MPI_COMM_WORLD's with finalize_mpi, which may
  // have freed this one already).
  if (!comm_ || comm_->comm == MPI_COMM_WORLD) return;
  std::lock_guard lock(communicators_mutex);
  if (mpi_running()) comm_->free();
  std::erase(communicators, comm_);
}

std::shared_ptr<ProcessGroup> MpiProcessGroup::split(int color, int key) {
  MPI_Comm comm = MPI_COMM_NULL;
  MPI_Comm_split(comm_->comm, color, key, &comm);
  auto group = std::shared_ptr<MpiProcessGroup>(new MpiProcessGroup());
  {
    std::lock_guard lock(communicators_mutex);
    communicators.push_back(std::make_shared<Communicator>());
    communicators.back()->comm = comm;
    group->comm_ = communicators.back();
  }
  group->local_rank_ = local_rank_;
  group->attach();
  group->shared_ = group->shared_possible_ && shared_;
  return group;
}

void MpiProcessGroup::limit_shared_bytes(int64_t bytes) { shared_byte_limit = bytes; }

std::unique_ptr<SharedFloats> MpiProcessGroup::shared_floats() {
  if (!shared_) return nullptr;
  return std::make_unique<MpiSharedFloats>(comm_, rank_, size_);
}

void MpiProcessGroup::all_to_all(const float* send, const int* send_counts, const int* send_displs,
                                 float* recv, const int* recv_counts, const int* recv_displs) {
  MPI_Alltoallv(send, send_counts, send_displs, MPI_FLOAT, recv, recv_counts, recv_displs,
                MPI_FLOAT, comm_->comm);
}

void MpiProcessGroup::all_gather(const float* send, float* recv, const int* counts,
                                 const int* displs) {
  MPI_Allgatherv(send, counts[rank_], MPI_FLOAT, recv, counts, displs, MPI_FLOAT, comm_->comm);
}

void MpiProcessGroup::broadcast(float* buffer, int64_t count, int root) {
  MPI_Bcast(buffer, static_cast<int>(count), MPI_FLOAT, root, comm_->comm);
}

void MpiProcessGroup::all_gather_bytes(const void* send, int64_t bytes, void* recv) {
  MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes), MPI_BYTE,
                comm_->comm);
}

void MpiProcessGroup::barrier() { MPI_Barrier(comm_->comm); }

void finalize_mpi() {
  if (!mpi_running()) return;
  {
    std::lock_guard lock(communicators_mutex);
    for (auto& c : communicators) c->free();
    communicators.clear();
  }
  MPI_Finalize();
}

void abort_mpi(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string s(text, static_cast<size_t>(length));
  if (const size_t eol = s.find_first_of(",\n"); eol != std::string::npos) s.resize(eol);
  return s;
}

}  // namespace fitbench
