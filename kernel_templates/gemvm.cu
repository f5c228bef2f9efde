// gemvm: "a few row vectors times a matrix", M <= MAX_M <= 16 (skinny.cuh says what it shares
// with gemvn.cu). The large operand is B (K x N), read along its rows. A block covers 32 x COLS
// columns (COLS adjacent columns per lane); its 8 warps split its K range in groups of kGroup
// consecutive rows of B, round robin. A (M x K) is read with loads that are the same for all
// lanes of a warp (one broadcast transaction), 4 consecutive k at a time.
// At MAX_M = 8 and 16 the shape is "wide": A is staged in shared memory once per block and reused
// from registers (see kWide).
// B_RING > 0 (gemvmring family, wide shape only) streams B through shared memory instead of
// registers: each thread copies its own columns of the next B_RING groups of rows with cp.async
// and later reads back only what it copied, so no barrier guards the ring, and a block keeps
// B_RING groups of B in flight where the registers hold two (see stream_columns_ring).
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME gemvm
#endif
#ifndef MAX_M
#define MAX_M 1
#endif
#ifndef B_RING
#define B_RING 0
#endif

#include "skinny.cuh"

#ifndef COLS
#define COLS 1
#endif
static_assert(MAX_M == 1 || MAX_M == 2 || MAX_M == 4 || MAX_M == 8 || MAX_M == 16,
              "MAX_M is 1, 2, 4, 8 or 16");
static_assert(COLS == 1 || COLS == 2 || COLS == 4, "COLS is 1, 2 or 4 columns of B per lane");
// MAX_M >= 8 is the wide shape (below): A staged in shared memory, 4 columns of B per lane.
constexpr bool kWide = MAX_M >= 8;
static_assert(kWide ? COLS == 4 || B_RING > 0 : COLS == 1 || COLS * MAX_M <= 4,
              "COLS is 4 where MAX_M >= 8 (the wide shape; any with B_RING); below, COLS above 1 "
              "only where COLS x MAX_M <= 4: more accumulators do not fit the registers of 4 blocks per SM");
constexpr int kColumns = 32 * COLS;  // columns of a block
// Consecutive rows of B per warp and group: 8 where a lane has one column and A few rows, else
// 4 (4 to 16 floats per lane), with the next group's in flight; a multiple of 4, so
// that A is read 4 k at a time from an aligned start.
constexpr int kGroup = MAX_M >= 4 || COLS > 1 ? 4 : 8;
constexpr int kOutputs = MAX_M * kColumns;
// Blocks per SM that the registers must allow (64 registers per thread for 4, 80 for 3, 128
// for 2), as gemvn's.
// The wide shape asks for one: ptxas keeps the MAX_M x 4 accumulators, both groups of B and a
// group's A (read from shared memory ahead of its FMAs) in 156 (MAX_M = 8) to 226 (16)
// registers, and spills at the 128 of two blocks.
constexpr int kMinBlocks = kWide ? 1 : COLS > 1 ? 3 : 4;
// Rows of C whose per-warp sums go through shared memory at once: at most 16 KiB.
constexpr int kReduceRowsBySmem = 4096 / (kWarps * kColumns);
constexpr int kReduceRows = kReduceRowsBySmem < MAX_M ? kReduceRowsBySmem : MAX_M;
static_assert(kReduceRows >= 1 && MAX_M % kReduceRows == 0, "row groups of the reduction");

// The column (of the block's kColumns) of a lane's value e: COLS adjacent ones per lane where
// they are loaded as one vector, else 32 apart so that each scalar load is coalesced.
template <bool kVecB>
static __device__ __forceinline__ int lane_column(int lane, int e) {
  return kVecB ? lane * COLS + e : e * 32 + lane;
}

struct BGroup {
  float v[kGroup][COLS];
};

template <bool kVecB>
static __device__ __forceinline__ void load_group(BGroup& b, const float* B, long long ldb,
                                                  long long col0, int N, long long g0,
                                                  long long k_end, int lane) {
  // Every row inside the slice and every column of the lane inside N: all but the edges.
  const bool rows_inside = g0 + kGroup <= k_end;
  const bool cols_inside = col0 + lane_column<kVecB>(lane, COLS - 1) < N;
  (void)cols_inside;  // only the vector loads ask
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    const long long k = g0 + g;
    const float* row = B + k * ldb + col0;
    if constexpr (kVecB && COLS == 4) {
      if ((rows_inside || k < k_end) && cols_inside) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(row + lane * 4));
        b.v[g][0] = v.x;
        b.v[g][1] = v.y;
        b.v[g][2] = v.z;
        b.v[g][3] = v.w;
        continue;
      }
    } else if constexpr (kVecB && COLS == 2) {
      if ((rows_inside || k < k_end) && cols_inside) {
        const float2 v = __ldg(reinterpret_cast<const float2*>(row + lane * 2));
        b.v[g][0] = v.x;
        b.v[g][1] = v.y;
        continue;
      }
    }
#pragma unroll
    for (int e = 0; e < COLS; ++e) {
      // Columns past N read column N - 1 of the row (never stored); rows past the slice are 0.
      const int c = lane_column<kVecB>(lane, e);
      const long long col = min(col0 + c, static_cast<long long>(N) - 1) - col0;
      b.v[g][e] = rows_inside || k < k_end ? __ldg(row + col) : 0.0f;
    }
  }
}

// acc += rows [g0, g0 + kGroup) of A (MAX_M x K, read 4 k at a time) times the group of B.
template <bool kVecA>
static __device__ __forceinline__ void multiply_group(float (&acc)[MAX_M][COLS], const BGroup& b,
                                                      const float* A, long long lda, int M,
                                                      long long g0, long long k_end) {
  const bool rows_inside = g0 + kGroup <= k_end;
#pragma unroll
  for (int g = 0; g < kGroup; g += 4)
#pragma unroll
    for (int m = 0; m < MAX_M; ++m) {
      // Rows of A past M read row M - 1 (never stored).
      const float* a_row = A + static_cast<long long>(min(m, M - 1)) * lda + g0 + g;
      float a[4];
      if (kVecA && (rows_inside || g0 + g + 4 <= k_end)) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(a_row));
        a[0] = v.x;
        a[1] = v.y;
        a[2] = v.z;
        a[3] = v.w;
      } else {
#pragma unroll
        for (int e = 0; e < 4; ++e) a[e] = rows_inside || g0 + g + e < k_end ? __ldg(a_row + e) : 0.0f;
      }
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int c = 0; c < COLS; ++c) acc[m][c] = fmaf(a[e], b.v[g + e][c], acc[m][c]);
    }
}

// A warp's share of the block's K range, group after group, the next group's loads of B issued
// before the current group's FMAs.
template <bool kVecA, bool kVecB>
static __device__ __forceinline__ void stream_columns(float (&acc)[MAX_M][COLS], KSlice slice,
                                                      int warp, int lane, const float* A,
                                                      long long lda, int M, const float* B,
                                                      long long ldb, long long col0, int N) {
  constexpr long long kStep = static_cast<long long>(kWarps) * kGroup;
  long long g0 = slice.begin + static_cast<long long>(warp) * kGroup;
  if (g0 >= slice.end) return;
  BGroup x, y;
  load_group<kVecB>(x, B, ldb, col0, N, g0, slice.end, lane);
  // Two groups per iteration, so that the buffers swap roles without copies.
  for (;;) {
    if (g0 + kStep < slice.end) load_group<kVecB>(y, B, ldb, col0, N, g0 + kStep, slice.end, lane);
    multiply_group<kVecA>(acc, x, A, lda, M, g0, slice.end);
    g0 += kStep;
    if (g0 >= slice.end) return;
    if (g0 + kStep < slice.end) load_group<kVecB>(x, B, ldb, col0, N, g0 + kStep, slice.end, lane);
    multiply_group<kVecA>(acc, y, A, lda, M, g0, slice.end);
    g0 += kStep;
    if (g0 >= slice.end) return;
  }
}

// The wide shape (MAX_M = 8 or 16). A lane with one column reads MAX_M floats of A (4 float4
// broadcasts per 4 k and row) for every float of B: the kernel is bound by issuing loads, not by
// HBM. Here a lane owns COLS = 4 columns (MAX_M x 4 accumulators, 1 block per SM), so each
// float4 of A serves 16 FMAs, and the block stages kStageK k of A (MAX_M x kStageK floats, one
// float4 per thread) in shared memory, from which the lanes read it as broadcasts: A is read
// from L2 once per block, not once per warp, and the next stage's float4 is loaded into
// registers before the current stage's FMAs.
constexpr int kStageK = 4 * kThreads / MAX_M;  // 64 (MAX_M = 16) or 128 (8)
constexpr int kGroupsPerStage = kStageK / (kWarps * kGroup);
static_assert(!kWide || kGroupsPerStage % 2 == 0, "the B buffers swap roles twice per stage");

// Row `row` of A at k..k+3 (zeros at or past k_end).
template <bool kVecA>
static __device__ __forceinline__ float4 load_a4(const float* row, long long k, long long k_end) {
  if (kVecA && k + 4 <= k_end) return __ldg(reinterpret_cast<const float4*>(row + k));
  float e[4];
#pragma unroll
  for (int j = 0; j < 4; ++j) e[j] = k + j < k_end ? __ldg(row + k + j) : 0.0f;
  return make_float4(e[0], e[1], e[2], e[3]);
}

// acc += the stage's A at rows [s, s + kGroup) of the stage times the group of B.
static __device__ __forceinline__ void multiply_staged(float (&acc)[MAX_M][COLS], const BGroup& b,
                                                       const float* stage, int s) {
#pragma unroll
  for (int g = 0; g < kGroup; g += 4)
#pragma unroll
    for (int m = 0; m < MAX_M; ++m) {
      const float4 v = *reinterpret_cast<const float4*>(stage + m * kStageK + s + g);
      const float a[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
      for (int e = 0; e < 4; ++e)
#pragma unroll
        for (int c = 0; c < COLS; ++c) acc[m][c] = fmaf(a[e], b.v[g + e][c], acc[m][c]);
    }
}

// The block's K range, stage after stage; within a stage the warps take its groups round robin,
// as stream_columns does. Every thread of the block calls it (barriers).
template <bool kVecA, bool kVecB>
static __device__ __forceinline__ void stream_columns_staged(float (&acc)[MAX_M][COLS],
                                                             KSlice slice, int warp, int lane,
                                                             const float* A, long long lda,
                                                             int M, const float* B, long long ldb,
                                                             long long col0, int N, float* stage) {
  constexpr long long kStep = static_cast<long long>(kWarps) * kGroup;
  // This thread's float4 of each stage: row am, k am_k..am_k + 3 of the stage.
  const int am = threadIdx.x / (kStageK / 4);
  const int am_k = threadIdx.x % (kStageK / 4) * 4;
  const float* a_row = A + static_cast<long long>(min(am, M - 1)) * lda;  // rows past M: M - 1
  float4 next_a = load_a4<kVecA>(a_row, slice.begin + am_k, slice.end);
  long long g0 = slice.begin + static_cast<long long>(warp) * kGroup;
  BGroup x, y;
  load_group<kVecB>(x, B, ldb, col0, N, g0, slice.end, lane);
  for (long long s0 = slice.begin; s0 < slice.end; s0 += kStageK) {
    __syncthreads();  // every warp is done with the previous stage
    *reinterpret_cast<float4*>(stage + am * kStageK + am_k) = next_a;
    __syncthreads();
    if (s0 + kStageK < slice.end) next_a = load_a4<kVecA>(a_row, s0 + kStageK + am_k, slice.end);
#pragma unroll 1
    for (int j = 0; j < kGroupsPerStage; j += 2) {
      const int s = (j * kWarps + warp) * kGroup;
      load_group<kVecB>(y, B, ldb, col0, N, g0 + kStep, slice.end, lane);
      multiply_staged(acc, x, stage, s);
      load_group<kVecB>(x, B, ldb, col0, N, g0 + 2 * kStep, slice.end, lane);
      multiply_staged(acc, y, stage, s + static_cast<int>(kStep));
      g0 += 2 * kStep;
    }
  }
}

#if B_RING
// The ring (B_RING > 0): B_RING slots of one group each, slot [row][thread][COLS] floats, so that
// a warp's copies and reads of one row are consecutive bytes (conflict-free). Only the wide shape
// streams through it; a lane's COLS columns of a row are one copy of 4, 8 or 16 bytes.
static_assert(B_RING == 0 || (kWide && B_RING >= 2 && B_RING <= 8),
              "B_RING (groups of B in flight per warp) is 2 to 8, for the wide shape (MAX_M >= 8) only");
constexpr int kSlotFloats = kGroup * kThreads * COLS;
constexpr int kRingFloats = B_RING * kSlotFloats;

// Copies this thread's columns of rows [g0, g0 + kGroup) of B into `slot`: the same columns as
// load_group's (lane_column), zeros for rows at or past k_end and columns past N (never stored).
template <bool kVecB>
static __device__ __forceinline__ void copy_group(float* slot, const float* B, long long ldb,
                                                  long long col0, int N, long long g0,
                                                  long long k_end, int lane) {
  float* const mine = slot + threadIdx.x * COLS;
#pragma unroll
  for (int g = 0; g < kGroup; ++g) {
    const long long k = g0 + g;
    const float* row = B + k * ldb + col0;
    const unsigned dst = shared_address(mine + g * kThreads * COLS);
    if constexpr (kVecB) {
      // Aligned rows: one copy of the lane's COLS columns, cut short at N.
      const long long left = static_cast<long long>(N) - col0 - lane * COLS;
      const long long most = COLS;
      const int floats = k < k_end ? static_cast<int>(min(max(left, 0LL), most)) : 0;
      copy_async_or_zeros<COLS * 4>(dst, floats > 0 ? row + lane * COLS : B,
                              static_cast<unsigned>(floats * 4));
    } else {
#pragma unroll
      for (int e = 0; e < COLS; ++e) {
        const int c = lane_column<false>(lane, e);
        const bool in = k < k_end && col0 + c < N;
        copy_async_or_zeros<4>(dst + e * 4, in ? row + c : B, in ? 4u : 0u);
      }
    }
  }
}

// stream_columns_staged with B through the ring: each warp copies its groups B_RING ahead of the
// FMAs; a thread waits for its own oldest copy, reads it back, multiplies, and refills that slot
// with the group B_RING further on (after the FMAs have consumed what it read). The stages of A
// and their barriers are stream_columns_staged's.
template <bool kVecA, bool kVecB>
static __device__ __forceinline__ void stream_columns_ring(float (&acc)[MAX_M][COLS], KSlice slice,
                                                           int warp, int lane, const float* A,
                                                           long long lda, int M, const float* B,
                                                           long long ldb, long long col0, int N,
                                                           float* stage, float* ring) {
  constexpr long long kStep = static_cast<long long>(kWarps) * kGroup;
  const int am = threadIdx.x / (kStageK / 4);
  const int am_k = threadIdx.x % (kStageK / 4) * 4;
  const float* a_row = A + static_cast<long long>(min(am, M - 1)) * lda;  // rows past M: M - 1
  float4 next_a = load_a4<kVecA>(a_row, slice.begin + am_k, slice.end);
  // The next group to copy; every commit group is one group of B (empty past the slice, so
  // that every wait counts the same groups).
  long long g_copy = slice.begin + static_cast<long long>(warp) * kGroup;
#pragma unroll
  for (int r = 0; r < B_RING; ++r) {
    copy_group<kVecB>(ring + r * kSlotFloats, B, ldb, col0, N, g_copy, slice.end, lane);
    commit_copies();
    g_copy += kStep;
  }
  int slot = 0;
  const float* const mine = ring + threadIdx.x * COLS;
  for (long long s0 = slice.begin; s0 < slice.end; s0 += kStageK) {
    __syncthreads();  // every warp is done with the previous stage
    *reinterpret_cast<float4*>(stage + am * kStageK + am_k) = next_a;
    __syncthreads();
    if (s0 + kStageK < slice.end) next_a = load_a4<kVecA>(a_row, s0 + kStageK + am_k, slice.end);
#pragma unroll
    for (int j = 0; j < kGroupsPerStage; ++j) {
      wait_copies<B_RING - 1>();  // the oldest of this thread's groups has landed
      BGroup b;
#pragma unroll
      for (int g = 0; g < kGroup; ++g) {
        const float* const row = mine + slot * kSlotFloats + g * kThreads * COLS;
        if constexpr (COLS == 4) {
          const float4 v = *reinterpret_cast<const float4*>(row);
          b.v[g][0] = v.x;
          b.v[g][1] = v.y;
          b.v[g][2] = v.z;
          b.v[g][3] = v.w;
        } else if constexpr (COLS == 2) {
          const float2 v = *reinterpret_cast<const float2*>(row);
          b.v[g][0] = v.x;
          b.v[g][1] = v.y;
        } else {
          b.v[g][0] = row[0];
        }
      }
      multiply_staged(acc, b, stage, (j * kWarps + warp) * kGroup);
      copy_group<kVecB>(ring + slot * kSlotFloats, B, ldb, col0, N, g_copy, slice.end, lane);
      commit_copies();
      g_copy += kStep;
      slot = slot + 1 == B_RING ? 0 : slot + 1;
    }
  }
  wait_copies<0>();  // the copies past the slice are empty, but none may land after the kernel
}
#endif

template <bool kVecB>
static __device__ __forceinline__ void stream_columns_a(float (&acc)[MAX_M][COLS], KSlice slice,
                                                        int warp, int lane, const float* A,
                                                        long long lda, int M, const float* B,
                                                        long long ldb, long long col0, int N,
                                                        float* a_stage, float* ring) {
#if B_RING
  if (aligned_rows(A, lda, 4))
    stream_columns_ring<true, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N, a_stage,
                                     ring);
  else
    stream_columns_ring<false, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N, a_stage,
                                      ring);
#else
  (void)ring;
  if constexpr (kWide) {
    if (aligned_rows(A, lda, 4))
      stream_columns_staged<true, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N,
                                         a_stage);
    else
      stream_columns_staged<false, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N,
                                          a_stage);
  } else if (aligned_rows(A, lda, 4)) {
    stream_columns<true, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);
  } else {
    stream_columns<false, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);
  }
#endif
}

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) TILEMM_CLUSTER
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
#if B_RING
  // All dynamic (the ring alone exceeds the 48 KiB of static shared memory): the warps' sums, the
  // stage of A, the ring, and with a split the block's sums; each a multiple of 4 floats.
  extern __shared__ float4 dynamic_smem4[];
  float* const warp_sums = reinterpret_cast<float*>(dynamic_smem4);
  float* const a_stage = warp_sums + kWarps * kReduceRows * kColumns;
  float* const ring = a_stage + MAX_M * kStageK;
#if SPLIT_K > 1
  float* const block_sums = ring + kRingFloats;
#endif
#else
  __shared__ float warp_sums[kWarps * kReduceRows * kColumns];
#if SPLIT_K > 1
  __shared__ float block_sums[kOutputs];
#endif
  // The wide shape's stage of A (one float4 per thread), unused by the others.
  __shared__ __align__(16) float a_stage[kWide ? MAX_M * kStageK : 4];
  float* const ring = nullptr;
#endif
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const long long col0 = static_cast<long long>(blockIdx.x) * kColumns;
  const KSlice slice = k_slice(K);

  float acc[MAX_M][COLS] = {};
  const bool b_vec = COLS > 1 && aligned_rows(B, ldb, COLS);
  if (b_vec)
    stream_columns_a<(COLS > 1)>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N, a_stage, ring);
  else
    stream_columns_a<false>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N, a_stage, ring);

  // The warps' sums, kReduceRows rows of C at a time, summed in warp order.
  auto wanted = [&](int o) { return o / kColumns < M && col0 + o % kColumns < N; };
#pragma unroll
  for (int r0 = 0; r0 < MAX_M; r0 += kReduceRows) {
    if (r0 >= M) break;  // M is the same in every thread: the barriers stay uniform
    __syncthreads();     // the previous group's sums are read
#pragma unroll
    for (int r = 0; r < kReduceRows; ++r)
#pragma unroll
      for (int e = 0; e < COLS; ++e) {
        const int c = b_vec ? lane_column<true>(lane, e) : lane_column<false>(lane, e);
        warp_sums[(warp * kReduceRows + r) * kColumns + c] = acc[r0 + r][e];
      }
    __syncthreads();
    for (int i = threadIdx.x; i < kReduceRows * kColumns; i += kThreads) {
      const int o = r0 * kColumns + i;
      if (!wanted(o)) continue;
      float sum = warp_sums[i];
#pragma unroll
      for (int w = 1; w < kWarps; ++w) sum += warp_sums[w * kReduceRows * kColumns + i];
#if SPLIT_K > 1
      block_sums[o] = sum;
#else
      float* c = C + static_cast<long long>(o / kColumns) * ldc + col0 + o % kColumns;
      *c = scale(alpha, sum, beta, c);
#endif
    }
  }
#if SPLIT_K > 1
  store_block_sums<kOutputs>(block_sums, wanted, [&](int o, float sum) {
    float* c = C + static_cast<long long>(o / kColumns) * ldc + col0 + o % kColumns;
    *c = scale(alpha, sum, beta, c);
  });
#endif
}
