source scripts/device-env.sh; cd /work/main/build
(time TILEMM_TEST_VARIANTS='^gemv' ./tests/test_gpu_correctness --gtest_filter='*Skinny*:EveryVariant*:EveryFamily*' > $OUT/skinny-correct.log 2>&1; echo correct rc=$?) 2>&1 | grep -E "rc=|real"
grep -E "FAILED|PASSED" $OUT/skinny-correct.log | head -8
timeout 200 ./bench/tilemm-skinny-probe --shapes 16x4096x4096,4096x16x4096,8x4096x4096,4096x8x4096,16x256x4096,256x16x4096,1x4096x4096,4096x1x4096 --ms-per-case 10 > $OUT/probe.txt 2>&1; echo probe rc=$?
d=$(mktemp -d); chmod 700 $d; export TILEMM_CACHE=$d/t.db
s=$(date +%s%N); ./tilemm-tune --precompile > $OUT/precompile.txt 2>&1; echo "precompile rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"; cat $OUT/precompile.txt
s=$(date +%s%N); ./tilemm-tune --force --sizes 512,1024,4096 > $OUT/tune3.txt 2>&1; echo "tune3 rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"; grep -E "tuned in|winner" $OUT/tune3.txt | head -6
for i in 1 2 3; do for b in tilemm-dispatch-bench-2f5f8ed tilemm-dispatch-bench; do TILEMM_CACHE=$(mktemp -d)/d.db ./bench/$b --size 256 2>&1 | grep -E "warm dispatch|first gemm" | sed "s/^/$b: /"; done; done
