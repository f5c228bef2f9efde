#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
cp build-diag/dispatch_child $B/tests/dispatch_child
# load: 6 busy loops of the same child in parallel
for i in $(seq 6); do ( for j in 1 2 3; do d=$(mktemp -d); TILEMM_TUNE=background TILEMM_CACHE=$d/t.db $B/tests/dispatch_child --may-tune --linger-ms 3000 520x264x328 >/dev/null 2>&1; done ) & done
for i in $(seq 6); do
  d=$(mktemp -d)
  LD_PRELOAD=$here/build-diag/libatexit_log.so TILEMM_TUNE=background TILEMM_LOG=debug TILEMM_CACHE=$d/t.db $B/tests/dispatch_child --may-tune --linger-ms 3000 520x264x328 > $out/diag$i.log 2>&1
  echo "run $i rc=$?"
done
wait
for i in $(seq 6); do grep -E "atexit|process exit|fatal|compilations=|Segm|stopped at exit|tuning 520" $out/diag$i.log | grep -v "libcudart\|libstdc" | head -40; echo ----; done
