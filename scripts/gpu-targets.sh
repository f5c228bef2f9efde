#!/usr/bin/env bash
# The measurements that the results page keeps for the random shapes, the first calls and the
# standard sizes, one part per device call (each fits the device tool's 600 s):
#   scripts/gpu-targets.sh sweep SEED [N]     tilemm-bench --random N (48) --seed SEED, from an
#                                             empty cache: vendor candidates on, then own only
#   scripts/gpu-targets.sh background SEED    --precompile, then tilemm-background-bench three
#                                             times on that cache (the file changes between runs)
#   scripts/gpu-targets.sh standard [MS]      tilemm-bench --precision highest,high,medium on the
#                                             shipped preloaded results, MS per case (40)
# Device tool, carry: ["build-carry.tar.xz"] (scripts/make-carry.sh). Writes its logs under $OUT
# and prints their summaries.
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
cd /work/main/build || exit 1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu --format=csv,noheader | tee "$out/gpu.txt"
head -1 SOURCE
# Each cache in a private folder: one in /tmp itself is writable by others, so its CUBINs would
# never be loaded (docs/cache-format.md#what-the-cache-trusts).
scratch=$(mktemp -d)
part=${1:-}
case "$part" in
  sweep)
    seed=${2:?usage: gpu-targets.sh sweep SEED [N]}
    TILEMM_CACHE="$scratch/sweep.db" timeout 580 ./bench/tilemm-bench --random "${3:-48}" \
      --seed "$seed" --ms-per-case 20 > "$out/sweep-$seed.txt" 2>&1
    echo "sweep rc=$?"
    grep -E "^summary|below 0\.95|MISMATCH" "$out/sweep-$seed.txt"
    ;;
  background)
    seed=${2:?usage: gpu-targets.sh background SEED}
    timeout 200 ./tilemm-tune --precompile --cache "$scratch/bg.db" > "$out/precompile.txt" 2>&1
    echo "precompile rc=$?"
    # The first run opens the precompiled file as made; each later one opens it as the runs
    # before it left it.
    for run in 1 2 3; do
      timeout 120 ./bench/tilemm-background-bench --cache "$scratch/bg.db" --random 3 \
        --seed $((seed + run)) > "$out/background-$run.txt" 2>&1
      echo "background run $run rc=$?"
      grep -E "first library call|p99" "$out/background-$run.txt"
    done
    ;;
  standard)
    TILEMM_CACHE="$scratch/std.db" timeout 580 ./bench/tilemm-bench \
      --precision highest,high,medium --ms-per-case "${2:-40}" --csv "$out/standard.csv" \
      > "$out/standard.txt" 2>&1
    echo "standard rc=$?"
    grep -v "^  \|tuning\.\.\." "$out/standard.txt" | tail -40
    ;;
  *)
    sed -n '2,11p' "$0" >&2
    rm -rf "$scratch"
    exit 2
    ;;
esac
rm -rf "$scratch"
