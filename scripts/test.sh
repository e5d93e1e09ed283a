#!/usr/bin/env bash
# Quick start 2: installs what is missing, builds fitbench and runs the whole test suite with
# ctest, then again under AddressSanitizer (+ UndefinedBehaviorSanitizer on the engine, the readers
# and the CLI), then the threaded core tests and the CLI's under ThreadSanitizer, then every fuzz
# target for 10 s (FITBENCH_FUZZ_SECONDS).
# FITBENCH_QUICK=1 skips the sanitizer and fuzz passes. With Open MPI installed (deps.sh installs
# it) the suites include the mpi/ tests: mpirun on 2 and 4 processes, each under a timeout, as
# root too (the tests set OMPI_ALLOW_RUN_AS_ROOT and its confirmation themselves).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
fitbench_install_deps
export QT_QPA_PLATFORM=offscreen
started=$SECONDS
# Each step's line says when it began, so a log shows where CI's time goes.
at() { echo "[$(( (SECONDS - started) / 60 )) min $(( (SECONDS - started) % 60 )) s]"; }

run_suite() {  # build-dir, extra cmake args...
  local dir="$1"; shift
  echo "== fitbench: building in $dir $* $(at)"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFITBENCH_UNITY=ON "$@" >/dev/null
  cmake --build "$dir" -j2
  echo "== fitbench: testing in $dir $(at)"
  ctest --test-dir "$dir" --output-on-failure -j2 --timeout 900
}

# The core tests that run threads: their sources name devices, executors, collectives, sweeps or
# the run plan (the others, CSV, layers, losses and such, run on the calling thread alone).
threaded='use_data_parallel|use_model_parallel|Collectives|DevicePool|std::thread|apply_distribution|run_experiment|Executor|[Ss]weep|devices|tbb'

run_threaded_tsan() {
  # The core tests that run threads and the CLI's (which runs a ThreadSanitizer build of
  # fitbench-cli, its device threads included). The window's tests stay out: Qt is not built
  # with ThreadSanitizer, so a value handed to the training thread through a queued call is
  # reported as a race.
  local dir="$root/build-tsan"
  # File by file, not as a unity build (FITBENCH_UNITY): the one build of CI in which each core
  # and CLI source must compile alone, so a missing #include fails here and not on the next
  # edit.
  echo "== fitbench: ThreadSanitizer build of the threaded core tests and the CLI's in $dir $(at)"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DFITBENCH_TSAN=ON -DFITBENCH_BENCH=OFF >/dev/null
  local targets
  targets=$(cd "$root/tests" && { grep -lE "$threaded" core/tst_*.cpp; ls cli/tst_*.cpp; } |
    xargs -n1 basename | sed 's/\.cpp$//')
  # shellcheck disable=SC2086
  cmake --build "$dir" -j2 --target fitbench-cli $targets
  echo "== fitbench: testing in $dir $(at)"
  # die_after_fork=0: a test that has run devices starts fitbench-cli through QProcess, whose
  # forked child execs at once.
  TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 die_after_fork=0 suppressions=$root/tests/tsan.supp" \
    ctest --test-dir "$dir" --output-on-failure --timeout 900 \
      -R "^(core|cli)/($(echo $targets | tr ' ' '|'))\$"
}

# Under AddressSanitizer the window runs whole: every example opened and trained, the trial's
# menus and dialogs, the Keras files, the sweep window, and the real window under X
# (x11/window_keys). The views' own tests and the front-end comparison run in the pass above
# only: they drive the same code again piece by piece, and would add a quarter to CI's time.
asan_ui_tests="tst_main_window;tst_window_trial;tst_examples;tst_keras_files_window;tst_sweep_window"

# The benchmarks are not tests (bench/run_all.sh builds and runs them in a build of their own):
# leaving them out saves CI a few minutes of compiling. FITBENCH_BENCH=ON builds them here too.
run_suite "${FITBENCH_BUILD_DIR:-$root/build}" "-DFITBENCH_BENCH=${FITBENCH_BENCH:-OFF}"
if [ "${FITBENCH_QUICK:-0}" != "1" ]; then
  # intercept_tls_get_addr=0: the sanitizer runtimes of GCC 12 and LLVM 14 take a dynamic TLS
  # block that happens to start 16 bytes into a page for glibc 2.19's header and read a bogus
  # range from it; LeakSanitizer's tracer then dies at exit ("Tracer caught signal 11") after
  # every test passed. Dynamic TLS stays reachable through each thread's static TLS, which
  # LeakSanitizer still scans.
  ASAN_OPTIONS=detect_leaks=1:intercept_tls_get_addr=0 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$root/tests/lsan.supp" \
    run_suite "$root/build-asan" -DFITBENCH_SANITIZE=ON -DFITBENCH_NATIVE=OFF -DFITBENCH_BENCH=OFF \
      "-DFITBENCH_UI_TESTS=$asan_ui_tests"
  run_threaded_tsan
  # Every fuzz target briefly from its corpus (docs/fuzzing.md; scripts/fuzz.sh SECONDS for long
  # runs).
  echo "== fitbench: fuzz targets $(at)"
  "$root/scripts/fuzz.sh" "${FITBENCH_FUZZ_SECONDS:-10}"
fi
echo "== fitbench: all test suites passed $(at)"
