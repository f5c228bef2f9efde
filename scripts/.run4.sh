#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
cat $B/SOURCE
d=$(mktemp -d)
t0=$(date +%s)
$B/tilemm-tune --precompile --cache $d/b.db 2>&1 | tail -2
cp $d/b.db $d/e.db
echo "precompile $(( $(date +%s) - t0 )) s"
timeout 500 $B/bench/tilemm-tuning-regret --budgeted-cache $d/b.db --exhaustive-cache $d/e.db --shapes 30 --seed 1 2>&1 | tee $out/regret.txt | tail -45
echo "elapsed $(( $(date +%s) - t0 )) s"
