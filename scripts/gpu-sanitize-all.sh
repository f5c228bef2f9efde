#!/usr/bin/env bash
# compute-sanitizer over every test of the GPU test binaries, one process per test, many at once:
# the tools' cost is mostly host-side (instrumenting each loaded module, checking each launch),
# so one test per process spreads it over the CPU cores where one process per binary would not
# finish racecheck in a device call.
# Usage (device tool, carry: ["build-carry"]): scripts/gpu-sanitize-all.sh [tool] [seconds] [jobs]
# Writes $OUT/sanitize-all-<tool>.log (every test's output, in order) and prints one line per
# test: its exit code, seconds, and the tool's summary line.
set -uo pipefail
here=$(pwd)
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
[ -e /work/main/build ] || ln -s "$here/build-carry" /work/main/build
out=${OUT:-/tmp/out}; mkdir -p "$out"
tool=${1:-racecheck}; limit=${2:-540}; jobs=${3:-14}
work=$(mktemp -d)
cd /work/main/build

# Left out, with the reason in the report: the tilemm-tune test that runs deliberately faulty
# kernels (an out-of-bounds write and an endless loop, which the tools rightly report), and the
# 8.8 GB A of LargeA (the tools' shadow memory for it does not fit beside the other jobs).
exclude='TuneCliGpu.SurvivesACandidateThatCrashesTheContextAndOneThatHangs|/LargeProblem.*LargeA'
: > "$work/list"
for bin in tests/test_gpu_correctness tests/test_autotune tests/test_blas_api tests/test_arguments \
           tests/test_large_problems tests/test_tune_cli_gpu; do
  "$bin" --gtest_list_tests | awk -v bin="$bin" '
    /^[^ ]/ { suite = $1; next }
    { print bin " " suite $1 }' >> "$work/list"
done
echo "tests/c_api_smoke -" >> "$work/list"
grep -Ev "$exclude" "$work/list" > "$work/run"
echo "$(wc -l < "$work/run") tests, $(grep -Ec "$exclude" "$work/list") left out: $exclude"

run_one() {  # binary, test name ("-" for a plain program)
  local bin=$1 name=$2 log
  log="$work/$(echo "$bin.$name" | tr '/' '_').log"
  local filter=()
  [ "$name" != "-" ] && filter=(--gtest_filter="$name")
  local start=$(date +%s)
  TILEMM_CACHE="$work/cache-$$-$RANDOM.db" timeout "$limit" compute-sanitizer --tool "$tool" \
    --error-exitcode 9 "$bin" "${filter[@]}" > "$log" 2>&1
  local rc=$?
  printf '%-4s %5ss  %-90s %s\n' "$rc" "$(( $(date +%s) - start ))" "$bin $name" \
    "$(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" >> "$work/summary"
}
export -f run_one
export tool limit work
# In list order: the slow ones (every variant at a shape, tuning) come first.
xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"' < "$work/run"

for f in "$work"/*.log; do echo "=== $(basename "$f")"; cat "$f"; done > "$out/sanitize-all-$tool.log"
sort -k3 "$work/summary" > "$out/sanitize-all-$tool-summary.txt"
echo "exit codes: $(awk '{print $1}' "$work/summary" | sort | uniq -c | tr '\n' ' ')"
grep -v '^0 ' "$out/sanitize-all-$tool-summary.txt" || echo "every test exited 0"
echo "slowest:"; sort -k2 -n "$work/summary" | tail -n 5
