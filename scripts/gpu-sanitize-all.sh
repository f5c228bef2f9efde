#!/usr/bin/env bash
# compute-sanitizer over every test of the GPU test binaries, one process per job, many at once,
# spread over every GPU of the machine. The tools' cost is per launch and per shared-memory
# access, so the job list cuts the expensive tests into pieces of similar cost: EveryVariant runs
# each large shape on its own and the small shapes together, and each of those again in
# SANITIZE_EVERYVARIANT_SHARDS processes (TILEMM_TEST_VARIANT_SHARD=i/n: every n-th variant).
# Usage (device tool, carry: ["build-carry.tar.xz"]):
#   scripts/gpu-sanitize-all.sh [tool] [seconds per job] [jobs at once] [seconds in all] [regex]
# Only jobs whose line ("<binary> <gtest filter> [VAR=value...]") matches the regex run.
# Each job's line (exit code, seconds, GPU, the tool's summary) goes to
# $OUT/sanitize-all-<tool>-summary.txt as soon as it ends, its output to
# $OUT/sanitize-all-<tool>.log; jobs still running at the overall deadline are killed and listed
# as UNFINISHED, so a device call that runs out of time still reports what finished. The first
# line of the summary names the source the build came from (build-carry/SOURCE).
#
# Environment:
#   SANITIZE_TUNE_OFF_EXCEPT=<regex>  jobs that do not match run with TILEMM_TUNE=off: they then
#       run the kernels they dispatch to instead of tuning a missed shape (every candidate ~7
#       times); EveryVariant launches every variant anyway.
#   SANITIZE_EXCLUDE=<regex>          leave more jobs out.
#   SANITIZE_ORDER=reverse            quick jobs first.
#   SANITIZE_GPUS=<n>                 GPUs to spread over (default: those CUDA_VISIBLE_DEVICES
#       names, else all that nvidia-smi lists);
#       job slot s runs on the (s % n)-th of them, except jobs matching SANITIZE_ALL_GPUS
#       (default 'AnotherDevice'), which see every GPU the run may use.
#   SANITIZE_EVERYVARIANT_SHARDS=<n>  (default 8).
#   SANITIZE_LARGE_SHARDS=<n>         shards of each large EveryVariant shape (default: the above);
#       more of them make shorter jobs, which a device call's deadline cuts off less often.
#   SANITIZE_TAG=<word>               name the files sanitize-all-<tool>-<word>-*: two runs of one
#       tool beside each other (one per GPU, each with its CUDA_VISIBLE_DEVICES, and a regex that
#       splits the jobs between them).
#   SANITIZE_DONE=<file>              skip the jobs listed in an earlier call's
#       $OUT/sanitize-all-<tool>-clean.txt: copy that file into the repository (an untracked file
#       travels) and pass its path, to spread one suite over several device calls. Each clean job
#       is listed under a key: the hashes of its test program and of the programs and library it
#       starts (tilemm-tune, dispatch_child, tilemm-tune-faulty, libtilemm.so). A job is skipped
#       only where this build's key is the same, so a commit that changes one test program
#       re-runs that program's jobs alone. The new clean list includes the old one.
#
# Measured under racecheck on the H200 (one process, 1024x1024x1024, one variant): naive 0.5 s,
# splitk 128x128 s8 1 s, warptile 256x128 6 s, padded 256x128 6 s, tiled 8x8 20 s, tiled 32x32
# over 23 s; tuning costs ~0.05 s per launch besides. EveryVariant's four large shapes are ~10^9
# FMAs each, so they hold most of the suite's racecheck time.
set -uo pipefail
# shellcheck source=device-env.sh
source "$(dirname "$0")/device-env.sh"  # here, out; the carried build at /work/main/build
tool=${1:-racecheck}; limit=${2:-540}; jobs=${3:-14}; total=${4:-540}; only=${5:-.}
work=$(mktemp -d)
# Named from where the script was started; made absolute before the cd below.
if [ -n "${SANITIZE_DONE:-}" ]; then SANITIZE_DONE=$(realpath -- "$SANITIZE_DONE"); fi
cd /work/main/build
# The GPUs the jobs may use, comma-separated: those CUDA_VISIBLE_DEVICES names (nvidia-smi does not
# heed it, and a job's own CUDA_VISIBLE_DEVICES below would override it), else every GPU.
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then visible=$CUDA_VISIBLE_DEVICES
else visible=$(nvidia-smi --query-gpu=index --format=csv,noheader 2>/dev/null | paste -sd, -); fi
gpus=${SANITIZE_GPUS:-$(echo "$visible" | tr , '\n' | grep -c .)}
[ "${gpus:-0}" -ge 1 ] 2>/dev/null || gpus=1
all_gpus=${SANITIZE_ALL_GPUS:-AnotherDevice}

# Left out, with the reason in the report: the tilemm-tune test that runs deliberately faulty
# kernels (an out-of-bounds write and an endless loop, which the tools rightly report), and,
# unless one job runs at a time, the 8.8 GB A of LargeA (the tools' shadow memory for it does not
# fit beside the other jobs): run it alone with `... <tool> 560 1 560 LargeA`.
exclude='TuneCliGpu.SurvivesACandidateThatCrashesTheContextAndOneThatHangs'
if [ "$jobs" -gt 1 ]; then exclude="$exclude|/LargeProblem.*LargeA"; fi
exclude="$exclude${SANITIZE_EXCLUDE:+|$SANITIZE_EXCLUDE}"
: > "$work/tests"
for bin in tests/test_gpu_correctness tests/test_autotune tests/test_blas_api tests/test_arguments \
           tests/test_large_problems tests/test_tune_cli_gpu; do
  "$bin" --gtest_list_tests | awk -v bin="$bin" '
    /^[^ ]/ { suite = $1; next }
    { print bin " " suite $1 }' >> "$work/tests"
done
echo "tests/c_api_smoke -" >> "$work/tests"
shards=${SANITIZE_EVERYVARIANT_SHARDS:-8}
large_shards=${SANITIZE_LARGE_SHARDS:-$shards}
big='/(1000x1000x1000|1024x1024x1024|2049x31x4099)'
{
  # Every process compiles the variants of its shard (~1 CPU-second each), so the small shapes
  # share their processes; the large ones get their own.
  grep 'EveryVariant\.' "$work/tests" | awk -v big="$big" -v n="$shards" -v ln="$large_shards" '
    { bin = $1; if ($2 ~ big) large[++l] = $2; else small = (small == "" ? "" : small ":") $2 }
    END {
      for (j = 1; j <= l; ++j) for (i = 0; i < ln; ++i) print bin, large[j], "TILEMM_TEST_VARIANT_SHARD=" i "/" ln
      for (i = 0; i < n; ++i) print bin, small, "TILEMM_TEST_VARIANT_SHARD=" i "/" n
    }'
  costly='autotune|LargeProblem|CApiOnDevice|SplitK'
  grep -v 'EveryVariant\.' "$work/tests" | grep -E "$costly"
  grep -v 'EveryVariant\.' "$work/tests" | grep -Ev "$costly"
} > "$work/list"
grep -Ev "$exclude" "$work/list" | grep -E "$only" > "$work/run"
# What a job's result depends on besides its line: its test program, and what that program starts
# or loads (the tests link tilemm statically; the C API smoke test and the CLI tests do not).
helpers_key=$(cat tilemm-tune tests/dispatch_child tests/tilemm-tune-faulty libtilemm.so.* 2>/dev/null |
  sha256sum | cut -c1-12)
declare -A program_key
for bin in $(cut -d' ' -f1 "$work/run" | sort -u); do
  [ -f "$bin" ] || { echo "$bin: no such program in $(pwd); build it and carry the build" >&2; exit 2; }
  program_key[$bin]="$(sha256sum < "$bin" | cut -c1-12).$helpers_key"
done
# "<key> <job line>" for each job to run; the clean list holds these lines.
while read -r bin rest; do echo "${program_key[$bin]} $bin $rest"; done < "$work/run" > "$work/run.keyed"
# SANITIZE_DONE=<file>: the clean list of an earlier call; its jobs are not run again where the
# programs they ran are the same as here, so several device calls can share one suite.
if [ -n "${SANITIZE_DONE:-}" ]; then
  [ -r "$SANITIZE_DONE" ] || { echo "SANITIZE_DONE=$SANITIZE_DONE: no such file" >&2; exit 2; }
  grep -v '^#' "$SANITIZE_DONE" | grep . > "$work/done" || true  # an empty line would match all
  done_before=$(grep -Fxc -f "$work/done" "$work/run.keyed")
  grep -Fxv -f "$work/done" "$work/run.keyed" > "$work/run.left" || true
  mv "$work/run.left" "$work/run.keyed"
  echo "$done_before jobs clean in $SANITIZE_DONE with the same programs are not run again"
fi
mv "$work/run.keyed" "$work/run"  # from here on, each job's line starts with its key
if [ "${SANITIZE_ORDER:-}" = reverse ]; then tac "$work/run" > "$work/run.r" && mv "$work/run.r" "$work/run"; fi
echo "$(wc -l < "$work/run") jobs on $gpus GPU(s), $(grep -Ec "$exclude" "$work/list") left out: $exclude"
if [ ! -s "$work/run" ]; then echo "no job to run"; exit 0; fi

export TILEMM_TUNE_EFFORT=${TILEMM_TUNE_EFFORT:-quick}  # 6 timed launches per candidate, not 23+
report="$out/sanitize-all-$tool${SANITIZE_TAG:+-$SANITIZE_TAG}"  # where this run's files go
summary="$report-summary.txt"
# The keyed lines of the jobs that ended clean (exit 0, or no CUDA call), with a comment line per
# call naming the build's source: copied into the repository and passed back as SANITIZE_DONE, it
# resumes the run in a later call.
clean="$report-clean.txt"
{ [ -n "${SANITIZE_DONE:-}" ] && cat "$SANITIZE_DONE"
  echo "# $tool, $(date -u '+%F %T') UTC, $(cat SOURCE 2>/dev/null || echo 'source unknown')"; } > "$clean.tmp"
mv "$clean.tmp" "$clean"
logs="$report.log"
{
  echo "# compute-sanitizer --tool $tool, $(date -u '+%F %T') UTC, $(cat SOURCE 2>/dev/null || echo 'source unknown: no SOURCE file in the build')"
  nvidia-smi ${CUDA_VISIBLE_DEVICES:+-i "$CUDA_VISIBLE_DEVICES"} --query-gpu=index,name,driver_version \
    --format=csv,noheader | sed 's/^/# GPU /'
} > "$summary"
: > "$logs"
run_one() {  # key, binary, gtest filter ("-": a plain program), VAR=value settings for this job
  local key=$1 bin=$2 name=$3; shift 3
  local settings=("$@") extra=() line log
  line="$bin $name${1:+ $*}"
  log="$work/$(echo "$line" | md5sum | cut -c1-16).log"  # grouped names exceed NAME_MAX
  local filter=()
  [ "$name" != "-" ] && filter=(--gtest_filter="$name")
  local start=$(date +%s)
  echo "started $line" > "$log.running"
  if [ -n "${SANITIZE_TUNE_OFF_EXCEPT:-}" ] && ! echo "$line" | grep -Eq "$SANITIZE_TUNE_OFF_EXCEPT"; then
    extra+=(TILEMM_TUNE=off)
  fi
  local gpu=${CUDA_VISIBLE_DEVICES:-all}
  if [ "$gpus" -gt 1 ] && ! echo "$line" | grep -Eq "$all_gpus"; then
    # The slot's entry of the visible list; its index when SANITIZE_GPUS asks for more GPUs.
    gpu=$(echo "$visible" | cut -d, -f$(( SANITIZE_SLOT % gpus + 1 )))
    [ -n "$gpu" ] || gpu=$(( SANITIZE_SLOT % gpus ))
    extra+=(CUDA_VISIBLE_DEVICES=$gpu)
  fi
  env "${settings[@]}" "${extra[@]}" TILEMM_CACHE="$work/cache-$$-$RANDOM.db" timeout "$limit" \
    compute-sanitizer --tool "$tool" --error-exitcode 9 "$bin" "${filter[@]}" > "$log" 2>&1
  local rc=$?
  # A test that makes no CUDA call (argument checks) passes, but the tool exits 255 for it.
  if [ $rc = 255 ] && grep -q "terminated before first instrumented API call" "$log" &&
     grep -q "^\[  PASSED  \] 1 test" "$log"; then rc=cpu; fi
  # A skipped test exits 0 but checked nothing (the other-device test where one GPU is visible).
  if [ $rc = 0 ] && grep -q "^\[  SKIPPED \]" "$log"; then rc=skip; fi
  rm -f "$log.running"
  # flock: lines and logs of jobs that end together must not interleave.
  if [ "$rc" = 0 ] || [ "$rc" = cpu ]; then flock "$summary" bash -c 'echo "$1" >> "$2"' _ "$key $line" "$clean"; fi
  flock "$summary" bash -c 'printf "%-4s %5ss gpu %-3s %-100s %s\n" "$1" "$2" "$3" "$4" "$5" >> "$6";
    { echo "=== $4 (rc $1)"; cat "$7"; } >> "$8"' _ "$rc" "$(( $(date +%s) - start ))" "$gpu" \
    "$line${extra[*]:+ (${extra[*]})}" "$(grep -hE 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1)" \
    "$summary" "$log" "$logs"
}
export -f run_one
export tool limit work summary logs gpus visible all_gpus clean
# In list order: the costly jobs (EveryVariant's large shapes, tuning, large problems) first.
# timeout leads a process group of its own, and at the deadline signals all of it: xargs, the
# runners and their tools. Killing that group (and only it) afterwards also ends anything that
# ignored the signal, without touching another run of this script beside this one (two tools at
# once, one per GPU).
timeout "$total" xargs -P "$jobs" --process-slot-var=SANITIZE_SLOT -L 1 bash -c 'run_one "$@"' _ < "$work/run" &
group=$!
wait "$group"
echo "deadline rc=$? (124: the overall deadline of ${total}s stopped it)"
for f in "$work"/*.running; do [ -e "$f" ] && echo "UNFINISHED $(cat "$f")" >> "$summary"; done
kill -KILL -- "-$group" 2>/dev/null; sleep 1
results=$(grep -Ev '^(#|UNFINISHED)' "$summary")
done_n=$(printf '%s' "$results" | grep -c .); cut_n=$(grep -c '^UNFINISHED' "$summary")
echo "finished: $done_n of $(wc -l < "$work/run"); cut off: $cut_n; not started: $(( $(wc -l < "$work/run") - done_n - cut_n ))"
echo "exit codes: $(printf '%s\n' "$results" | awk 'NF {print $1}' | sort | uniq -c | tr '\n' ' ')"
printf '%s\n' "$results" | grep -Ev '^(0|cpu) ' | grep . || echo "every finished job exited 0 (cpu: passed without a CUDA call)"
echo "slowest:"; printf '%s\n' "$results" | sort -k2 -n | tail -n 5
