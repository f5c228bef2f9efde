#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
for i in $(seq 6); do ( for j in 1 2 3 4; do d=$(mktemp -d); TILEMM_TUNE=background TILEMM_CACHE=$d/t.db $B/tests/dispatch_child --may-tune --linger-ms 3000 520x264x328 >/dev/null 2>&1; echo "load rc=$?" >> $out/load.txt; done ) & done
for i in $(seq 10); do
  d=$(mktemp -d)
  LD_PRELOAD=$here/build-diag/libatexit_log.so TILEMM_TUNE=background TILEMM_LOG=debug TILEMM_CACHE=$d/t.db $B/tests/dispatch_child --may-tune --linger-ms $((1500 + 300*i)) 520x264x328 > $out/diag$i.log 2>&1
  echo "run $i rc=$?"
done
wait
sort $out/load.txt | uniq -c
for i in $(seq 10); do echo "== $i"; grep -v "^\[atexit" $out/diag$i.log | grep -E "process exit|fatal|compilations=|stopped at exit" | head -8; grep "^\[atexit" $out/diag$i.log | awk '{print $4, $5}' | sort | uniq -c | sort -rn | sed -n 2,8p; done
$B/tests/test_autotune --gtest_filter='*AProcessEndingMidTuning*' --gtest_repeat=2 2>&1 | grep -E "OK|FAILED" | head
$B/tests/test_large_problems --gtest_filter="*LargeA*" 2>&1 | tail -15
