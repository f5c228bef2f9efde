// warptile: the register-blocked SGEMM that closes the gap to cuBLAS at medium and large sizes.
// Over `tiled` it adds (docs/kernels.md says where each comes from and what it pays):
//  - a BM x BN block tile split into WM x WN warp tiles, each thread computing several TM x TN
//    sub-tiles as outer products in registers, so every float read from shared memory feeds
//    WN/32*TN (for A) or WM/TN (for B) FMAs;
//  - A stored transposed in shared memory (As[BK][BM + 4]) so that both fragments of the inner
//    loop are 128-bit shared loads (LDS.128) of contiguous floats;
//  - two shared-memory stages with register-staged prefetch: the next K tile's global loads are in
//    flight while the current one is multiplied, and there is one barrier per K tile;
//  - 128-bit global loads and stores (VEC == 4) for problems of alignment class 4; scalar stores
//    (VEC == 1) are staged through shared memory so that each writes 32 floats of one row.
// Expected to win (the tuner measures it) once M x N gives every SM at least one block, roughly
// M*N >= SMs*BM*BN: the small tiles serve N ~ 1000, the large ones N >= 2048 (docs/kernels.md). No
// block swizzle: one wave of blocks streams B from HBM in a small fraction of the time its FMAs
// take, so L2 reuse across blocks is not what limits it.
//
// SPLIT_K > 1 makes the split-K variant of the same kernel: grid.z = SPLIT_K blocks share each
// C tile, block z multiplies its own run of K tiles and stores its partial product to slice z of
// a workspace (the host passes the workspace as C, alpha = 1, beta = 0, and slices M * ldc
// floats apart); a second kernel of this module, <name>_reduce, sums the slices in a fixed order
// and applies alpha and beta. That gives small M x N with large K enough blocks for all the SMs
// (512^2 in 64x64 tiles is 64 blocks), keeps every sum in FP32 and the result deterministic (no
// atomics), and costs one extra pass over S * M * N floats that are still in L2.
//
// CLUSTER_REDUCE = 1 (with SPLIT_K <= 8) makes the `clusterk` kernel: the SPLIT_K blocks of one C
// tile form a thread block cluster (sm_90) and sum their partial products through distributed
// shared memory instead of a workspace: each block leaves its partial tile in its own shared
// memory, and block z then sums rows [z * BM / SPLIT_K, ...) of all the partials, in slice order,
// and writes them to C. One kernel, no workspace, no second launch, and the same sums in the same
// order as split-K's reduce kernel, so the two give identical results.
//
// ALIGNED_COPIES = 1 makes the `padded` family's kernel: A and B are copies whose rows start
// 16-byte aligned, made by <name>_copy of this module, so the loads are float4 (VEC = 4) whatever
// the caller's alignment, while C is the caller's own and is written with scalar stores, staged
// through shared memory as VEC = 1's are. Copying C as well would cost two more passes over M x N.
//
// Edge tiles load zeros out of range and guard their stores, so every M, N, K >= 0 and every
// leading dimension >= the row length is correct. A float4 that would cross the edge of the
// matrix falls back to guarded scalar accesses, so VEC == 4 needs only what alignment class 4
// guarantees: A, B, C 16-byte aligned and lda, ldb, ldc multiples of 4.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME warptile
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 8
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 1
#endif
#ifndef ALIGNED_COPIES
#define ALIGNED_COPIES 0
#endif
#ifndef CLUSTER_REDUCE
#define CLUSTER_REDUCE 0
#endif

#define TILEMM_PASTE2(a, b) a##b
#define TILEMM_PASTE(a, b) TILEMM_PASTE2(a, b)

// Derived, not a parameter: one warp per warp tile.
#define NTHREADS ((BM / WM) * (BN / WN) * 32)

// The lanes of a warp form a TN x (32/TN) grid over one warp sub-tile. One fragment LDS.128 then
// reads TN distinct float4 of A, TM floats apart, or 32/TN of B, TN floats apart (the other lanes
// get broadcasts); with TM * TN <= 32 either set spans at most 32 consecutive floats, every bank
// at most once: one conflict-free wavefront.
constexpr int kLanesN = 32 / TN;
constexpr int kLanesM = 32 / kLanesN;
constexpr int kSubM = kLanesM * TM;  // rows of a warp sub-tile
constexpr int kSubN = kLanesN * TN;  // columns of a warp sub-tile (always 32)
constexpr int kIterM = WM / kSubM;   // sub-tiles per warp tile along M
constexpr int kIterN = WN / kSubN;   // ... along N
constexpr int kThreadM = kIterM * TM;  // rows of C per thread
constexpr int kThreadN = kIterN * TN;  // columns of C per thread

// As rows are padded by 4 floats: one transposing store of a warp writes As[k][m] into BK/4 k
// rows 4 apart (row-wise global loads keep A coalesced), and with BM a multiple of 32 those rows
// would start in the same bank. The pad shifts them by 16 banks: conflict-free at BK = 8, 2-way
// instead of 4-way at BK = 16. 4, not 1, so every row stays 16-byte aligned for LDS.128.
constexpr int kAStride = BM + 4;
constexpr int kAStage = BK * kAStride;
constexpr int kBStage = BK * BN;

// Global -> shared loads: each thread moves VEC consecutive floats of one row per load.
constexpr int kAVecsPerRow = BK / VEC;
constexpr int kARowsPerPass = NTHREADS / kAVecsPerRow;
constexpr int kALoads = BM / kARowsPerPass;
constexpr int kBVecsPerRow = BN / VEC;
constexpr int kBRowsPerPass = NTHREADS / kBVecsPerRow;
constexpr int kBLoads = BK / kBRowsPerPass;

static_assert(SPLIT_K >= 1, "SPLIT_K is the number of K slices, at least 1");
static_assert(!ALIGNED_COPIES || (VEC == 4 && SPLIT_K == 1),
              "ALIGNED_COPIES is for the float4 kernel of the padded family, which does not split K");
static_assert(!CLUSTER_REDUCE || (SPLIT_K >= 2 && SPLIT_K <= 8),
              "CLUSTER_REDUCE needs 2 to 8 K slices: a cluster of more than 8 blocks is not portable");
static_assert(VEC == 1 || VEC == 4, "VEC is 1 (scalar, any alignment) or 4 (float4 accesses)");
static_assert(BM % WM == 0 && BN % WN == 0, "the warp tile WM x WN must divide the block tile");
static_assert(NTHREADS == 128 || NTHREADS == 256,
              "(BM/WM) * (BN/WN) warps must be 4 or 8: 128 or 256 threads per block");
static_assert(BM / WM >= 2 && BN / WN >= 2,
              "at least 2 warps along M and along N: a 1-wide warp arrangement makes an elongated "
              "block tile that reuses one operand less for the same shared memory");
static_assert(NTHREADS == 128 || WM * WN / 32 >= 64,
              "256 threads need >= 64 outputs per thread: 8 warps of 32 outputs compute the same "
              "tile as 4 warps of 64 with half the register reuse");
static_assert(WM * WN / 32 <= 128,
              "at most 128 accumulators per thread: more spill out of the 255 registers");
static_assert(TM == 4 || TM == 8, "TM is 4 or 8: a multiple of 4 for LDS.128 fragments");
static_assert(TN == 4 || TN == 8, "TN is 4 or 8: a multiple of 4 for LDS.128, and divides 32");
static_assert(TM * TN <= 32,
              "TM * TN <= 32: larger thread sub-tiles spread one fragment load over more than 32 "
              "banks, a 2-way shared-memory bank conflict");
static_assert(TN == 4 || WM > WN,
              "TN = 8 only for tall warp tiles (WM > WN), the one case where it needs fewer "
              "fragment loads per k (WM/TN + WN*TN/32 floats) than TN = 4");
static_assert(WM % kSubM == 0, "WM must be a multiple of the warp sub-tile height TN * TM");
static_assert(WN % kSubN == 0, "WN must be a multiple of the warp sub-tile width 32");
static_assert(BK % VEC == 0 && BK % 4 == 0, "BK must be a multiple of 4 (and of VEC)");
static_assert(NTHREADS % kAVecsPerRow == 0 && BM % kARowsPerPass == 0,
              "the A tile (BM x BK) must split into whole rows evenly among the threads");
static_assert(NTHREADS % kBVecsPerRow == 0 && BK % kBRowsPerPass == 0,
              "the B tile (BK x BN) must split into whole rows evenly among the threads");

// VEC consecutive floats from `src`, of which only the first `valid` (may be <= 0) are inside
// the matrix; the rest are zeros, which add nothing to the dot products.
static __device__ __forceinline__ void load_run(float* dst, const float* src, int valid) {
  if constexpr (VEC == 4) {
    if (valid >= 4) {
      const float4 v = *reinterpret_cast<const float4*>(src);
      dst[0] = v.x;
      dst[1] = v.y;
      dst[2] = v.z;
      dst[3] = v.w;
      return;
    }
  }
#pragma unroll
  for (int e = 0; e < VEC; ++e) dst[e] = e < valid ? src[e] : 0.0f;
}

// VEC consecutive floats from `src` where `inside`, else zeros: a run that lies wholly inside
// the matrix or wholly outside it.
static __device__ __forceinline__ void load_run_or_zeros(float* dst, const float* src, bool inside) {
  if constexpr (VEC == 4) {
    float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    if (inside) v = *reinterpret_cast<const float4*>(src);
    dst[0] = v.x;
    dst[1] = v.y;
    dst[2] = v.z;
    dst[3] = v.w;
  } else {
    dst[0] = inside ? *src : 0.0f;
  }
}

// A thread's fragment of one k row of a shared tile: kRuns runs of kRun consecutive floats,
// kStride floats apart, read as float4 (LDS.128).
template <int kRuns, int kRun, int kStride>
static __device__ __forceinline__ void load_fragment(float* dst, const float* src) {
#pragma unroll
  for (int i = 0; i < kRuns; ++i)
#pragma unroll
    for (int q = 0; q < kRun; q += 4) {
      const float4 v = *reinterpret_cast<const float4*>(src + i * kStride + q);
      dst[i * kRun + q] = v.x;
      dst[i * kRun + q + 1] = v.y;
      dst[i * kRun + q + 2] = v.z;
      dst[i * kRun + q + 3] = v.w;
    }
}

// The scaled stores of C (scale, store_scaled4).
#include "epilogue.cuh"

#if CLUSTER_REDUCE
// The cluster's barrier, addresses and loads (sm_90).
#include "cluster.cuh"
// The cluster spans grid.z: the blocks of one C tile, whose ranks are their blockIdx.z.
#define TILEMM_CLUSTER __cluster_dims__(1, 1, SPLIT_K)
#else
#define TILEMM_CLUSTER
#endif

// MIN_BLOCKS = 2 caps registers at 128 so that two blocks share an SM: one block's barrier
// wait is hidden by the other's FMAs. Spelled only when above 1: an explicit minimum of 1 still
// changes ptxas's register allocation, to more registers and a slower kernel.
#if MIN_BLOCKS > 1
#define TILEMM_LAUNCH_BOUNDS __launch_bounds__(NTHREADS, MIN_BLOCKS)
#else
#define TILEMM_LAUNCH_BOUNDS __launch_bounds__(NTHREADS)
#endif
extern "C" __global__ void TILEMM_LAUNCH_BOUNDS TILEMM_CLUSTER
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  // Dynamic, so that tiles above the 48 KiB static limit work (the loader opts in).
  extern __shared__ float4 smem4[];
  float* const As = reinterpret_cast<float*>(smem4);  // [2][BK][kAStride]
  float* const Bs = As + 2 * kAStage;                  // [2][BK][BN]

  const int tid = threadIdx.x;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  // Remaining extents instead of m0 + row < M: no int overflow for N or K near 2^31.
  const int rem_m = M - m0;
  const int rem_n = N - n0;

  const int warp = tid / 32;
  const int lane = tid % 32;
  const int warp_m0 = (warp / (BN / WN)) * WM;  // this warp's tile within the block's
  const int warp_n0 = (warp % (BN / WN)) * WN;
  const int frag_m = warp_m0 + (lane / kLanesN) * TM;
  const int frag_n = warp_n0 + (lane % kLanesN) * TN;

  const int a_row = tid / kAVecsPerRow;
  const int a_col = (tid % kAVecsPerRow) * VEC;
  const int b_row = tid / kBVecsPerRow;
  const int b_col = (tid % kBVecsPerRow) * VEC;
  // Rows beyond M or K are never dereferenced; the pointers only advance.
  const float* a_src = A + static_cast<long long>(m0 + a_row) * lda + a_col;
  const float* b_src = B + static_cast<long long>(b_row) * ldb + n0 + b_col;


  float a_stage[kALoads * VEC];
  float b_stage[kBLoads * VEC];
  // In-range extents seen from this thread's first load: fewer live registers than the parts.
  const int a_rows_left = rem_m - a_row;
  const int b_cols_left = rem_n - b_col;
  // A block whose tile lies inside M x N loads every K tile but the last partial one without a
  // single bounds check: the same for all its threads, so the branch never diverges, and the
  // checks it skips are ~6 instructions per load in an issue slot that an FMA would use. A block
  // on the edge of M or N whose every run lies wholly inside or wholly outside the matrix (N a
  // multiple of VEC) loads its K tiles with one predicate per run, the same for every K tile,
  // instead: the checked loads slowed such blocks, and with them the grid, by several percent
  // (docs/kernels.md). Not under MIN_BLOCKS = 2: the other paths do not fit 128 registers unspilled.
  constexpr bool kUncheckedInside = MIN_BLOCKS == 1;
  enum class Loads { checked, whole, whole_in_k };
  // The loads of one K tile (`how` is a constant at every call): `whole` skips every bounds
  // check; `whole_in_k` checks only which runs are inside M and N; `checked` bounds each run by
  // a_cols_left and b_rows_left along K as well.
  auto load_runs = [&](Loads how, int a_cols_left, int b_rows_left) {
#pragma unroll
    for (int p = 0; p < kALoads; ++p) {
      const float* src = a_src + static_cast<long long>(p * kARowsPerPass) * lda;
      const bool row_inside = p * kARowsPerPass < a_rows_left;
      if (how == Loads::checked)
        load_run(&a_stage[p * VEC], src, row_inside ? a_cols_left : 0);
      else
        load_run_or_zeros(&a_stage[p * VEC], src, how == Loads::whole || row_inside);
    }
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      const float* src = b_src + static_cast<long long>(p * kBRowsPerPass) * ldb;
      if (how == Loads::checked)
        load_run(&b_stage[p * VEC], src, p * kBRowsPerPass < b_rows_left ? b_cols_left : 0);
      else
        load_run_or_zeros(&b_stage[p * VEC], src, how == Loads::whole || b_cols_left > 0);
    }
  };
  const bool whole_mn = rem_m >= BM && rem_n >= BN;
  const bool runs_whole_in_n = rem_n >= BN || rem_n % VEC == 0;
  auto load_tile = [&](int k0) {
    const int k_left = K - k0;
    if (kUncheckedInside && whole_mn && k_left >= BK)
      load_runs(Loads::whole, 0, 0);
    else if (kUncheckedInside && runs_whole_in_n && k_left >= BK)
      load_runs(Loads::whole_in_k, 0, 0);
    else
      load_runs(Loads::checked, k_left - a_col, k_left - b_row);
    a_src += BK;
    b_src += BK * ldb;
  };
  auto store_tile = [&](int stage) {
    float* as = As + stage * kAStage;
    float* bs = Bs + stage * kBStage;
#pragma unroll
    for (int p = 0; p < kALoads; ++p)
#pragma unroll
      for (int e = 0; e < VEC; ++e)
        as[(a_col + e) * kAStride + a_row + p * kARowsPerPass] = a_stage[p * VEC + e];
#pragma unroll
    for (int p = 0; p < kBLoads; ++p) {
      float* dst = bs + (b_row + p * kBRowsPerPass) * BN + b_col;
      if constexpr (VEC == 4)
        *reinterpret_cast<float4*>(dst) = make_float4(b_stage[p * 4], b_stage[p * 4 + 1],
                                                      b_stage[p * 4 + 2], b_stage[p * 4 + 3]);
      else
        *dst = b_stage[p];
    }
  };

  const int k_tiles = K / BK + (K % BK != 0);  // not (K + BK - 1) / BK: K may be near 2^31
#if SPLIT_K > 1
  // This block's run of K tiles [t_begin, t_end): whole tiles, so only the last run has a K
  // edge; a run past the end is empty and stores zeros. Its partial goes to slice blockIdx.z.
  const int per_split = k_tiles / SPLIT_K + (k_tiles % SPLIT_K != 0);
  const int t_begin = min(k_tiles, static_cast<int>(blockIdx.z) * per_split);
  const int t_end = min(k_tiles, t_begin + per_split);
  a_src += static_cast<long long>(t_begin) * BK;
  b_src += static_cast<long long>(t_begin) * BK * ldb;
#if !CLUSTER_REDUCE
  C += static_cast<long long>(blockIdx.z) * M * ldc;
#endif
#else
  const int t_begin = 0;
  const int t_end = k_tiles;
#endif

  float acc[kThreadM][kThreadN] = {};
  if (t_begin < t_end) {
    load_tile(t_begin * BK);
    store_tile(0);
    __syncthreads();  // stage 0 is complete before anyone reads it
  }
  for (int t = t_begin; t < t_end; ++t) {
    const int stage = (t - t_begin) & 1;
    const bool more = t + 1 < t_end;  // the same in every thread: the barrier below is uniform
    // Issued now, consumed after the FMAs below: the global latency hides behind them.
    if (more) load_tile((t + 1) * BK);

    const float* as = As + stage * kAStage + frag_m;
    const float* bs = Bs + stage * kBStage + frag_n;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[kThreadM];
      float b[kThreadN];
      load_fragment<kIterM, TM, kSubM>(a, as + k * kAStride);
      load_fragment<kIterN, TN, kSubN>(b, bs + k * BN);
      // Row i left to right, row i + 1 right to left: consecutive FFMAs share an operand at
      // every turn, which ptxas keeps in its reuse caches (docs/kernels.md has the timings).
      // Row by row under MIN_BLOCKS = 2: within 128 registers ptxas spills the snake.
      constexpr bool kSnake = MIN_BLOCKS == 1;
#pragma unroll
      for (int i = 0; i < kThreadM; ++i)
#pragma unroll
        for (int jj = 0; jj < kThreadN; ++jj) {
          const int j = (kSnake && (i & 1)) ? kThreadN - 1 - jj : jj;
          acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
    }

    if (more) {
      // The other stage was last read in iteration t - 1, and every thread has passed that
      // iteration's barrier, so it is free; this stage is only read, never written, here.
      store_tile(stage ^ 1);
      __syncthreads();  // stage ^ 1 is complete before iteration t + 1 reads it
    }
  }

#if CLUSTER_REDUCE
  // This block's partial tile, P[BM][BN], over the stage buffers (shared_bytes() makes room).
  __syncthreads();  // every warp is done reading the last stage
  float* const P = reinterpret_cast<float*>(smem4);
#pragma unroll
  for (int i = 0; i < kIterM; ++i)
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
      for (int j = 0; j < kIterN; ++j)
#pragma unroll
        for (int q = 0; q < TN; q += 4) {
          const float* v = &acc[i * TM + r][j * TN + q];
          *reinterpret_cast<float4*>(P + (frag_m + i * kSubM + r) * BN + frag_n + j * kSubN + q) =
              make_float4(v[0], v[1], v[2], v[3]);
        }
  cluster_barrier();  // every partial of the cluster is complete

  // Block z sums its share of the rows over the SPLIT_K partials, in slice order as the reduce
  // kernel does, float4 columns across the threads so that both the shared reads and C coalesce.
  constexpr int kRowsPerBlock = (BM + SPLIT_K - 1) / SPLIT_K;
  constexpr int kColumnGroups = BN / 4;
  constexpr int kRowsPerPass = NTHREADS / kColumnGroups;
  static_assert(NTHREADS % kColumnGroups == 0, "the float4 columns of a row split the block evenly");
  unsigned partial[SPLIT_K];
#pragma unroll
  for (int z = 0; z < SPLIT_K; ++z) partial[z] = cluster_address(P, z);
  const int col = (tid % kColumnGroups) * 4;
  const int row_end = min(min(BM, rem_m), static_cast<int>(blockIdx.z + 1) * kRowsPerBlock);
  for (int row = blockIdx.z * kRowsPerBlock + tid / kColumnGroups; row < row_end;
       row += kRowsPerPass) {
    const unsigned offset = static_cast<unsigned>((row * BN + col) * sizeof(float));
    float4 sum = cluster_load4(partial[0] + offset);
#pragma unroll
    for (int z = 1; z < SPLIT_K; ++z) {
      const float4 v = cluster_load4(partial[z] + offset);
      sum.x += v.x;
      sum.y += v.y;
      sum.z += v.z;
      sum.w += v.w;
    }
    float* c = C + static_cast<long long>(m0 + row) * ldc + n0 + col;
    if (VEC == 4 && col + 4 <= rem_n) {
      store_scaled4(c, alpha, sum, beta);
    } else {
      const float s[4] = {sum.x, sum.y, sum.z, sum.w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
        if (col + e < rem_n) c[e] = scale(alpha, s[e], beta, c + e);
    }
  }
  cluster_barrier();  // no block exits, freeing its partial, while another may still read it
#else
  // Scalar stores of C (VEC 1, and the padded family's caller-owned C) go through shared memory:
  // stored straight from the accumulators, each store instruction of a warp would write TN rows
  // of 32/TN runs, TN floats apart, so every 32-byte sector it touches is written TN times over.
  // Staged, a warp leaves one (i, r, j) slice of its tile, TN rows of 32 columns, in its own
  // scratch rows, and each store instruction then writes 32 consecutive floats of one row.
  constexpr bool kStagedStores = VEC == 1 || ALIGNED_COPIES;
  if constexpr (kStagedStores) {
    static_assert(NTHREADS / 32 * TN * 32 <= 2 * (kAStage + kBStage),
                  "every warp's scratch rows (TN x 32 floats) fit in the stage buffers");
    __syncthreads();  // every warp is done reading the last stage
    float* const scratch = reinterpret_cast<float*>(smem4) + warp * (TN * 32);
    float* const lane_slot = scratch + (lane / kLanesN) * 32 + (lane % kLanesN) * TN;
#pragma unroll
    for (int i = 0; i < kIterM; ++i)
#pragma unroll
      for (int r = 0; r < TM; ++r)
#pragma unroll
        for (int j = 0; j < kIterN; ++j) {
#pragma unroll
          for (int q = 0; q < TN; q += 4) {
            const float* v = &acc[i * TM + r][j * TN + q];
            *reinterpret_cast<float4*>(lane_slot + q) = make_float4(v[0], v[1], v[2], v[3]);
          }
          __syncwarp();
          const int col = warp_n0 + j * kSubN + lane;
#pragma unroll
          for (int lr = 0; lr < kLanesM; ++lr) {
            const int row = warp_m0 + i * kSubM + lr * TM + r;
            if (row < rem_m && col < rem_n) {
              float* c = C + static_cast<long long>(m0 + row) * ldc + n0 + col;
              *c = scale(alpha, scratch[lr * 32 + lane], beta, c);
            }
          }
          __syncwarp();  // the scratch rows are read before the next slice overwrites them
        }
    return;
  }
#pragma unroll
  for (int i = 0; i < kIterM; ++i)
#pragma unroll
    for (int r = 0; r < TM; ++r) {
      const int row = frag_m + i * kSubM + r;
      if (row >= rem_m) continue;
      float* c_row = C + static_cast<long long>(m0 + row) * ldc + n0;
#pragma unroll
      for (int j = 0; j < kIterN; ++j)
#pragma unroll
        for (int q = 0; q < TN; q += 4) {
          const int col = frag_n + j * kSubN + q;
          const float* v = &acc[i * TM + r][j * TN + q];
          float* c = c_row + col;
          if (VEC == 4 && col + 4 <= rem_n) {
            store_scaled4(c, alpha, make_float4(v[0], v[1], v[2], v[3]), beta);
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (col + e < rem_n) c[e] = scale(alpha, v[e], beta, c + e);
          }
        }
    }
#endif
}

#if SPLIT_K > 1 && !CLUSTER_REDUCE
// C = alpha * (W[0] + W[1] + ... + W[SPLIT_K - 1]) + beta * C, the slices summed in this order
// whatever the launch. Each thread owns VEC consecutive columns of a row; the grid strides over
// rows, so any M fits the grid's y limit. The workspace W is dense: ldw = N rounded up to 4.
extern "C" __global__ void __launch_bounds__(256)
TILEMM_PASTE(TILEMM_KERNEL_NAME, _reduce)(int M, int N, const float* __restrict__ W, long long ldw,
                                         float alpha, float beta, float* __restrict__ C,
                                         long long ldc) {
  const int col = (blockIdx.x * 256 + threadIdx.x) * VEC;
  if (col >= N) return;
  const long long slice = static_cast<long long>(M) * ldw;
  for (int row = blockIdx.y; row < M; row += gridDim.y) {
    const float* w = W + static_cast<long long>(row) * ldw + col;
    float* c = C + static_cast<long long>(row) * ldc + col;
    if (VEC == 4 && col + 4 <= N) {
      float4 sum = *reinterpret_cast<const float4*>(w);
#pragma unroll
      for (int z = 1; z < SPLIT_K; ++z) {
        const float4 v = *reinterpret_cast<const float4*>(w + z * slice);
        sum.x += v.x;
        sum.y += v.y;
        sum.z += v.z;
        sum.w += v.w;
      }
      store_scaled4(c, alpha, sum, beta);
    } else {
#pragma unroll
      for (int e = 0; e < VEC; ++e) {
        if (col + e >= N) break;
        float sum = w[e];
#pragma unroll
        for (int z = 1; z < SPLIT_K; ++z) sum += w[z * slice + e];
        c[e] = scale(alpha, sum, beta, c + e);
      }
    }
  }
}
#endif

#if ALIGNED_COPIES
// dst = src, `rows` rows of `cols` floats, into rows of ldd >= cols floats (ldd a multiple of 4,
// dst 16-byte aligned) whose columns cols..ldd-1 are set to zero: the aligned copy that the
// kernel above reads with float4 loads. One float per thread, so that both the reads of an odd
// pitch and the writes are coalesced. The grid's rows stride over `rows`, so any height fits the
// grid's y limit.
extern "C" __global__ void __launch_bounds__(256)
TILEMM_PASTE(TILEMM_KERNEL_NAME, _copy)(int rows, int cols, const float* __restrict__ src,
                                       long long lds, float* __restrict__ dst, long long ldd) {
  const long long col = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (col >= ldd) return;
  for (long long row = blockIdx.y; row < rows; row += gridDim.y)
    dst[row * ldd + col] = col < cols ? src[row * lds + col] : 0.0f;
}
#endif
