#!/usr/bin/env bash
# Quick start 2: installs what is missing, builds fitbench and runs the whole test suite with
# ctest, then again under AddressSanitizer + UndefinedBehaviorSanitizer.
# FITBENCH_QUICK=1 skips the sanitizer pass.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
fitbench_install_deps
export QT_QPA_PLATFORM=offscreen

run_suite() {  # build-dir, extra cmake args...
  local dir="$1"; shift
  echo "== fitbench: building in $dir $*"
  cmake -S "$root" -B "$dir" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
  cmake --build "$dir" -j2
  ctest --test-dir "$dir" --output-on-failure -j2 --timeout 900
}

run_suite "${FITBENCH_BUILD_DIR:-$root/build}"
if [ "${FITBENCH_QUICK:-0}" != "1" ]; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    run_suite "$root/build-asan" -DFITBENCH_SANITIZE=ON -DFITBENCH_NATIVE=OFF
fi
echo "== fitbench: all test suites passed"
