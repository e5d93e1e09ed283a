// fitbench-hdf5-check: reads a Keras weights image the way fitbench is about to, in a process of
// its own, so that a file that makes HDF5 crash or loop costs this program, not fitbench
// (core/base/child_check.h). Started by fitbench's readers, never by hand: the request comes on
// standard input, the answer is the exit status, and nothing is printed.
#include <sys/resource.h>
#include <unistd.h>

#include "core/io/keras_file.h"

int main() {
  // No core file: a damaged file that crashes HDF5 here is an answer, not a crash to report.
  const struct rlimit no_core { 0, 0 };
  ::setrlimit(RLIMIT_CORE, &no_core);
  // _exit: the answer is the status alone (no exit handlers, no sanitizer's leak report at exit,
  // where HDF5 may keep what it allocated for a damaged file).
  ::_exit(fitbench::check_keras_weights_request(STDIN_FILENO));
}
