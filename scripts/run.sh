#!/usr/bin/env bash
# Quick start 1: installs what is missing, builds fitbench (Release) and opens the workbench
# window. Arguments go to the window (e.g. resources/examples/seed.json --devices 2 --run).
# Without a display it says so in one line and trains the seed example headless with
# fitbench-cli instead (on two simulated devices unless the environment chooses).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source "$root/scripts/deps.sh"
fitbench_install_deps
build="${FITBENCH_BUILD_DIR:-$root/build}"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DFITBENCH_UNITY=ON >/dev/null
cmake --build "$build" -j2 --target fitbench fitbench-cli
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ] || [ -n "${QT_QPA_PLATFORM:-}" ]; then
  exec "$build/app/fitbench" "$@"
fi
echo "fitbench: no display (DISPLAY is not set), so the window cannot open; running the seed example headless with fitbench-cli instead" >&2
# Two simulated devices unless the environment already chooses (as the Keras script's XLA_FLAGS).
if [ -z "${FITBENCH_CPU_DEVICES:-}" ] && [[ "${XLA_FLAGS:-}" != *xla_force_host_platform_device_count* ]]; then
  export FITBENCH_CPU_DEVICES=2
fi
exec "$build/app/fitbench-cli" run "$root/resources/examples/seed.json"
