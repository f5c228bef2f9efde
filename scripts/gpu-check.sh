#!/usr/bin/env bash
# The one command run on the H200 through the device tool (build here, carry build/):
#   scripts/gpu-check.sh [ctest args...]
# CMake wrote absolute paths into build/, so the checkout is made visible at the path it was
# built at. Full logs go to $OUT; the last lines printed are the short summary.
set -uo pipefail
here=$(pwd)
built_at=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' build/CMakeCache.txt)
if [ "$built_at" != "$here" ] && [ ! -e "$built_at" ]; then
  mkdir -p "$(dirname "$built_at")" && ln -s "$here" "$built_at"
fi
out=${OUT:-/tmp/tilemm-out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
cd "$built_at/build" || exit 1
ctest --output-on-failure -j1 "$@" > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Skipped|\(Failed\)|\*\*\*" "$out/ctest.log" | tail -20
exit $rc
