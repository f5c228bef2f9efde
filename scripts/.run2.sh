source scripts/device-env.sh; cd /work/main/build; head -1 SOURCE
TILEMM_TEST_VARIANTS='^gemv' ./tests/test_gpu_correctness --gtest_filter='*Skinny*:EveryVariant*:EveryFamily*' > $OUT/skinny-correct.log 2>&1; rc=$?; echo "correct rc=$rc"
grep -E "FAILED|PASSED|misaligned|Failure" $OUT/skinny-correct.log | head -8
[ $rc -eq 0 ] || exit 1
timeout 200 ./bench/tilemm-skinny-probe --ms-per-case 10 --shapes 16x4096x4096,4096x16x4096,8x4096x4096,4096x8x4096,16x256x4096,256x16x4096,1x4096x4096,4096x1x4096,1x8192x8192,8192x1x8192 > $OUT/probe.txt 2>&1; echo probe rc=$?
d=$(mktemp -d); chmod 700 $d; export TILEMM_CACHE=$d/t.db
s=$(date +%s%N); ./tilemm-tune --precompile > $OUT/precompile.txt 2>&1; echo "precompile rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"; cat $OUT/precompile.txt
s=$(date +%s%N); ./tilemm-tune --sizes 512,1024,4096 > $OUT/tune-main.txt 2>&1; echo "tune 512,1024,4096 rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"
s=$(date +%s%N); ./tilemm-tune --sizes 1000,2048,3000,4097,8192 > $OUT/tune-rest.txt 2>&1; echo "tune rest rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"
./tilemm-tune --export $OUT/preloaded.json; echo export rc=$?
grep -h "winner" $OUT/tune-main.txt $OUT/tune-rest.txt | cut -c1-150
