// skinny: matrix-vector shaped products, where one of M and N is at most 16. Every tiled family
// stages both operands through shared memory in tiles of 64 or more rows and columns; with M = 1
// or N = 1 almost all of such a tile is padding, and the time goes to launching and synchronizing
// blocks that each read a sliver of the one large operand. Here the large operand is streamed
// once, straight from global memory into registers, with VEC-wide coalesced loads and several of
// them in flight per thread, and the small operand is read through the read-only cache.
//
// One of two kernel shapes, chosen by which macro is defined:
//  - MAX_N (gemvn family, N <= MAX_N): "a matrix times a few vectors". The data that matters is
//    A (M x K), read along its rows. A warp owns kRowsPerWarp consecutive rows; its lanes stride
//    over K, VEC consecutive floats each per load, kSteps strides per iteration so that
//    kRowsPerWarp * kSteps loads are in flight per lane. For each k a lane multiplies its A values
//    by row k of B (MAX_N floats, VEC-wide loads along N), so every B load serves kRowsPerWarp
//    rows. A warp shuffle reduction sums the lanes in a fixed butterfly order.
//  - MAX_M (gemvm family, M <= MAX_M): "a few row vectors times a matrix". The data that matters
//    is B (K x N), read along its rows. A block is kWarps warps over the same 32 * VEC columns:
//    each lane owns VEC adjacent columns, each warp a share of K (groups of kGroup consecutive
//    rows, round robin over the warps), so that narrow N still gives many blocks. A is read
//    VEC-wide along K with loads that are the same for every lane (one broadcast transaction).
//    The warps' partial sums meet in shared memory and are summed in warp order.
//
// SPLIT_K > 1 splits K over grid.z as the splitk family does (warptile.cu): block z multiplies
// its slice of K and stores its partial product to slice z of a workspace (the host passes the
// workspace as C, alpha = 1, beta = 0, slices M * ldc floats apart), and <name>_reduce sums the
// slices in slice order and applies alpha and beta: no atomics, the same result on every run.
// That is what fills the machine when the large operand has too few rows (gemvn) or columns
// (gemvm) for enough bytes in flight on all 132 SMs.
//
// Edges: rows, columns and K beyond the matrix are loaded as zeros (the loads are guarded, not
// the arithmetic), and a VEC-wide access that would cross an edge becomes guarded scalar ones, so
// every M, N, K >= 0 and every leading dimension is correct; VEC = 2 or 4 needs only alignment
// class 2 or 4 (pointers and leading dimensions multiples of VEC floats). Slices start at
// multiples of 4 floats of K, so a slice's VEC-wide loads stay aligned. With beta == 0, C is not
// read: it may hold NaN.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME skinny
#endif
#if !defined(MAX_N) && !defined(MAX_M)
#define MAX_N 1
#endif
#if defined(MAX_N) && defined(MAX_M)
#error "define MAX_N (gemvn) or MAX_M (gemvm), not both"
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif

#define TILEMM_PASTE2(a, b) a##b
#define TILEMM_PASTE(a, b) TILEMM_PASTE2(a, b)

static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC is 1, 2 or 4 floats per load");
static_assert(SPLIT_K >= 1 && SPLIT_K <= 32, "SPLIT_K is the number of K slices, 1 to 32");

// Must match family_skinny.cpp: the threads of a block.
#ifdef MAX_N
#define NTHREADS 128
#else
#define NTHREADS 256
#endif

// n floats from src into dst, of which only the first `valid` (may be <= 0) are inside the
// matrix; the rest are zeros. One n-wide load where all n are inside (src is then n-aligned).
template <int n>
static __device__ __forceinline__ void load_run(float* dst, const float* src, long long valid) {
  if constexpr (n == 4) {
    if (valid >= 4) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(src));
      dst[0] = v.x;
      dst[1] = v.y;
      dst[2] = v.z;
      dst[3] = v.w;
      return;
    }
  } else if constexpr (n == 2) {
    if (valid >= 2) {
      const float2 v = __ldg(reinterpret_cast<const float2*>(src));
      dst[0] = v.x;
      dst[1] = v.y;
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < n; ++e) dst[e] = e < valid ? __ldg(src + e) : 0.0f;
}

static __device__ __forceinline__ float scale(float alpha, float acc, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

// This block's slice of K, [begin, end): whole multiples of 4 floats, so that the first k of
// every slice keeps VEC-wide loads aligned; a slice past the end is empty and stores zeros.
struct KSlice {
  long long begin, end;
};
static __device__ __forceinline__ KSlice k_slice(int K) {
#if SPLIT_K > 1
  const long long per = ((static_cast<long long>(K) + SPLIT_K - 1) / SPLIT_K + 3) / 4 * 4;
  const long long begin = min(static_cast<long long>(K), blockIdx.z * per);
  return {begin, min(static_cast<long long>(K), begin + per)};
#else
  return {0, K};
#endif
}

// Where this block's part of C goes: with SPLIT_K > 1, slice blockIdx.z of the workspace that
// the host passes as C.
static __device__ __forceinline__ float* output_slice(float* C, int M, long long ldc) {
#if SPLIT_K > 1
  return C + static_cast<long long>(blockIdx.z) * M * ldc;
#else
  (void)M;
  (void)ldc;
  return C;
#endif
}

#ifdef MAX_N
static_assert(MAX_N == 1 || MAX_N == 2 || MAX_N == 4 || MAX_N == 8 || MAX_N == 16,
              "MAX_N is 1, 2, 4, 8 or 16");
// Rows of A per warp: each B value loaded serves this many rows. Two where B is one or two
// columns (its loads are cheap), four where it is wider.
constexpr int kRowsPerWarp = MAX_N >= 4 ? 4 : 2;
// Strides over K per iteration, so that every lane has 32 floats of A in flight; 16 for the
// scalar loads of the wide-B kernels, whose 32 scalars with 32+ accumulators spill.
constexpr int kSteps = (MAX_N >= 8 && VEC == 1 ? 16 : 32) / (kRowsPerWarp * VEC);
constexpr int kWarps = NTHREADS / 32;
constexpr int kRowsPerBlock = kWarps * kRowsPerWarp;
// Width of the loads of a row of B: VEC divides it, so the alignment class that allows VEC
// allows these (B + k * ldb + n is a multiple of it).
constexpr int kBVec = MAX_N < VEC ? MAX_N : VEC;

extern "C" __global__ void __launch_bounds__(NTHREADS)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const long long row0 = static_cast<long long>(blockIdx.x) * kRowsPerBlock + warp * kRowsPerWarp;
  const long long rows_left = M - row0;
  if (rows_left <= 0) return;  // the whole warp: no barrier below, and shuffles stay full-warp
  const KSlice slice = k_slice(K);
  const long long k_begin = slice.begin, k_end = slice.end;
  C = output_slice(C, M, ldc);

  const float* a_row = A + row0 * lda;
  float acc[kRowsPerWarp][MAX_N] = {};
  // One iteration: kSteps strides of 32 * VEC floats of K, all loads of A first.
  constexpr long long kSpan = static_cast<long long>(kSteps) * 32 * VEC;
  for (long long k0 = k_begin + lane * VEC; k0 < k_end; k0 += kSpan) {
    // Every load of this iteration inside the matrix: the same for all but a warp's last
    // iteration and its last rows, and it skips ~5 instructions per load.
    const bool whole = k0 + kSpan - 32 * VEC + VEC <= k_end && rows_left >= kRowsPerWarp;
    float a[kSteps][kRowsPerWarp][VEC];
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int r = 0; r < kRowsPerWarp; ++r) {
        const long long k = k0 + s * 32 * VEC;
        load_run<VEC>(a[s][r], a_row + r * lda + k,
                      whole ? VEC : (r < rows_left ? k_end - k : 0));
      }
#pragma unroll
    for (int s = 0; s < kSteps; ++s)
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        const long long k = k0 + s * 32 * VEC + e;
        float b[MAX_N];
        const float* b_row = B + k * ldb;
#pragma unroll
        for (int n = 0; n < MAX_N; n += kBVec)
          load_run<kBVec>(b + n, b_row + n, k < k_end ? N - n : 0);
#pragma unroll
        for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
          for (int n = 0; n < MAX_N; ++n) acc[r][n] = fmaf(a[s][r][e], b[n], acc[r][n]);
      }
  }

  // Butterfly over the lanes: every lane ends with every sum; lane (r * MAX_N + n) % 32 stores
  // output (r, n), so the stores spread over the lanes. The same order on every run.
#pragma unroll
  for (int r = 0; r < kRowsPerWarp; ++r)
#pragma unroll
    for (int n = 0; n < MAX_N; ++n) {
      float v = acc[r][n];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == (r * MAX_N + n) % 32 && r < rows_left && n < N) {
        float* c = C + (row0 + r) * ldc + n;
        *c = scale(alpha, v, beta, c);
      }
    }
}
#endif  // MAX_N

#ifdef MAX_M
static_assert(MAX_M == 1 || MAX_M == 2 || MAX_M == 4 || MAX_M == 8 || MAX_M == 16,
              "MAX_M is 1, 2, 4, 8 or 16");
constexpr int kWarps = NTHREADS / 32;
constexpr int kColumns = 32 * VEC;  // columns of a block: one warp-wide run of each row of B
// Consecutive rows of B a warp loads per iteration: 32 floats in flight per lane, but no more
// than 64 values of A held per thread (MAX_M x kGroup), and a multiple of 4 so that a group
// starts 4-aligned like its slice.
constexpr int kGroupByB = 32 / VEC;
constexpr int kGroupByA = 64 / MAX_M < 4 ? 4 : 64 / MAX_M;
constexpr int kGroup = kGroupByB < kGroupByA ? kGroupByB : kGroupByA;
static_assert(kGroup % 4 == 0, "a group of rows of B keeps A's VEC-wide loads aligned");
// Rows of C whose partial sums go through shared memory at once: at most 16 KiB.
constexpr int kReduceRowsBySmem = 4096 / (kWarps * kColumns);
constexpr int kReduceRows = kReduceRowsBySmem < MAX_M ? kReduceRowsBySmem : MAX_M;
static_assert(kReduceRows >= 1 && MAX_M % kReduceRows == 0, "row groups of the reduction");

extern "C" __global__ void __launch_bounds__(NTHREADS)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  __shared__ float partial[kWarps * kReduceRows * kColumns];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const long long col0 = static_cast<long long>(blockIdx.x) * kColumns;
  const long long cols_left = N - col0 - lane * VEC;  // of this lane's VEC columns
  const KSlice slice = k_slice(K);
  const long long k_begin = slice.begin, k_end = slice.end;
  C = output_slice(C, M, ldc);

  const float* b_col = B + col0 + lane * VEC;
  float acc[MAX_M][VEC] = {};
  for (long long k0 = k_begin + warp * kGroup; k0 < k_end; k0 += kWarps * kGroup) {
    // Every row of the group inside K and every column inside N: all but the edges.
    const bool whole = k0 + kGroup <= k_end && cols_left >= VEC;
    float b[kGroup][VEC];
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
      load_run<VEC>(b[g], b_col + (k0 + g) * ldb, whole ? VEC : (k0 + g < k_end ? cols_left : 0));
    float a[MAX_M][kGroup];
#pragma unroll
    for (int r = 0; r < MAX_M; ++r)
#pragma unroll
      for (int g = 0; g < kGroup; g += VEC)
        load_run<VEC>(&a[r][g], A + r * lda + k0 + g,
                      r >= M ? 0 : whole ? VEC : k_end - (k0 + g));
#pragma unroll
    for (int g = 0; g < kGroup; ++g)
#pragma unroll
      for (int r = 0; r < MAX_M; ++r)
#pragma unroll
        for (int e = 0; e < VEC; ++e) acc[r][e] = fmaf(a[r][g], b[g][e], acc[r][e]);
  }

  // The warps' partial sums, kReduceRows rows of C at a time, summed in warp order.
#pragma unroll
  for (int r0 = 0; r0 < MAX_M; r0 += kReduceRows) {
    if (r0 >= M) break;  // M is the same in every thread: the barriers stay uniform
    __syncthreads();     // the previous group's sums are read
#pragma unroll
    for (int r = 0; r < kReduceRows; ++r)
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        partial[(warp * kReduceRows + r) * kColumns + lane * VEC + e] = acc[r0 + r][e];
    __syncthreads();
    for (int o = threadIdx.x; o < kReduceRows * kColumns; o += NTHREADS) {
      const int r = o / kColumns;
      const int c = o % kColumns;
      if (r0 + r >= M || col0 + c >= N) continue;
      float sum = partial[r * kColumns + c];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) sum += partial[(w * kReduceRows + r) * kColumns + c];
      float* out = C + (r0 + r) * ldc + col0 + c;
      *out = scale(alpha, sum, beta, out);
    }
  }
}
#endif  // MAX_M

#if SPLIT_K > 1
// C = alpha * (W[0] + W[1] + ... + W[SPLIT_K - 1]) + beta * C, the slices summed in this order
// whatever the launch. The launch is the splitk family's (launch.cpp): 256 threads, each VEC
// consecutive columns of a row, the grid's rows striding over M. W is dense: ldw = N rounded up
// to 4, 16-byte aligned.
extern "C" __global__ void __launch_bounds__(256)
TILEMM_PASTE(TILEMM_KERNEL_NAME, _reduce)(int M, int N, const float* __restrict__ W, long long ldw,
                                         float alpha, float beta, float* __restrict__ C,
                                         long long ldc) {
  const long long col = (static_cast<long long>(blockIdx.x) * 256 + threadIdx.x) * VEC;
  if (col >= N) return;
  const long long slice = static_cast<long long>(M) * ldw;
  for (long long row = blockIdx.y; row < M; row += gridDim.y) {
    const float* w = W + row * ldw + col;
    float* c = C + row * ldc + col;
    float sum[VEC];
    load_run<VEC>(sum, w, N - col);
#pragma unroll
    for (int z = 1; z < SPLIT_K; ++z) {
      float v[VEC];
      load_run<VEC>(v, w + z * slice, N - col);
#pragma unroll
      for (int e = 0; e < VEC; ++e) sum[e] += v[e];
    }
#pragma unroll
    for (int e = 0; e < VEC; ++e)
      if (col + e < N) c[e] = scale(alpha, sum[e], beta, c + e);
  }
}
#endif
