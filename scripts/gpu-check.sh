#!/usr/bin/env bash
# The whole test suite on the GPU machine (device tool, carry: ["build-carry.tar.xz"], made here by
# scripts/make-carry.sh): scripts/gpu-check.sh [ctest args...]   (default: -j8)
# Full log in $OUT/ctest.log; the last lines printed are the short summary.
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
head -1 /work/main/build/SOURCE
cd /work/main/build || exit 1
[ $# -eq 0 ] && set -- -j8
ctest --output-on-failure "$@" > "$out/ctest.log" 2>&1
rc=$?
grep -E "tests passed|tests failed|Total Test|Skipped|\(Failed\)|\*\*\*" "$out/ctest.log" | tail -20
exit $rc
