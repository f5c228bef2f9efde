#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
cat $B/SOURCE
t0=$(date +%s)
ctest --test-dir $B -j8 --timeout 400 > $out/ctest.log 2>&1; echo "ctest rc=$? in $(( $(date +%s) - t0 )) s"
tail -3 $out/ctest.log; grep -E "\*\*\*Failed|Timeout" $out/ctest.log | head
d=$(mktemp -d)
$B/tilemm-tune --precompile --cache $d/c.db 2>&1 | tail -1
for i in 1 2; do s=$(date +%s%N); $B/tilemm-tune --force --sizes 512,1024,4096 --cache $d/c.db > $out/tune$i.txt 2>&1; echo "tune --force 512,1024,4096 rc=$? wall $(( ($(date +%s%N) - s) / 1000000 )) ms"; done
tail -6 $out/tune2.txt
$B/tilemm-tune --precompile --cache $d/bg.db > /dev/null 2>&1
$B/bench/tilemm-background-bench --cache $d/bg.db --seed 7 2>&1 | tail -8
TILEMM_CACHE=$(mktemp -d)/c.db $B/bench/tilemm-dispatch-bench --size 1024 --children 7 2>&1 | tail -12
for i in 1 2 3; do $B/tests/test_autotune --gtest_filter='*AProcessEndingMidTuning*' 2>&1 | grep -E "^\[ +(OK|FAILED) +\]"; done
echo "elapsed $(( $(date +%s) - t0 )) s"
