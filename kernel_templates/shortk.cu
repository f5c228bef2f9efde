// shortk: large outputs with a very short K (K <= KMAX, at most 32), at any alignment.
// With K of a few, C = alpha * A * B + beta * C is a stream of C: each element costs K multiply-
// adds and one store (and a load when beta != 0), so the kernel must write C at the memory's
// speed, not spend the time in a tiled kernel's K loop, shared-memory stages and barriers.
//
// A block of 256 threads (8 warps) owns TM rows and 128 columns of C. It stages its 128 columns
// of B (KMAX x 128, zeros beyond K) once; each lane then keeps the KMAX values of B of each of its
// 4 columns (lane, lane + 32, lane + 64, lane + 96) in registers. The block's TM x KMAX part of A
// sits in shared memory, and each warp walks its rows (warp, warp + 8, ...): per row, KMAX
// broadcast loads of A, 4 * KMAX FMAs and 4 stores, each a warp-wide run of 32 consecutive floats.
// Loads and stores are scalar and guarded, so every pointer alignment, leading dimension and edge
// is served; the runs of 128 bytes keep the stores coalesced whatever the alignment.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME shortk
#endif
#ifndef TM
#define TM 64
#endif
#ifndef KMAX
#define KMAX 16
#endif

#include "epilogue.cuh"  // the scaled store of C

namespace {
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;
constexpr int kColumns = 128;            // of C per block: 4 per lane
constexpr int kPerLane = kColumns / 32;
}  // namespace

static_assert(TM == 32 || TM == 64 || TM == 128, "TM (rows of C per block) is 32, 64 or 128");
static_assert(KMAX == 8 || KMAX == 16 || KMAX == 32, "KMAX (the longest K served) is 8, 16 or 32");

extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  __shared__ float As[TM][KMAX + 1];  // one float of padding: the staging stores do not conflict
  __shared__ float Bs[KMAX][kColumns];
  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int row0 = blockIdx.y * TM;
  const int col0 = blockIdx.x * kColumns;

  // B: row k of the block's columns, a warp reading 128 consecutive bytes at a time.
  for (int e = tid; e < KMAX * kColumns; e += kThreads) {
    const int k = e / kColumns;
    const int col = col0 + e % kColumns;
    Bs[k][e % kColumns] = (k < K && col < N) ? B[static_cast<long long>(k) * ldb + col] : 0.0f;
  }
  // A: the block's rows, K consecutive floats of each.
  for (int e = tid; e < TM * KMAX; e += kThreads) {
    const int r = e / KMAX;
    const int k = e % KMAX;
    const int row = row0 + r;
    As[r][k] = (k < K && row < M) ? A[static_cast<long long>(row) * lda + k] : 0.0f;
  }
  __syncthreads();  // both staged before anyone reads them

  float b[kPerLane][KMAX];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j)
#pragma unroll
    for (int k = 0; k < KMAX; ++k) b[j][k] = Bs[k][lane + 32 * j];

  for (int r = warp; r < TM; r += kWarps) {
    const int row = row0 + r;
    if (row >= M) break;
    float acc[kPerLane] = {};
#pragma unroll
    for (int k = 0; k < KMAX; ++k) {
      const float a = As[r][k];
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) acc[j] = fmaf(a, b[j][k], acc[j]);
    }
    float* c_row = C + static_cast<long long>(row) * ldc;
#pragma unroll
    for (int j = 0; j < kPerLane; ++j) {
      const int col = col0 + lane + 32 * j;
      if (col < N) c_row[col] = scale(alpha, acc[j], beta, c_row + col);
    }
  }
}
