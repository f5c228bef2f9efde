// naive: one thread computes one element of C straight from global memory.
// It is the baseline every other family is measured against, and the variant of last resort:
// it has no alignment or shared-memory needs, so it can run any valid problem.
//
// Contract shared by every family (see core/family_registry.hpp):
//   row-major C[M x N] = alpha * A[M x K] * B[K x N] + beta * C, leading dimensions in elements;
//   when beta == 0, C is never read (it may hold NaN); 64-bit offsets, so any element count works.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME naive
#endif
#ifndef BLOCK_X
#define BLOCK_X 16
#endif
#ifndef BLOCK_Y
#define BLOCK_Y 16
#endif

#include "epilogue.cuh"  // the scaled store of C

extern "C" __global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  // threadIdx.x walks a row of C so that a warp reads B and writes C coalesced.
  const int col = blockIdx.x * BLOCK_X + threadIdx.x;
  const int row = blockIdx.y * BLOCK_Y + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + static_cast<long long>(row) * lda;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc = fmaf(a[k], B[static_cast<long long>(k) * ldb + col], acc);
  float* c = C + static_cast<long long>(row) * ldc + col;
  *c = scale(alpha, acc, beta, c);
}
