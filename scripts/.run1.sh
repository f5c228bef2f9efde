#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
cat $B/SOURCE
t0=$(date +%s)
$B/tests/test_gpu_bench --gtest_filter='StreamHold.*:GpuBench.*' 2>&1 | tail -4
# The exit test under load: 8 at once, 3 repetitions each, while the full suite runs.
( for i in $(seq 8); do $B/tests/test_autotune --gtest_filter='*AProcessEndingMidTuning*' --gtest_repeat=3 > $out/bg$i.log 2>&1; echo "bg$i rc=$?" ; done ) > $out/bg-summary.txt &
BGPID=$!
( for i in $(seq 4); do ( $B/tests/test_autotune --gtest_filter='*AProcessEndingMidTuning*' --gtest_repeat=3 > $out/bgp$i.log 2>&1; echo "bgp$i rc=$?" >> $out/bgp-summary.txt ) & done; wait ) &
PPID2=$!
ctest --test-dir $B -j8 --timeout 400 > $out/ctest.log 2>&1; echo "ctest rc=$?"
wait $BGPID $PPID2
tail -5 $out/ctest.log; grep -E "Failed|Timeout|\*\*\*" $out/ctest.log | head -20
cat $out/bg-summary.txt $out/bgp-summary.txt
grep -h -E "FAILED|Segmentation|signal|PASSED" $out/bg*.log | sort | uniq -c
echo "elapsed $(( $(date +%s) - t0 )) s"
