// What core/io's HDF5 users share: the library's lock (Debian builds it without thread safety)
// and an identifier that closes itself. Internal to core/io.
#pragma once

#include <hdf5.h>

#include <cstdint>
#include <mutex>

namespace fitbench {

// Every use of the HDF5 library holds this lock.
inline std::mutex& hdf5_lock() {
  static std::mutex m;
  return m;
}

// The largest file read into memory: a model fitbench can build (1 GiB of variables, as much in
// optimizer slots) and its archive's overhead.
inline constexpr uint64_t kMaxKerasFileBytes = uint64_t{4} << 30;

// An HDF5 identifier closed by `close` when it goes out of scope.
class H5Handle {
 public:
  H5Handle(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~H5Handle() {
    if (id_ >= 0) close_(id_);
  }
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

}  // namespace fitbench
