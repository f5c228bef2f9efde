#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
cat $B/SOURCE
t0=$(date +%s)
d=$(mktemp -d); chmod 700 $d; export TILEMM_CACHE=$d/p.db
timeout 200 $B/bench/tilemm-bench --precision highest,high,medium --ms-per-case 150 --csv $out/precision.csv > $out/precision.txt 2>&1; echo "bench rc=$? $(( $(date +%s) - t0 )) s"
grep -v "tuning\.\.\." $out/precision.txt | tail -60
t1=$(date +%s)
timeout 60 $B/bench/tilemm-bench --precision highest,high,medium --shapes 4096x4096x16,4096x4096x64,4096x4096x255 --ms-per-case 100 > $out/smallk.txt 2>&1; echo "smallk rc=$? $(( $(date +%s) - t1 )) s"
grep -v "tuning\.\.\." $out/smallk.txt | tail -25
t2=$(date +%s)
timeout 90 $B/tilemm-tune --precompile --cache $d/pc.db 2>&1 | tail -1; echo "precompile $(( $(date +%s) - t2 )) s"
unset TILEMM_CACHE; t3=$(date +%s)
timeout 300 ctest --test-dir $B -j8 --timeout 250 > $out/ctest.log 2>&1; echo "ctest rc=$? in $(( $(date +%s) - t3 )) s"
tail -3 $out/ctest.log; grep -E "\*\*\*Failed|Timeout|Not Run" $out/ctest.log | head
echo "elapsed $(( $(date +%s) - t0 )) s"
