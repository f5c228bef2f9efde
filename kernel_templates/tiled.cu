// tiled: the textbook shared-memory tile. A block of TILE x TILE threads computes a TILE x TILE
// block of C; each step stages one TILE x TILE tile of A and of B in shared memory so that every
// element loaded from global memory is used TILE times.
//
// PAD adds PAD floats to each shared row, which should not pay: As[ty][k] is a broadcast and
// Bs[k][tx] reads a row, so there is no bank conflict to remove, and an odd row stride stops 128-bit
// shared loads. It stays in the space so the tuner
// measures that instead of assuming it.
//
// Out-of-range elements of the edge tiles are loaded as zeros, so every M, N, K >= 0 is correct.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME tiled
#endif
#ifndef TILE
#define TILE 32
#endif
#ifndef PAD
#define PAD 0
#endif
static_assert(TILE == 8 || TILE == 16 || TILE == 32,
              "TILE x TILE threads per block: 32 x 32 = 1024 is the CUDA maximum");
static_assert(PAD == 0 || PAD == 1, "PAD is 0 or 1 float per shared-memory row");

#include "epilogue.cuh"  // the scaled store of C

extern "C" __global__ void __launch_bounds__(TILE * TILE)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  __shared__ float As[TILE][TILE + PAD];
  __shared__ float Bs[TILE][TILE + PAD];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;

  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    const int ak = k0 + tx;
    const int bk = k0 + ty;
    As[ty][tx] = (row < M && ak < K) ? A[static_cast<long long>(row) * lda + ak] : 0.0f;
    Bs[ty][tx] = (bk < K && col < N) ? B[static_cast<long long>(bk) * ldb + col] : 0.0f;
    __syncthreads();  // the whole tile is in shared memory before anyone reads it
#pragma unroll
    for (int k = 0; k < TILE; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
    __syncthreads();  // nobody overwrites the tile while a slower warp still reads it
  }
  if (row < M && col < N) {
    float* c = C + static_cast<long long>(row) * ldc + col;
    *c = scale(alpha, acc, beta, c);
  }
}
