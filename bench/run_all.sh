#!/usr/bin/env bash
# Builds the benchmarks (Release) and runs them all, then prints one summary table.
#   bench/run_all.sh [--v3] [--no-torch] [--openblas] [--repeats N]
# --v3 also builds with -march=x86-64-v3 (AVX2+FMA) instead of -march=native and runs bench_step
# there. The PyTorch peer runs with the system's libblas.so.3 ("sysblas"; Debian's default is the
# netlib reference BLAS); --openblas also runs it with OpenBLAS, fetched with `apt-get download
# libopenblas0-pthread` and unpacked under the build folder (nothing is installed system-wide). Each measurement waits (up to QUIET_WAIT seconds, default 600) for the 1-minute load
# average to drop below QUIET_LOAD (default 1.0), since others may be compiling on this machine.
# Environment: BUILD_DIR (default <repo>/build-bench), JOBS (default 1), OUT (results folder).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD_DIR="${BUILD_DIR:-$ROOT/build-bench}"
BUILD_V3="${BUILD_DIR}-v3"
JOBS="${JOBS:-1}"
OUT="${OUT:-$BUILD_DIR/bench-results}"
QUIET_LOAD="${QUIET_LOAD:-0.3}"
QUIET_WAIT="${QUIET_WAIT:-600}"
V3=0
TORCH=1
OPENBLAS=0
REPEATS=7
while [[ $# -gt 0 ]]; do
  case "$1" in
    --v3) V3=1 ;;
    --no-torch) TORCH=0 ;;
    --openblas) OPENBLAS=1 ;;
    --repeats) REPEATS="$2"; shift ;;
    *) echo "usage: $0 [--v3] [--no-torch] [--openblas] [--repeats N]" >&2; exit 2 ;;
  esac
  shift
done

build() {  # build DIR [extra cmake args...]
  local dir="$1"; shift
  cmake -S "$ROOT" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" --target bench_alloc bench_step bench_conv -j"$JOBS"
}

busy_cpus() {  # CPUs kept busy by others over the next 3 seconds (from /proc/stat idle time)
  local a b
  a=($(head -1 /proc/stat))
  sleep 3
  b=($(head -1 /proc/stat))
  local total=0 i
  for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
  local idle=$((b[4] - a[4] + b[5] - a[5]))
  awk -v t="$total" -v i="$idle" -v n="$(nproc)" 'BEGIN { printf "%.2f", (t > 0 ? n * (t - i) / t : 0) }'
}

wait_for_quiet() {  # waits until others keep < QUIET_LOAD CPUs busy, or QUIET_WAIT runs out
  local waited=0 busy
  while :; do
    busy="$(busy_cpus)"
    if awk -v b="$busy" -v limit="$QUIET_LOAD" 'BEGIN { exit !(b < limit) }'; then
      echo "(${busy} CPUs busy with other work, load $(cut -d' ' -f1-3 /proc/loadavg), when starting)"
      return
    fi
    if (( waited >= QUIET_WAIT )); then
      echo "(still ${busy} CPUs busy, load $(cut -d' ' -f1-3 /proc/loadavg), after ${QUIET_WAIT}s; measuring anyway)"
      return
    fi
    waited=$((waited + 3))
  done
}

mkdir -p "$OUT"
rm -f "$OUT"/*.txt
build "$BUILD_DIR"
if (( V3 )); then
  build "$BUILD_V3" -DFITBENCH_NATIVE=OFF -DCMAKE_CXX_FLAGS=-march=x86-64-v3
fi

echo "== bench_alloc"
"$BUILD_DIR/bench/bench_alloc" | tee "$OUT/alloc.txt"

echo "== bench_step (-march=native)"
wait_for_quiet
"$BUILD_DIR/bench/bench_step" --repeats "$REPEATS" | tee "$OUT/step_native.txt"

echo "== bench_conv (-march=native)"
wait_for_quiet
"$BUILD_DIR/bench/bench_conv" --repeats "$REPEATS" | tee "$OUT/conv_native.txt"

if (( V3 )); then
  echo "== bench_step (-march=x86-64-v3)"
  wait_for_quiet
  "$BUILD_V3/bench/bench_step" --repeats "$REPEATS" | tee "$OUT/step_x86-64-v3.txt"
fi

openblas_dir() {  # prints the folder holding OpenBLAS's libblas.so.3, fetching it if needed
  local root="$BUILD_DIR/openblas"
  local lib="$root/usr/lib/x86_64-linux-gnu/openblas-pthread"
  if [[ ! -e "$lib/libblas.so.3" ]]; then
    mkdir -p "$root"
    (cd "$root" && apt-get download libopenblas0-pthread >/dev/null 2>&1 &&
      dpkg-deb -x libopenblas0-pthread_*.deb "$root") || return 1
  fi
  echo "$lib"
}

if (( TORCH )); then
  if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    echo "== torch_peer (system BLAS)"
    wait_for_quiet
    /usr/bin/python3 "$ROOT/bench/torch_peer.py" --repeats "$REPEATS" | tee "$OUT/torch_sysblas.txt"
    echo "== torch_peer --cnn (system BLAS)"
    wait_for_quiet
    /usr/bin/python3 "$ROOT/bench/torch_peer.py" --repeats "$REPEATS" --cnn |
      tee "$OUT/torch_cnn_sysblas.txt"
    if (( OPENBLAS )); then
      if lib="$(openblas_dir)"; then
        for t in 1 2; do
          echo "== torch_peer (OpenBLAS, $t thread(s))"
          wait_for_quiet
          # PyTorch's OpenMP threads spin after each parallel region and starve OpenBLAS's own
          # threads (2 threads measured at half the 1-thread speed): let them sleep instead.
          OMP_WAIT_POLICY=PASSIVE OPENBLAS_NUM_THREADS=$t \
            LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
            /usr/bin/python3 "$ROOT/bench/torch_peer.py" --repeats "$REPEATS" --threads "$t" |
            tee "$OUT/torch_openblas_$t.txt"
        done
      else
        echo "== torch_peer with OpenBLAS skipped: apt-get download libopenblas0-pthread failed"
      fi
    fi
  else
    echo "== torch_peer skipped: /usr/bin/python3 cannot import torch (apt-get install -y python3-torch)"
  fi
fi

echo
echo "== summary ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs))"
/usr/bin/python3 "$ROOT/bench/summarize.py" "$OUT"
