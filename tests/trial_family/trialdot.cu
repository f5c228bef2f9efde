// trialdot: a test-only family (tests/test_family_registration.cpp) that shows what adding a
// family takes: this template and tests/trial_family/trialdot.cpp, found by the build's
// tilemm_kernel_families like the library's own. One thread per element of C in BLOCK x BLOCK
// blocks, the dot product over K unrolled UNROLL times. Never part of the library.
//
// Contract shared by every family: row-major C[M x N] = alpha * A[M x K] * B[K x N] + beta * C,
// leading dimensions in elements; when beta == 0, C is never read.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME trialdot
#endif
#ifndef BLOCK
#define BLOCK 16
#endif
#ifndef UNROLL
#define UNROLL 1
#endif
static_assert(UNROLL != 4 || BLOCK == 16, "UNROLL 4 only with 16 x 16 blocks");

extern "C" __global__ void __launch_bounds__(BLOCK * BLOCK)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  const int col = blockIdx.x * BLOCK + threadIdx.x;
  const int row = blockIdx.y * BLOCK + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * lda;
  float acc = 0.0f;
  int k = 0;
  for (; k + UNROLL <= K; k += UNROLL) {
#pragma unroll
    for (int u = 0; u < UNROLL; ++u)
      acc = fmaf(a[k + u], B[static_cast<long long>(k + u) * ldb + col], acc);
  }
  for (; k < K; ++k) acc = fmaf(a[k], B[static_cast<long long>(k) * ldb + col], acc);
  float* c = C + static_cast<long long>(row) * ldc + col;
  *c = (beta == 0.0f) ? alpha * acc : fmaf(alpha, acc, beta * *c);
}
