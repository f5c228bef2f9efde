// faulty: test-only kernels that misbehave on purpose, to prove that tilemm-tune survives them
// (tests/test_tune_cli_gpu.cpp). Never part of the library: registered only by the
// tilemm-tune-faulty test binary.
//   MODE 0 writes 2^40 floats past C: an illegal address, the CUDA context is lost.
//   MODE 1 never returns.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME faulty
#endif
#ifndef MODE
#define MODE 0
#endif

extern "C" __global__ void TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* A,
                                              long long lda, const float* B, long long ldb,
                                              float beta, float* C, long long ldc) {
#if MODE == 0
  C[(1LL << 40) + threadIdx.x] = alpha;
#else
  volatile int spinning = 1;
  while (spinning) __nanosleep(1000);
#endif
}
