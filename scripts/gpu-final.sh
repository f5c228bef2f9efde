#!/usr/bin/env bash
# The closing GPU run: the whole suite, the CLI on every GPU, compute-sanitizer on every family.
# Usage (device tool, carry: ["build-carry.tgz"]): scripts/gpu-final.sh
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader | tee "$out/gpus.txt"
cd /work/main/build
ctest --output-on-failure -j1 > "$out/ctest.log" 2>&1; echo "ctest rc=$?"
export TILEMM_CACHE=/tmp/final.db
./tilemm-tune --device all --sizes 512,1024 --force --json > "$out/device-all.json" 2> "$out/device-all.err"; echo "device-all rc=$?"
./tilemm-tune --device all --sizes 512,1024 > "$out/device-all.txt" 2>&1
for tool in memcheck racecheck synccheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 ./tests/test_gpu_correctness \
    --gtest_filter='*96x80x72' > "$out/sanitizer-$tool.log" 2>&1; echo "sanitizer $tool rc=$?"
done
grep -E "tests passed|tests failed|Total Test|\(Failed\)|\(Skipped\)" "$out/ctest.log" | tail -12
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY" "$out"/sanitizer-*.log
head -3 "$out/device-all.txt"; grep -c '"winner"' "$out/device-all.json"
