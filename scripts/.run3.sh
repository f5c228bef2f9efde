source scripts/device-env.sh; cd /work/main/build; head -1 SOURCE
s=$(date +%s%N); ctest --output-on-failure -j8 > $OUT/ctest.log 2>&1; echo "ctest rc=$? $(( ($(date +%s%N) - s) / 1000 ))000 us"
grep -E "tests passed|tests failed|\(Failed\)|Timeout" $OUT/ctest.log | tail -12
grep -E "EveryEntryPointMatchesFloat64" $OUT/ctest.log | grep -E "Passed|Failed" | head
export TILEMM_CACHE=$(mktemp -d)/b.db
timeout 120 ./bench/tilemm-bench --ms-per-case 60 --csv $OUT/bench.csv > $OUT/bench.txt 2>&1; echo bench rc=$?; tail -12 $OUT/bench.txt | cut -c1-170
for spec in "memcheck 80 EveryFamily.*:SkinnyFamily.SplitResultsRepeatBitForBit" "racecheck 50 SkinnyFamily.SplitResultsRepeatBitForBit" "synccheck 40 SkinnyFamily.SplitResultsRepeatBitForBit"; do set -- $spec; timeout $2 compute-sanitizer --tool $1 --error-exitcode 9 ./tests/test_gpu_correctness --gtest_filter="$3" > $OUT/san-$1.log 2>&1; echo "sanitizer $1 rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|PASSED\|FAILED' $OUT/san-$1.log | tr '\n' ' ')"; done
