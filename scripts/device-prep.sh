#!/usr/bin/env bash
# Shrinks build/ for the trip to the GPU machine (64 MiB limit): strips the executables.
set -euo pipefail
find "${1:-build}" -maxdepth 2 -type f -executable \
  \( -name "test_*" -o -name "tilemm-*" -o -name dispatch_child \) -exec strip {} \;
du -sh "${1:-build}"
