#!/usr/bin/env bash
# Installs the Debian 12 packages fitbench needs, only those that are missing (idempotent).
# Sourced by run.sh and test.sh; needs root (or sudo) when something is missing.
set -euo pipefail

FITBENCH_PACKAGES=(cmake g++ make qt6-base-dev qt6-charts-dev libqt6opengl6-dev qt6-svg-dev libeigen3-dev
                   libtbb-dev nlohmann-json3-dev libhdf5-dev libzip-dev zlib1g-dev xvfb xauth python3-numpy python3-pil
                   python3-h5py openmpi-bin libopenmpi-dev clang libclang-rt-14-dev openbox xdotool
                   dataset-fashion-mnist)

fitbench_install_deps() {
  local missing=()
  for p in "${FITBENCH_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "fitbench: installing ${missing[*]}" >&2
  local sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}
