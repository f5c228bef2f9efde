#!/usr/bin/env bash
here=$(pwd); out=${OUT:-/tmp/out}; mkdir -p $out
mkdir -p /work/wt-21/build && tar -xzf build-21/build-carry.tgz -C /work/wt-21/build
cd /work/wt-21
B=build
cat $B/SOURCE
t0=$(date +%s)
TILEMM_TEST_VARIANTS='^tf32(w)?mma' timeout 200 $B/tests/test_gpu_correctness --gtest_filter='Shapes/EveryVariant.*:EveryFamily.*' > $out/corr.log 2>&1; echo "correctness rc=$? $(( $(date +%s) - t0 )) s"
grep -E "^\[ +(OK|FAILED) +\]" $out/corr.log | head -30; grep -m5 -E "wrong|Failure" -A3 $out/corr.log | head -30
timeout 60 $B/tests/test_precision_gpu 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure" | head
timeout 120 $B/tests/test_differential --gtest_filter='Modes/DifferentialPrecision.*' 2>&1 | grep -E "^\[ +(OK|FAILED|PASSED) +\]|Failure" | head
TILEMM_CACHE=/tmp/h10c.db timeout 250 $B/bench/tilemm-bench --precision highest,high,medium --shapes 4096x4096x4096,8192x8192x8192 --ms-per-case 150 --csv $out/h10c.csv 2>&1 | tail -30
TILEMM_CACHE=/tmp/h10c.db $B/tilemm-tune --list 2>&1 | tail -12
echo "elapsed $(( $(date +%s) - t0 )) s"
