#!/usr/bin/env bash
# Quick start 1: installs what is missing, builds fitbench (Release) and runs it: the seed
# example on two simulated devices through fitbench-cli. Arguments are passed to `fitbench-cli
# run` (e.g. --epochs 10).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
fitbench_install_deps
build="${FITBENCH_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j2 --target fitbench-cli
# Two simulated devices unless the environment already chooses (as the Keras script's XLA_FLAGS).
if [ -z "${FITBENCH_CPU_DEVICES:-}" ] && [[ "${XLA_FLAGS:-}" != *xla_force_host_platform_device_count* ]]; then
  export FITBENCH_CPU_DEVICES=2
fi
exec "$build/app/fitbench-cli" run "$root/resources/examples/seed.json" "$@"
