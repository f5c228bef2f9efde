#!/usr/bin/env bash
# Tunes the standard shape set on this GPU from an empty cache, exports it (the preloaded file
# of cache/preloaded/ is this export), and benchmarks the winners against cuBLAS.
# Usage (device tool, carry: ["build-carry.tar.xz"]): scripts/gpu-tune-bench.sh [ms-per-case]
# Writes under $OUT: tune-*.txt (every candidate's timing), preloaded.json, bench.csv, bench.txt.
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
cd /work/main/build
# In a private folder: directly in /tmp, which others can write, the cache would be shared and
# its CUBINs never loaded (docs/cache-format.md#what-the-cache-trusts).
TILEMM_CACHE=$(mktemp -d)/tune-bench.db
export TILEMM_CACHE
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
# The issue's tuning-time target is for these three, from an empty cache.
start=$(date +%s%N)
./tilemm-tune --sizes 512,1024,4096 > "$out/tune-main.txt" 2>&1; echo "tune 512,1024,4096 rc=$?"
echo "wall $(( ($(date +%s%N) - start) / 1000000 )) ms" | tee -a "$out/tune-main.txt"
./tilemm-tune --sizes 1000,2048,3000,4097,8192 > "$out/tune-rest.txt" 2>&1; echo "tune rest rc=$?"
./tilemm-tune --export "$out/preloaded.json"; echo "export rc=$?"
./bench/tilemm-bench --sizes 512,1000,1024,2048,3000,4096,4097,8192 --ms-per-case "${1:-150}" \
  --csv "$out/bench.csv" > "$out/bench.txt" 2>&1; echo "bench rc=$?"
# compute-sanitizer on one variant of each family, off every tile (issue: memcheck and racecheck
# clean on a representative of each family), the concurrent split-K streams test, and the
# cluster split-K test (distributed shared memory, 2 to 8 blocks per cluster).
for tool in memcheck racecheck synccheck; do
  timeout 180 compute-sanitizer --tool $tool --error-exitcode 9 ./tests/test_gpu_correctness \
    --gtest_filter='EveryFamily.*:SplitK.*:ClusterK.*' > /tmp/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED' /tmp/sanitizer-$tool.log | tr '\n' ' ')"
  { echo "=== compute-sanitizer --tool $tool"; cat /tmp/sanitizer-$tool.log; } >> "$out/sanitizer.log"
done
grep -h "winner\|^wall" "$out"/tune-*.txt | cut -c1-170
tail -30 "$out/bench.txt"
