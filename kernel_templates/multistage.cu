// multistage: the FP32 SGEMM for large tiles, fed by cp.async through a ring of shared-memory
// stages instead of warptile's registers. What it changes over warptile (docs/kernels.md has the
// profiles and timings behind each point):
//  - Global -> shared copies are cp.async (LDGSTS): no staging registers, no shared stores in the
//    main loop, and STAGES - 1 K tiles in flight while one is multiplied. A is still stored
//    transposed (As[k][m], so that its fragments are 128-bit shared loads): each float of A is
//    its own 4-byte copy, eight threads along K per row, so that a warp reads four 32-byte
//    sectors and writes 32 distinct banks.
//  - One barrier per K tile, just before the tile's last k: right after it the copies of a later
//    tile go into the stage just read, and the first fragments of the next tile load under the
//    last k's FMAs.
//  - Every warp owns a 64 x 64 tile of C, 128 accumulators per thread as 4 x 2 sub-tiles of 4 x 4;
//    the fragments are double-buffered in registers, one k ahead.
//  - The FMAs of one k go along the rows of the thread's tile in a snake (row i left to right,
//    row i + 1 right to left), so that consecutive FFMAs share an operand at every turn: ptxas
//    then keeps more operands in its reuse caches and the FFMAs stall less on register reads.
// Expected to win where the large tiles give every SM whole waves of blocks; the tuner measures
// it against the others.
// STREAM_K 1 makes the `streamk` family's kernel: one persistent block per SM takes whole tiles
// round robin, then a share of the last waves' tiles cut in K (stream_k.cuh); a block that ends
// a cut tile adds the partial sums the blocks before it left in the workspace, in block order,
// so that the tail wave's SMs do not idle and the result does not depend on timing.
//
// Edge tiles copy zeros for what lies outside M, N or K (cp.async's source size 0 fills the
// destination with zeros and reads nothing) and guard their stores, so every M, N, K >= 0 and every
// leading dimension >= the row length is correct. VEC == 4 copies B and stores C as float4: it
// needs what alignment class 4 guarantees (B and C 16-byte aligned, ldb and ldc multiples of 4).
// VEC == 1 copies B a float at a time, for any alignment. A is copied a float at a time in both.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME multistage
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 256
#endif
#ifndef BK
#define BK 8
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef STREAM_K
#define STREAM_K 0
#endif

#include "cp_async.cuh"   // the copies of A and B
#include "stream_k.cuh"  // the work split of STREAM_K 1
#include "epilogue.cuh"  // the scaled stores of C

// Derived, not parameters: every warp computes a 64 x 64 tile of C; its lanes form a 4 x 8 grid
// of 4 x 4 sub-tiles, repeated 4 times along M and twice along N.
constexpr int kWarpM = 64;
constexpr int kWarpN = 64;
constexpr int kThreads = (BM / kWarpM) * (BN / kWarpN) * 32;
constexpr int kLanesN = 8;
constexpr int kLanesM = 4;
constexpr int kSubM = kLanesM * 4;        // 16 rows of a warp sub-tile
constexpr int kSubN = kLanesN * 4;        // 32 columns
constexpr int kIterM = kWarpM / kSubM;    // 4
constexpr int kIterN = kWarpN / kSubN;    // 2
constexpr int kThreadM = kIterM * 4;      // 16 rows of C per thread
constexpr int kThreadN = kIterN * 4;      // 8 columns

// As rows are padded by 4 floats: the 4-byte copies of one warp write 4 rows of A x 8 k, and with
// a stride of BM + 4 those land in 32 distinct banks; 4, not 1, keeps every row 16-byte aligned
// for the fragments' LDS.128.
constexpr int kAStride = BM + 4;
constexpr int kAStage = BK * kAStride;
constexpr int kBStage = BK * BN;
constexpr int kStage = kAStage + kBStage;  // floats per stage

// A's copies: element (chunk, row, c) of the tile stored as [BK / 8][BM][8] in copy order, so
// that 8 consecutive threads read 8 consecutive floats of one row.
constexpr int kACopies = BM * BK / kThreads;
constexpr int kARowStep = kThreads / 8;
// B's copies: VEC floats of one row each.
constexpr int kBVecsPerRow = BN / VEC;
constexpr int kBCopies = BK * BN / VEC / kThreads;
constexpr int kBRowStep = kThreads / kBVecsPerRow;

static_assert(BM % kWarpM == 0 && BN % kWarpN == 0,
              "BM and BN are multiples of the 64 x 64 warp tile");
static_assert(kThreads == 128 || kThreads == 256,
              "BM * BN must be 2 or 4 warp tiles of 64 x 64: 128 or 256 threads per block");
static_assert(VEC == 1 || VEC == 4, "VEC is 1 (4-byte copies of B, any alignment) or 4 (16-byte)");
static_assert(BK % 8 == 0, "BK is a multiple of 8: A is copied in runs of 8 floats along K");
static_assert(STAGES >= 2, "at least 2 stages: one multiplied while the next is copied");
static_assert(BM % kARowStep == 0 && BM * BK % kThreads == 0,
              "the A tile (BM x BK) must split evenly into runs of 8 floats among the threads");
static_assert(kThreads % kBVecsPerRow == 0 && BK % kBRowStep == 0,
              "the B tile (BK x BN) must split into whole rows evenly among the threads");
static_assert(!(kThreads == 128 && BK == 16 && VEC == 1),
              "no BK 16 with 4-byte copies of B at 128 threads: ptxas spills their registers");
static_assert(!(STREAM_K && BK == 16 && VEC == 1),
              "no BK 16 with 4-byte copies of B with STREAM_K: ptxas spills their registers");
static_assert(STREAM_K == 0 || kThreads == 256,
              "STREAM_K blocks are 256 threads, one per SM: all of them are resident at once");

extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc
#if STREAM_K
                   , const stream_k::WorkSplit split
#endif
) {
  // Dynamic: the stages exceed the 48 KiB static limit (the loader opts in).
  extern __shared__ float4 smem4[];
  float* const smem = reinterpret_cast<float*>(smem4);  // STAGES x {As[BK][kAStride], Bs[BK][BN]}
  const unsigned smem_base = shared_address(smem);

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int frag_m = (warp / (BN / kWarpN)) * kWarpM + (lane / kLanesN) * 4;
  const int frag_n = (warp % (BN / kWarpN)) * kWarpN + (lane % kLanesN) * 4;

  // This thread's first copy of A (row a_row, k a_k of the tile) and of B (row b_row, column
  // b_col); its other copies are compile-time steps from them.
  const int a_k = tid % 8;
  const int a_row = tid / 8;
  const int b_row = tid / kBVecsPerRow;
  const int b_col = (tid % kBVecsPerRow) * VEC;
  const unsigned a_dst = smem_base + (a_k * kAStride + a_row) * 4;
  const unsigned b_dst = smem_base + (kAStage + b_row * BN + b_col) * 4;
  const int k_tiles = K / BK + (K % BK != 0);  // not (K + BK - 1) / BK: K may be near 2^31

  // K tiles [k_begin, k_end) of the tile of C whose first element is (m0, n0). With STREAM_K, a
  // block that finishes a cut tile adds the partial sums of blocks first .. blockIdx.x - 1.
  auto run_unit = [&](int m0, int n0, int k_begin, int k_end, int first) {
    // Remaining extents instead of m0 + row < M: no int overflow for M or N near 2^31.
    const int rem_m = M - m0;
    const int rem_n = N - n0;
    const float* const a_src = A + static_cast<long long>(m0 + a_row) * lda + a_k;
    const float* const b_src = B + static_cast<long long>(b_row) * ldb + n0 + b_col;
    const int a_rows_left = rem_m - a_row;
    const int b_cols_left = rem_n - b_col;

    // Copies K tile `tile` into stage `stage`. A tile inside M x N and K takes no bounds check (the
    // same for all threads of the block, so the branch never diverges); elsewhere what lies outside
    // is zero-filled, its source address left at the matrix's first element.
    const bool inside = rem_m >= BM && rem_n >= BN;
    auto copy_whole_tile = [&](int tile, int stage) {
      const float* as = a_src + static_cast<long long>(tile) * BK;
      const unsigned ad = a_dst + static_cast<unsigned>(stage * kStage * 4);
#pragma unroll
      for (int p = 0; p < kACopies; ++p) {
        const int row = (p * kARowStep) % BM;  // added to a_row, which is < kARowStep
        const int chunk = (p * kARowStep) / BM;
        copy_async<4>(ad + (chunk * 8 * kAStride + row) * 4,
              as + static_cast<long long>(row) * lda + chunk * 8);
      }
      const float* bs = b_src + static_cast<long long>(tile) * BK * ldb;
      const unsigned bd = b_dst + static_cast<unsigned>(stage * kStage * 4);
#pragma unroll
      for (int p = 0; p < kBCopies; ++p) {
        copy_async<VEC * 4>(bd + p * kBRowStep * BN * 4,
                            bs + static_cast<long long>(p) * kBRowStep * ldb);
      }
    };
    auto copy_edge_tile = [&](int tile, int stage) {
      const int k_left = K - tile * BK;
      const float* as = a_src + static_cast<long long>(tile) * BK;
      const unsigned ad = a_dst + static_cast<unsigned>(stage * kStage * 4);
#pragma unroll
      for (int p = 0; p < kACopies; ++p) {
        const int row = (p * kARowStep) % BM;
        const int chunk = (p * kARowStep) / BM;
        const bool in = row < a_rows_left && chunk * 8 + a_k < k_left;
        copy_async_or_zeros<4>(ad + (chunk * 8 * kAStride + row) * 4,
                       in ? as + static_cast<long long>(row) * lda + chunk * 8 : A, in ? 4 : 0);
      }
      const float* bs = b_src + static_cast<long long>(tile) * BK * ldb;
      const unsigned bd = b_dst + static_cast<unsigned>(stage * kStage * 4);
#pragma unroll
      for (int p = 0; p < kBCopies; ++p) {
        const int row = p * kBRowStep;  // added to b_row
        const int cols = b_row + row < k_left ? min(max(b_cols_left, 0), VEC) : 0;
        const float* src = cols > 0 ? bs + static_cast<long long>(row) * ldb : B;
        copy_async_or_zeros<VEC * 4>(bd + row * BN * 4, src, static_cast<unsigned>(cols * 4));
      }
    };
    auto copy_tile = [&](int tile, int stage) {
      if (inside && K - tile * BK >= BK)
        copy_whole_tile(tile, stage);
      else
        copy_edge_tile(tile, stage);
    };

    // The first STAGES tiles, one commit group each (empty past the last tile, so that every wait
    // below counts the same groups).
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      if (k_begin + s < k_end) copy_tile(k_begin + s, s);
      commit_copies();
    }
    wait_copies<STAGES - 1>();  // tile 0 has landed
    __syncthreads();            // ... for every thread's copies

    float acc[kThreadM][kThreadN];
#pragma unroll
    for (int i = 0; i < kThreadM; ++i)
#pragma unroll
      for (int j = 0; j < kThreadN; ++j) acc[i][j] = 0.0f;

    // Fragments of one k: kIterM float4 of A's column, kIterN float4 of B's row; two sets, the
    // next k's loading while this one's FMAs run.
    float a_frag[2][kThreadM];
    float b_frag[2][kThreadN];
    auto load_fragments = [&](int set, int stage, int k) {
      const float* as = smem + stage * kStage + k * kAStride + frag_m;
      const float* bs = smem + stage * kStage + kAStage + k * BN + frag_n;
#pragma unroll
      for (int i = 0; i < kIterM; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(as + i * kSubM);
        a_frag[set][i * 4] = v.x;
        a_frag[set][i * 4 + 1] = v.y;
        a_frag[set][i * 4 + 2] = v.z;
        a_frag[set][i * 4 + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < kIterN; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(bs + j * kSubN);
        b_frag[set][j * 4] = v.x;
        b_frag[set][j * 4 + 1] = v.y;
        b_frag[set][j * 4 + 2] = v.z;
        b_frag[set][j * 4 + 3] = v.w;
      }
    };

    if (k_begin < k_end) load_fragments(0, 0, 0);
    int stage = 0;
    for (int t = k_begin; t < k_end; ++t) {
#pragma unroll
      for (int k = 0; k < BK; ++k) {
        const int next = (k + 1) & 1;
        if (k == BK - 1) {
          // Tile t + 1 has landed for every thread, and every thread has loaded its last fragments
          // of tile t (the set used below): its stage takes tile t + STAGES.
          wait_copies<STAGES - 2>();
          __syncthreads();
          if (t + STAGES < k_end) copy_tile(t + STAGES, stage);
          commit_copies();
          stage = stage + 1 == STAGES ? 0 : stage + 1;
          load_fragments(next, stage, 0);
        } else {
          load_fragments(next, stage, k + 1);
        }
        const float* a = a_frag[k & 1];
        const float* b = b_frag[k & 1];
#pragma unroll
        for (int i = 0; i < kThreadM; ++i)
#pragma unroll
          for (int jj = 0; jj < kThreadN; ++jj) {
            const int j = (i & 1) ? kThreadN - 1 - jj : jj;  // the snake (see the top)
            acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
          }
      }
    }

#if STREAM_K
    // A tile cut between blocks: a block without its last K tiles hands its partial sum on; the
    // block with them adds the others' to its own in block order, so the result does not depend on
    // timing. Accumulator i of every thread is one coalesced row of kThreads floats, stored and
    // loaded a float at a time: float4 loads (four accumulators each) made ptxas hold a second set
    // of registers beside the accumulators, and spill.
    float* const flat = &acc[0][0];
    if (k_end < k_tiles) {
      float* const mine = split.partials + static_cast<long long>(blockIdx.x) * BM * BN + tid;
#pragma unroll
      for (int i = 0; i < kThreadM * kThreadN; ++i) __stcg(mine + i * kThreads, flat[i]);
      __syncthreads();
      if (tid == 0) stream_k::raise_flag(split, static_cast<int>(blockIdx.x));
      return;
    }
    if (first < static_cast<int>(blockIdx.x)) {
      if (tid == 0) stream_k::wait_for_flags(split, first, static_cast<int>(blockIdx.x));
      __syncthreads();
      for (int c = first; c < static_cast<int>(blockIdx.x); ++c) {
        const float* const theirs = split.partials + static_cast<long long>(c) * BM * BN + tid;
#pragma unroll
        for (int i = 0; i < kThreadM * kThreadN; ++i) flat[i] += __ldcg(theirs + i * kThreads);
      }
    }
#else
    (void)first;
#endif

#pragma unroll
    for (int i = 0; i < kIterM; ++i)
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int row = frag_m + i * kSubM + r;
        if (row >= rem_m) continue;
        float* const c_row = C + static_cast<long long>(m0 + row) * ldc + n0;
#pragma unroll
        for (int j = 0; j < kIterN; ++j) {
          const int col = frag_n + j * kSubN;
          const float* v = &acc[i * 4 + r][j * 4];
          float* const c = c_row + col;
          if (VEC == 4 && col + 4 <= rem_n) {
            store_scaled4(c, alpha, make_float4(v[0], v[1], v[2], v[3]), beta);
          } else {
#pragma unroll
            for (int e = 0; e < 4; ++e)
              if (col + e < rem_n)
                c[e] = scale(alpha, v[e], beta, c + e);
          }
        }
      }
  };

#if STREAM_K
  // Each unit's copies refill the stages that the previous unit's last fragment loads read: a
  // barrier between them.
  const int block = static_cast<int>(blockIdx.x);
  bool first_unit = true;
  stream_k::for_each_stream_k_unit(split, k_tiles, block, [&](const stream_k::Unit& u) {
    if (!first_unit) __syncthreads();
    first_unit = false;
    // Found before the unit's accumulators are live: its 64-bit divisions are calls around which
    // ptxas would spill them.
    const int first = u.k_begin > 0 && u.k_end == k_tiles
                          ? stream_k::first_block_of_tile(split, k_tiles, u.tile, block)
                          : block;
    run_unit(u.tile / split.tiles_n * BM, u.tile % split.tiles_n * BN, u.k_begin, u.k_end, first);
  });
#else
  run_unit(static_cast<int>(blockIdx.y) * BM, static_cast<int>(blockIdx.x) * BN, 0, k_tiles, 0);
#endif
}
