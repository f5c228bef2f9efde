#!/usr/bin/env bash
# Installs the Debian packages tilemm builds against (the CUDA toolkit itself is assumed present,
# with nvcc/NVRTC under /usr/local/cuda). Idempotent; needs root or sudo.
set -euo pipefail
packages=(cmake g++ make pkg-config libsqlite3-dev nlohmann-json3-dev libgtest-dev libgmock-dev
          libcli11-dev libbenchmark-dev python3-dev python3-venv libhiredis-dev redis-server)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd=sudo
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
if [ ! -x "${CUDAToolkit_ROOT:-/usr/local/cuda}/bin/nvcc" ] && ! command -v nvcc >/dev/null; then
  echo "install-deps: the CUDA toolkit (13.x, with NVRTC) is required; set CUDAToolkit_ROOT" >&2
  exit 1
fi
