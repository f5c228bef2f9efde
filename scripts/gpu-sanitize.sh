#!/usr/bin/env bash
# compute-sanitizer over the GPU test binaries, three groups at once on one GPU, each bounded.
# Usage (device tool, carry: ["build-carry"]): scripts/gpu-sanitize.sh [tool] [seconds]
# Writes $OUT/sanitize-<tool>-<group>.log; prints each group's exit code and error summaries.
set -uo pipefail
here=$(pwd)
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
[ -e /work/main/build ] || ln -s "$here/build-carry" /work/main/build
out=${OUT:-/tmp/out}; mkdir -p "$out"
tool=${1:-memcheck}; limit=${2:-420}
cd /work/main/build
export TILEMM_CACHE=/tmp/sanitize-cache.db
san() { timeout "$limit" compute-sanitizer --tool "$tool" --error-exitcode 9 "$@"; }
group() {  # name, then commands separated by ';;'
  local name=$1; shift
  { for cmd in "$@"; do echo "=== $cmd"; eval "san $cmd"; echo "=== rc=$?"; done; } > "$out/sanitize-$tool-$name.log" 2>&1
}
group kernels "./tests/test_gpu_correctness" &
group api "./tests/test_blas_api" "./tests/test_arguments" "./tests/c_api_smoke" \
  "./tests/test_large_problems --gtest_filter='*LargeC'" &
# The tilemm-tune test that runs deliberately faulty kernels is left out: memcheck reports them.
group tuning "./tests/test_autotune" "./tests/test_tune_cli_gpu --gtest_filter='-*Survives*'" &
wait
for f in "$out"/sanitize-"$tool"-*.log; do
  echo "--- $(basename "$f")"; grep -E "^=== |ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$f"
done
