#!/usr/bin/env bash
# The measurements that the results page keeps for the random shapes, the first calls and the
# standard sizes, one part per device call (each fits the device tool's 600 s):
#   scripts/gpu-targets.sh sweep SEED [N]     tilemm-bench --random N (48) --seed SEED, from an
#                                             empty cache: vendor candidates on, then own only
#   scripts/gpu-targets.sh background SEED    --precompile, then tilemm-background-bench four
#                                             times on that cache (the file changes between runs;
#                                             the fourth calls the first one's shapes again)
#   scripts/gpu-targets.sh standard [MS]      tilemm-bench --precision highest,high,medium on the
#                                             shipped preloaded results, MS per case (40)
#   scripts/gpu-targets.sh profile SHAPES     tunes SHAPES (MxNxK,...) with own kernels only, then
#                                             profiles tilemm-bench's kernels on them with ncu and
#                                             prints each kernel's time, throughputs, occupancy
#                                             and stalls (scripts/ncu_summary.py)
# The background runs log at debug level: a call over 5 ms then has the resolution's step times
# ("gemm() resolved ... in X ms: ..."), or none where it was not a resolution.
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
    # Run 4 calls run 1's shapes again: a new process whose cache holds their winners, vendor
    # ones among them, which its callers must not wait to load.
    for run in 1 2 3 4; do
      TILEMM_LOG=debug timeout 120 ./bench/tilemm-background-bench --cache "$scratch/bg.db" \
        --random 3 --seed $((seed + (run == 4 ? 1 : run))) $([ $run = 4 ] && echo --again) \
        > "$out/background-$run.txt" 2>&1
      echo "background run $run rc=$?"
      grep -E "first library call|p99" "$out/background-$run.txt"
      # The slowest resolutions of the run, with their steps.
      grep -E "gemm\(\) resolved" "$out/background-$run.txt" |
        awk '{for (i = 1; i < NF; ++i) if ($i == "in" && $(i + 1) ~ /^[0-9.]+$/) { print $(i + 1), $0; break }}' |
        sort -rn | head -3 | cut -d' ' -f2-
    done
    ;;
  standard)
    TILEMM_CACHE="$scratch/std.db" timeout 580 ./bench/tilemm-bench \
      --precision highest,high,medium --ms-per-case "${2:-40}" --csv "$out/standard.csv" \
      > "$out/standard.txt" 2>&1
    echo "standard rc=$?"
    grep -v "^  \|tuning\.\.\." "$out/standard.txt" | tail -40
    ;;
  profile)
    shapes=${2:?usage: gpu-targets.sh profile MxNxK[,MxNxK...]}
    TILEMM_CACHE="$scratch/profile.db" timeout 200 ./bench/tilemm-bench --no-vendor --shapes "$shapes" \
      --ms-per-case 20 > "$out/profile-bench.txt" 2>&1
    echo "bench rc=$?"
    grep -v "^  \|tuning\.\.\." "$out/profile-bench.txt" | tail -12
    # Tuned now: a second run per shape only times, and ncu profiles its kernels (tilemm's winner,
    # cuBLAS's, the textbook tile's, the bench's own fills), the first 150 launches.
    for shape in ${shapes//,/ }; do
      TILEMM_CACHE="$scratch/profile.db" timeout 200 ncu --csv --page raw --launch-count 150 \
        --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats \
        ./bench/tilemm-bench --no-vendor --shapes "$shape" --ms-per-case 1 \
        --csv "$scratch/unused.csv" > "$out/ncu-$shape.csv" 2> "$scratch/ncu.err"
      echo "ncu $shape rc=$?"
      tail -2 "$scratch/ncu.err"
      python3 "$here/scripts/ncu_summary.py" "$out/ncu-$shape.csv"
    done
    ;;
  *)
    sed -n '2,17p' "$0" >&2
    rm -rf "$scratch"
    exit 2
    ;;
esac
rm -rf "$scratch"
