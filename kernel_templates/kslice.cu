// kslice: split-K for small outputs with long K, at any alignment and leading dimension.
// A small C (a few dozen to a few thousand tiles of TM x TN) gives a tiled kernel too few blocks
// to use the machine, and a split into a fixed handful of slices (splitk, clusterk: at most 8)
// still leaves most SMs idle when K is in the tens of thousands. Here the number of slices follows
// K: block (x, y, z) multiplies the TM x TN tile (y, x) of C over K range [z * KL, (z + 1) * KL),
// so a long K becomes hundreds of blocks, and stores its partial tile to slice z of a workspace
// (dense M x N floats per slice). The module's second kernel, <name>_reduce, sums the slices of
// each element of C in a fixed order and applies alpha and beta: no atomics, so the result is the
// same on every run.
//
// Loads are scalar and guarded, so every pointer alignment, leading dimension and edge is served:
// what limits these shapes is latency and the number of blocks, not the width of a load. A warp
// reads 32 consecutive floats of a row of A (BK == 32) and TN consecutive floats of rows of B.
// The next chunk's loads are in registers while the current chunk is multiplied.
//
// The reduction gives each element of C a group of GROUP lanes of one warp (GROUP a power of two,
// chosen by the host from the number of slices): lane l sums slices l, l + GROUP, ..., then the
// group adds its lanes with shuffles in a fixed pattern.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME kslice
#endif
#ifndef TM
#define TM 32
#endif
#ifndef TN
#define TN 32
#endif
#ifndef KL
#define KL 256
#endif

#define TILEMM_KSLICE_PASTE2(a, b) a##b
#define TILEMM_KSLICE_PASTE(a, b) TILEMM_KSLICE_PASTE2(a, b)

#include "epilogue.cuh"  // the scaled store of C

namespace {
constexpr int kThreads = 256;  // 16 x 16: thread (ty, tx) owns rows ty + 16 i and columns tx + 16 j
constexpr int kSide = 16;
constexpr int kBK = 32;        // K per shared-memory chunk: one warp-wide row segment of A
constexpr int kRowsPerThread = TM / kSide;
constexpr int kColsPerThread = TN / kSide;
constexpr int kALoads = TM * kBK / kThreads;  // floats of A each thread stages per chunk
constexpr int kBLoads = TN * kBK / kThreads;  // floats of B each thread stages per chunk
}  // namespace

static_assert(TM == 16 || TM == 32 || TM == 64, "TM (rows of C per block) is 16, 32 or 64");
static_assert(TN == 16 || TN == 32 || TN == 64, "TN (columns of C per block) is 16, 32 or 64");
static_assert(KL % kBK == 0 && KL >= kBK && KL <= 4096,
              "KL (K per slice) is a multiple of 32 from 32 to 4096");

extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ W,
                   long long ldw) {
  // alpha and beta are the reduction's; the host passes the workspace as C with ldw == N.
  (void)alpha;
  (void)beta;
  // A transposed, one float of padding per row so the transposing stores do not conflict.
  __shared__ float As[kBK][TM + 1];
  __shared__ float Bs[kBK][TN];
  const int tid = threadIdx.x;
  const int tx = tid % kSide;
  const int ty = tid / kSide;
  const int row0 = blockIdx.y * TM;
  const int col0 = blockIdx.x * TN;
  const long long k_begin = static_cast<long long>(blockIdx.z) * KL;
  const long long k_end = min(static_cast<long long>(K), k_begin + KL);

  float a_next[kALoads];
  float b_next[kBLoads];
  // Element e of a chunk: A's (e / kBK, e % kBK), so a warp reads a row segment; B's (e / TN,
  // e % TN), so a warp reads whole rows of the tile.
  auto load_chunk = [&](long long k0) {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) {
      const int e = tid + r * kThreads;
      const int row = row0 + e / kBK;
      const long long k = k0 + e % kBK;
      a_next[r] = (row < M && k < k_end) ? A[static_cast<long long>(row) * lda + k] : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) {
      const int e = tid + r * kThreads;
      const long long k = k0 + e / TN;
      const int col = col0 + e % TN;
      b_next[r] = (col < N && k < k_end) ? B[k * ldb + col] : 0.0f;
    }
  };

  float acc[kRowsPerThread][kColsPerThread];
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i)
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j) acc[i][j] = 0.0f;

  load_chunk(k_begin);
  for (long long k0 = k_begin; k0 < k_end; k0 += kBK) {
#pragma unroll
    for (int r = 0; r < kALoads; ++r) {
      const int e = tid + r * kThreads;
      As[e % kBK][e / kBK] = a_next[r];
    }
#pragma unroll
    for (int r = 0; r < kBLoads; ++r) {
      const int e = tid + r * kThreads;
      Bs[e / TN][e % TN] = b_next[r];
    }
    __syncthreads();  // the chunk is in shared memory before anyone reads it
    if (k0 + kBK < k_end) load_chunk(k0 + kBK);  // in flight while this chunk is multiplied
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kRowsPerThread];
      float b[kColsPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) a[i] = As[k][ty + kSide * i];
#pragma unroll
      for (int j = 0; j < kColsPerThread; ++j) b[j] = Bs[k][tx + kSide * j];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i)
#pragma unroll
        for (int j = 0; j < kColsPerThread; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();  // nobody overwrites the chunk while a slower warp still reads it
  }

  float* slice = W + static_cast<long long>(blockIdx.z) * M * ldw;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int row = row0 + ty + kSide * i;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < kColsPerThread; ++j) {
      const int col = col0 + tx + kSide * j;
      if (col < N) slice[static_cast<long long>(row) * ldw + col] = acc[i][j];
    }
  }
}

// C = alpha * (W0 + ... + W(S-1)) + beta * C, GROUP lanes per element of C (M x N, slices of
// M * N floats). 256 threads per block, blocks over the elements.
extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KSLICE_PASTE(TILEMM_KERNEL_NAME, _reduce)(int M, int N, int S, int GROUP,
                                                const float* __restrict__ W, float alpha,
                                                float beta, float* __restrict__ C, long long ldc) {
  const long long thread = static_cast<long long>(blockIdx.x) * kThreads + threadIdx.x;
  const long long element = thread / GROUP;
  const int lane = static_cast<int>(thread % GROUP);
  const long long elements = static_cast<long long>(M) * N;
  const bool live = element < elements;
  float sum = 0.0f;
  if (live)
    for (int z = lane; z < S; z += GROUP) sum += W[static_cast<long long>(z) * elements + element];
  // Every lane of the warp takes part in the shuffles; a group never spans two warps.
  for (int offset = GROUP / 2; offset > 0; offset /= 2)
    sum += __shfl_down_sync(0xffffffffu, sum, offset, GROUP);
  if (!live || lane != 0) return;
  float* c = C + (element / N) * ldc + element % N;
  *c = scale(alpha, sum, beta, c);
}
