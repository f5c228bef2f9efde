#!/usr/bin/env bash
# The closing GPU run of a change: the whole suite, the benchmark on the shipped preloaded cache
# (no tuning: the winners a user gets), and compute-sanitizer on one variant of each family at a
# shape off every tile, plus the split-K and cluster split-K tests.
# Usage (device tool, carry: ["build-carry.tar.xz"]): scripts/gpu-final.sh [ms-per-case]
# Writes under $OUT: ctest.log, bench.txt, bench.csv, sanitizer-<tool>.log.
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
head -1 /work/main/build/SOURCE
cd /work/main/build || exit 1
ctest --output-on-failure -j8 > "$out/ctest.log" 2>&1; echo "ctest rc=$?"
# Empty, so every shape comes from the preloaded file; in a private folder, so it is not shared.
TILEMM_CACHE=$(mktemp -d)/final.db
export TILEMM_CACHE
timeout 200 ./bench/tilemm-bench --sizes 512,1000,1024,2048,3000,4096,4097,8192 --ms-per-case "${1:-150}" \
  --csv "$out/bench.csv" > "$out/bench.txt" 2>&1; echo "bench rc=$?"
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 ./tests/test_gpu_correctness \
    --gtest_filter='EveryFamily.*:SplitK.*:ClusterK.*' > "$out/sanitizer-$tool.log" 2>&1
  echo "sanitizer $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED' "$out/sanitizer-$tool.log" | tr '\n' ' ')"
done
grep -E "tests passed|tests failed|Total Test|Skipped|\(Failed\)|\*\*\*" "$out/ctest.log" | tail -12
grep -v "^  \|tuning\.\.\." "$out/bench.txt" | tail -26
