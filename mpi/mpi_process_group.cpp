#include "mpi/mpi_process_group.h"

#include <mpi.h>

#include <cstdlib>
#include <stdexcept>

namespace fitbench {

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
  MPI_Comm_rank(MPI_COMM_WORLD, &group->rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &group->size_);
  group->local_rank_ = layout.local_rank;
  if (group->size_ != layout.size || group->rank_ != layout.rank)
    throw std::runtime_error(
        "says process " + std::to_string(layout.rank) + " of " + std::to_string(layout.size) +
        " but MPI started this one as rank " + std::to_string(group->rank_) + " of " +
        std::to_string(group->size_) +
        "; fitbench's processes talk through MPI: start them with mpirun and leave "
        "KERAS_DISTRIBUTION_* unset, or set them to the ranks mpirun gives");
  return group;
}

void MpiProcessGroup::all_to_all(const float* send, const int* send_counts, const int* send_displs,
                                 float* recv, const int* recv_counts, const int* recv_displs) {
  MPI_Alltoallv(send, send_counts, send_displs, MPI_FLOAT, recv, recv_counts, recv_displs,
                MPI_FLOAT, MPI_COMM_WORLD);
}

void MpiProcessGroup::all_gather(const float* send, float* recv, const int* counts,
                                 const int* displs) {
  MPI_Allgatherv(send, counts[rank_], MPI_FLOAT, recv, counts, displs, MPI_FLOAT, MPI_COMM_WORLD);
}

void MpiProcessGroup::broadcast(float* buffer, int64_t count, int root) {
  MPI_Bcast(buffer, static_cast<int>(count), MPI_FLOAT, root, MPI_COMM_WORLD);
}

void MpiProcessGroup::all_gather_bytes(const void* send, int64_t bytes, void* recv) {
  MPI_Allgather(send, static_cast<int>(bytes), MPI_BYTE, recv, static_cast<int>(bytes), MPI_BYTE,
                MPI_COMM_WORLD);
}

void MpiProcessGroup::barrier() { MPI_Barrier(MPI_COMM_WORLD); }

void finalize_mpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
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
