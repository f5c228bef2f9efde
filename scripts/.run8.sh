#!/usr/bin/env bash
source scripts/device-env.sh
cd /work/main
B=build
$B/tests/test_gpu_bench --gtest_filter='Shapes/GpuBenchVerifies.*' 2>&1 | grep -E "Failure|OK|FAILED|rfind|expected|Which is|reason" | head -30
$B/tests/test_autotune --gtest_filter='Autotune.TunesSeveralShapes*:Autotune.APartialRow*' 2>&1 | grep -E "Failure|OK \]|FAILED|Which is|Expected|actual|Actual" | head -30
