#!/usr/bin/env bash
# compute-sanitizer over every test of the GPU test binaries, one process per test, many at once:
# the tools' cost is mostly host-side (instrumenting each loaded module, checking each launch),
# so one test per process spreads it over the CPU cores where one process per binary would not
# finish racecheck in a device call.
# Usage (device tool, carry: ["build-carry"]):
#   scripts/gpu-sanitize-all.sh [tool] [seconds per test] [jobs] [seconds in all] [filter regex]
# Each test's line (exit code, seconds, the tool's summary) goes to
# $OUT/sanitize-all-<tool>-summary.txt as soon as it ends, its output to
# $OUT/sanitize-all-<tool>.log; tests still running when the overall deadline comes are killed
# and listed as such, so a device call that runs out of time still reports what finished.
#
# racecheck of the whole suite in two device calls (each test that tunes took 230-330 s under
# racecheck; everything else, with tuning off, is the EveryVariant groups and short tests):
#   SANITIZE_TUNE_OFF_EXCEPT=CApiOnDevice SANITIZE_EXCLUDE='test_autotune|test_tune_cli_gpu' \
#     scripts/gpu-sanitize-all.sh racecheck 560 14 560
#   scripts/gpu-sanitize-all.sh racecheck 560 14 560 'test_autotune|test_tune_cli_gpu|CApiOnDevice'
set -uo pipefail
here=$(pwd)
[ -e /work/main ] || { mkdir -p /work && ln -s "$here" /work/main; }
[ -e /work/main/build ] || ln -s "$here/build-carry" /work/main/build
out=${OUT:-/tmp/out}; mkdir -p "$out"
tool=${1:-racecheck}; limit=${2:-540}; jobs=${3:-14}; total=${4:-540}; only=${5:-.}
work=$(mktemp -d)
cd /work/main/build

# Left out, with the reason in the report: the tilemm-tune test that runs deliberately faulty
# kernels (an out-of-bounds write and an endless loop, which the tools rightly report), and the
# 8.8 GB A of LargeA (the tools' shadow memory for it does not fit beside the other jobs).
exclude='TuneCliGpu.SurvivesACandidateThatCrashesTheContextAndOneThatHangs|/LargeProblem.*LargeA'
# SANITIZE_EXCLUDE=<regex> leaves out more, to split the suite over several device calls.
exclude="$exclude${SANITIZE_EXCLUDE:+|$SANITIZE_EXCLUDE}"
: > "$work/list"
for bin in tests/test_gpu_correctness tests/test_autotune tests/test_blas_api tests/test_arguments \
           tests/test_large_problems tests/test_tune_cli_gpu; do
  "$bin" --gtest_list_tests | awk -v bin="$bin" '
    /^[^ ]/ { suite = $1; next }
    { print bin " " suite $1 }' >> "$work/list"
done
echo "tests/c_api_smoke -" >> "$work/list"
# EveryVariant's shapes share one process per group: each process compiles the ~220 variants
# (~1 CPU-second each) before it runs any, so one process per shape would compile them 18 times.
groups=${SANITIZE_EVERYVARIANT_GROUPS:-3}
grep 'EveryVariant\.' "$work/list" | awk -v g="$groups" '
  { f[NR % g] = (f[NR % g] == "" ? "" : f[NR % g] ":") $2; bin = $1 }
  END { for (i in f) print bin " " f[i] }' > "$work/grouped"
{ cat "$work/grouped"; grep -v 'EveryVariant\.' "$work/list"; } > "$work/list.new"
mv "$work/list.new" "$work/list"
grep -Ev "$exclude" "$work/list" | grep -E "$only" > "$work/run"
# SANITIZE_ORDER=reverse starts with the quick tests, for a call too short to finish them all.
if [ "${SANITIZE_ORDER:-}" = reverse ]; then tac "$work/run" > "$work/run.r" && mv "$work/run.r" "$work/run"; fi
echo "$(wc -l < "$work/run") tests, $(grep -Ec "$exclude" "$work/list") left out: $exclude"

# The tuning tests still tune, but time each candidate with 6 launches instead of 23 or more:
# under the tools every launch is slow, and which candidate wins does not matter here.
export TILEMM_TUNE_EFFORT=${TILEMM_TUNE_EFFORT:-quick}
summary="$out/sanitize-all-$tool-summary.txt"
logs="$out/sanitize-all-$tool.log"
: > "$summary"; : > "$logs"
# SANITIZE_TUNE_OFF_EXCEPT=<regex>: every test that does not match runs with TILEMM_TUNE=off.
# Tuning a missed shape launches ~220 candidates ~25 times each, which under racecheck took
# 230-330 s per test (measured); with tuning off a test runs the kernels it dispatches to, and
# EveryVariant runs every variant anyway. The tests about tuning itself match the regex.
run_one() {  # binary, test name ("-" for a plain program)
  local bin=$1 name=$2 log
  log="$work/$(echo "$bin $name" | md5sum | cut -c1-16).log"  # grouped names exceed NAME_MAX
  local filter=()
  [ "$name" != "-" ] && filter=(--gtest_filter="$name")
  local start=$(date +%s)
  echo "started $bin $name" > "$log.running"
  local tune=${TILEMM_TUNE:-}
  if [ -n "${SANITIZE_TUNE_OFF_EXCEPT:-}" ] && ! echo "$bin $name" | grep -Eq "$SANITIZE_TUNE_OFF_EXCEPT"; then
    tune=off
  fi
  TILEMM_TUNE=$tune TILEMM_CACHE="$work/cache-$$-$RANDOM.db" timeout "$limit" \
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" "${filter[@]}" > "$log" 2>&1
  local rc=$?
  # A test that makes no CUDA call (argument checks) passes, but the tool exits 255 for it.
  if [ $rc = 255 ] && grep -q "terminated before first instrumented API call" "$log" &&
     grep -q "^\[  PASSED  \] 1 test" "$log"; then rc=cpu; fi
  [ "$tune" = off ] && name="$name (TILEMM_TUNE=off)"
  rm -f "$log.running"
  # flock: lines and logs of tests that end together must not interleave.
  flock "$summary" bash -c 'printf "%-4s %5ss  %-90s %s\n" "$1" "$2" "$3" "$4" >> "$5";
    { echo "=== $3 (rc $1)"; cat "$6"; } >> "$7"' _ "$rc" "$(( $(date +%s) - start ))" \
    "$bin $name" "$(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" "$summary" \
    "$log" "$logs"
}
export -f run_one
export tool limit work summary logs
# In list order: the slow ones (every variant at a shape, tuning) come first.
timeout "$total" xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1"' < "$work/run"
echo "deadline rc=$? (124: the overall deadline of ${total}s stopped it)"
for f in "$work"/*.running; do [ -e "$f" ] && echo "UNFINISHED $(cat "$f")" >> "$summary"; done
# The runners first, so that a test killed here is not also recorded as failed.
pkill -f 'run_one' 2>/dev/null; pkill -f compute-sanitizer 2>/dev/null; sleep 1
done_n=$(grep -vc UNFINISHED "$summary"); cut_n=$(grep -c UNFINISHED "$summary")
echo "finished: $done_n of $(wc -l < "$work/run"); cut off: $cut_n; not started: $(( $(wc -l < "$work/run") - done_n - cut_n ))"
echo "exit codes: $(grep -v UNFINISHED "$summary" | awk '{print $1}' | sort | uniq -c | tr '\n' ' ')"
grep -Ev '^(0|cpu) ' "$summary" || echo "every finished test exited 0 (cpu: passed without a CUDA call)"
echo "slowest:"; grep -v UNFINISHED "$summary" | sort -k2 -n | tail -n 5
