#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.cpp) with Clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs each for SECONDS (default 60) from its seed corpus in
# tests/fuzz/<target>/. New inputs go to a working corpus in the build folder, never into the
# repository; a crash, leak, timeout or out-of-memory input is kept in <build>/fuzz-findings/ and
# fails the script. Prints one line per target: executions, executions per second, findings.
#   scripts/fuzz.sh [SECONDS] [TARGET...]     (targets: experiment csv layout_key ...)
# Environment: FITBENCH_FUZZ_BUILD_DIR (default <repo>/build-fuzz), FITBENCH_FUZZ_JOBS (build
# jobs, default 2).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [ "$seconds" -lt 1 ]; then
  echo "fuzz.sh: SECONDS must be a whole number of seconds, got \"$seconds\"" >&2
  exit 2
fi
source "$root/scripts/deps.sh"
fitbench_install_deps
build="${FITBENCH_FUZZ_BUILD_DIR:-$root/build-fuzz}"
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$root"/fuzz/fuzz_*.cpp; do
    t="$(basename "$f" .cpp)"
    targets+=("${t#fuzz_}")
  done
fi
for t in "${targets[@]}"; do
  if [ ! -f "$root/fuzz/fuzz_$t.cpp" ]; then
    echo "fuzz.sh: no target \"$t\" (fuzz/fuzz_$t.cpp)" >&2
    exit 2
  fi
done

echo "== fitbench: building the fuzz targets with Clang in $build"
CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DFITBENCH_FUZZ=ON -DFITBENCH_NATIVE=OFF -DFITBENCH_UNITY=ON >/dev/null
cmake --build "$build" -j"${FITBENCH_FUZZ_JOBS:-2}" --target $(printf 'fuzz_%s ' "${targets[@]}")

findings="$build/fuzz-findings"
mkdir -p "$findings"
failed=0
# intercept_tls_get_addr=0: see scripts/test.sh (LeakSanitizer's tracer and dynamic TLS).
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:intercept_tls_get_addr=0"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
for t in "${targets[@]}"; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus"
  log="$build/fuzz-$t.log"
  # -rss_limit_mb: an input that makes a reader take 2 GB is a finding; -timeout: so is one that
  # takes 10 s. The seed corpus is read, not written.
  limits=(-rss_limit_mb=2048)
  asan="$ASAN_OPTIONS"
  run_seconds="$seconds"
  if [ "$t" = keras_file ]; then
    # HDF5 allocates what a damaged object header declares (up to 4 GiB) before it can tell the
    # header is wrong. Here a single allocation over 2 GiB fails, as it does for fitbench-cli under
    # a 2 GB memory limit, and HDF5 must then fail the read cleanly; memory really used still
    # counts against -rss_limit_mb, and a bad_alloc that escapes a reader is still a crash.
    limits+=(-malloc_limit_mb=1048576)
    asan="$asan:max_allocation_size_mb=2048"
    # fitbench reads HDF5 in a program of its own first (core/base/child_check.h), which libFuzzer
    # cannot see into: the target reads without it, in jobs of their own (-fork) that go on past
    # a crash (-ignore_crashes). Each crash, timeout and out-of-memory input is sorted below.
    limits+=(-fork=1 -ignore_crashes=1)
    # Its seeds hold inputs that HDF5 crashes on or allocates for without end (the job takes about
    # 8 s to reach -rss_limit_mb): the pass over the seeds takes about 12 s, which the run gets
    # on top of SECONDS.
    run_seconds=$((seconds + 15))
  fi
  marker="$build/fuzz-$t.started"
  touch "$marker"
  status="ok"
  if ! ASAN_OPTIONS="$asan" "$build/fuzz/fuzz_$t" "$corpus" "$root/tests/fuzz/$t" \
      -max_total_time="$run_seconds" -timeout=10 "${limits[@]}" -print_final_stats=1 \
      -artifact_prefix="$findings/$t-" >"$log" 2>&1; then
    found_here=1
  else
    found_here=0
  fi
  hdf5=0
  if [ "$t" = keras_file ]; then
    # An input that fitbench with its child check refuses with a sentence, and that crashed inside
    # HDF5 (innermost frames #0 to #3) or ran past the time or memory limit here, is HDF5's own
    # and handled: the check program is stopped at its own limits, and fitbench's own code runs
    # here in both modes, so a loop or an allocation of fitbench's would fail the rerun too. It is
    # kept in fuzz-findings/hdf5/ (a new one is worth a file in tests/data/keras_damaged/), not
    # counted as a finding.
    while IFS= read -r found; do
      ASAN_OPTIONS="$asan" timeout 120 "$build/fuzz/fuzz_$t" -rss_limit_mb=2048 "$found" \
        >"$found.report" 2>&1 || true
      case "$(basename "$found")" in
        "$t"-crash-*) inside=$(grep -E '^ +#[0-3] ' "$found.report" | grep -c libhdf5 || true) ;;
        *) inside=1 ;;
      esac
      if [ "$inside" -gt 0 ] &&
        FITBENCH_FUZZ_CHILD_CHECK=1 ASAN_OPTIONS="$asan" timeout 120 "$build/fuzz/fuzz_$t" \
          -rss_limit_mb=2048 "$found" >/dev/null 2>&1; then
        mkdir -p "$findings/hdf5"
        mv "$found" "$found.report" "$findings/hdf5/"
        hdf5=$((hdf5 + 1))
      fi
    done < <(find "$findings" -maxdepth 1 \( -name "$t-crash-*" -o -name "$t-oom-*" -o \
      -name "$t-timeout-*" \) ! -name '*.report' -newer "$marker")
  fi
  # In fork mode libFuzzer ends with "INFO: exiting: N" and a non-zero N after crashed jobs, even
  # when every input they left was sorted above as HDF5's own. Such an exit is explained only if
  # libFuzzer ended in order and counted the jobs that failed (its "oom/timeout/crash: a/b/c"); then
  # what is left unsorted decides. Any other failure stays a finding.
  if [ "$found_here" = 1 ] && [ "$hdf5" -gt 0 ] && grep -q '^INFO: exiting: ' "$log"; then
    counted=$(grep -o 'oom/timeout/crash: [0-9]*/[0-9]*/[0-9]*' "$log" | tail -1 |
      grep -o '[0-9/]*$' | tr '/' '+' || true)
    [ -n "$counted" ] && [ $((counted)) -gt 0 ] && found_here=0
  fi
  if [ "$found_here" = 1 ] || [ -n "$(find "$findings" -maxdepth 1 -name "$t-*" -newer "$marker")" ]; then
    status="FINDING (see $log and $findings)"
    failed=1
  fi
  [ "$hdf5" -gt 0 ] && status="$status; HDF5 crashed, looped or took memory without end on $hdf5 input(s), each refused by the child check (kept in $findings/hdf5/)"
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' ||
    grep -o '^#[0-9]*:' "$log" | tail -1 | tr -d '#:' || echo "?")
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "-")
  [ "$rate" = "-" ] && [ -n "$runs" ] && [ "$runs" != "?" ] && rate=$((runs / run_seconds))
  printf 'fuzz %-12s %12s executions %8s/s  %s\n' "$t" "$runs" "$rate" "$status"
done
exit "$failed"
