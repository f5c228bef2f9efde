// gemvn: "a matrix times a few vectors", N <= MAX_N <= 16 (skinny.cuh says what it shares with
// gemvm.cu). The large operand is A (M x K), read along its rows. A warp owns ROWS consecutive
// rows; the block's warps are kWarpsK along K times kWarpsR along rows, more of them along rows
// where B is wider, so that each row of B a block reads serves about as many floats of A as it has
// (B's rows are read once per block, not once per row). A warp streams its rows in chunks of 32
// lanes x 4 consecutive floats x kLoads, interleaved with the block's other warps along K. For
// each k a lane multiplies its A values by row k of B (MAX_N floats).
// At MAX_N = 8 and 16 the shape is "wide": B is staged in shared memory once per block and reused
// from registers (see kWide).
// A_RING > 0 (gemvnring family, wide shape only) streams A through shared memory instead of
// registers: a warp copies the next A_RING - 1 steps of its rows with cp.async, one float4 per
// lane and step, and its lanes read them back after the warp's barrier (see stream_rows_ring),
// where the registers hold one step.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME gemvn
#endif
#ifndef MAX_N
#define MAX_N 1
#endif
#ifndef A_RING
#define A_RING 0
#endif

#include "skinny.cuh"

#ifndef ROWS
#define ROWS 1
#endif
static_assert(MAX_N == 1 || MAX_N == 2 || MAX_N == 4 || MAX_N == 8 || MAX_N == 16,
              "MAX_N is 1, 2, 4, 8 or 16");
static_assert(ROWS == 1 || ROWS == 2 || ROWS == 4, "ROWS is 1, 2 or 4 rows of A per warp");
// MAX_N >= 8 is the wide shape (below): B staged in shared memory, 4 rows of A per warp.
constexpr bool kWide = MAX_N >= 8;
static_assert(kWide ? ROWS == 4 : ROWS == 1 || ROWS * MAX_N <= 4,
              "ROWS is 4 where MAX_N >= 8 (the wide shape); below, ROWS above 1 only where "
              "ROWS x MAX_N <= 4: more accumulators do not fit the registers of 4 blocks per SM");
// Warps along K and along rows: B's rows are read once per block, so a block of kWarpsR * ROWS
// rows reads MAX_N floats of B for every kWarpsR * ROWS floats of A.
constexpr int kWarpsK = MAX_N >= 8 ? 1 : kWarps / MAX_N;
constexpr int kWarpsR = kWarps / kWarpsK;
constexpr int kRowsPerBlock = kWarpsR * ROWS;
constexpr int kOutputs = kRowsPerBlock * MAX_N;
// float4 loads of each row per lane and chunk: 8 floats of A per lane and chunk where a warp
// has one row and B is narrow, 16 with the next chunk's in flight; one float4 per row where
// more rows or a wider B take the registers. Measured against ptxas's report: more spills at
// the register cap of kMinBlocks blocks per SM.
constexpr int kLoads = ROWS == 1 && MAX_N <= 4 ? 2 : 1;
constexpr int kPerLane = kLoads * 4;           // floats of a row per lane and chunk
constexpr int kChunk = 32 * kPerLane;          // floats of K per warp and chunk
constexpr int kBVec = MAX_N < 4 ? MAX_N : 4;   // widest load along a row of B
// Blocks per SM that the registers must allow (64 registers per thread for 4, 80 for 3, 128
// for 2): the accumulators and loads in flight of the wider variants do not fit 64 unspilled.
// The wide ones fit 128 with their K counters in 32 bits (stream_rows_wide). With A through the
// ring (A_RING) a lane holds one step of A, not two, and 80 fit too: MIN_BLOCKS (2 or 3) chooses
// between more registers and more blocks per SM, which win on different shapes.
#ifndef MIN_BLOCKS
#define MIN_BLOCKS 2
#endif
static_assert(MIN_BLOCKS == 2 || (A_RING && MIN_BLOCKS == 3),
              "MIN_BLOCKS is 2, or 3 with A through the ring (A_RING)");
constexpr int kMinBlocks = kWide ? MIN_BLOCKS : ROWS == 4 ? 3 : 4;

// One chunk of a warp's rows of A: [row][element], element j at k_of(j).
struct AChunk {
  float v[ROWS][kPerLane];
};

// The k of element j of a lane's chunk that starts at c0: four consecutive floats per float4
// load, 128 floats apart (kVec); one float per load, 32 apart (scalar). Both cover
// [c0, c0 + kChunk) with every load coalesced across the warp.
template <bool kVec>
static __device__ __forceinline__ long long chunk_k(long long c0, int lane, int j) {
  return kVec ? c0 + (j / 4) * 128 + lane * 4 + j % 4 : c0 + j * 32 + lane;
}

template <bool kVec>
static __device__ __forceinline__ void load_chunk(AChunk& a, const float* const* rows,
                                                  long long c0, long long k_end, int lane) {
  const bool whole = c0 + kChunk <= k_end;  // all but a warp's last chunk
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    if constexpr (kVec) {
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const long long k = chunk_k<true>(c0, lane, u * 4);
        if (whole || k + 4 <= k_end) {
          const float4 v = __ldg(reinterpret_cast<const float4*>(rows[r] + k));
          a.v[r][u * 4] = v.x;
          a.v[r][u * 4 + 1] = v.y;
          a.v[r][u * 4 + 2] = v.z;
          a.v[r][u * 4 + 3] = v.w;
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) a.v[r][u * 4 + e] = k + e < k_end ? __ldg(rows[r] + k + e) : 0.0f;
        }
      }
    } else {
#pragma unroll
      for (int j = 0; j < kPerLane; ++j) {
        const long long k = chunk_k<false>(c0, lane, j);
        a.v[r][j] = whole || k < k_end ? __ldg(rows[r] + k) : 0.0f;
      }
    }
  }
}

// Row k of B, MAX_N floats, zeros beyond N (and for k at or past k_end).
static __device__ __forceinline__ void load_b_row(float (&b)[MAX_N], const float* B, long long ldb,
                                                  int N, long long k, bool inside, bool b_vec) {
  const float* row = B + k * ldb;
#pragma unroll
  for (int n = 0; n < MAX_N; n += kBVec) {
    if constexpr (kBVec == 4) {
      if (inside && b_vec && n + 4 <= N) {
        const float4 v = __ldg(reinterpret_cast<const float4*>(row + n));
        b[n] = v.x;
        b[n + 1] = v.y;
        b[n + 2] = v.z;
        b[n + 3] = v.w;
        continue;
      }
    } else if constexpr (kBVec == 2) {
      if (inside && b_vec && n + 2 <= N) {
        const float2 v = __ldg(reinterpret_cast<const float2*>(row + n));
        b[n] = v.x;
        b[n + 1] = v.y;
        continue;
      }
    }
#pragma unroll
    for (int e = 0; e < kBVec; ++e) b[n + e] = inside && n + e < N ? __ldg(row + n + e) : 0.0f;
  }
}

// acc += this chunk of A times the matching rows of B.
template <bool kVec>
static __device__ __forceinline__ void multiply_chunk(float (&acc)[ROWS][MAX_N], const AChunk& a,
                                                      long long c0, long long k_end, int lane,
                                                      const float* B, long long ldb, int N,
                                                      bool b_vec, bool b_k4) {
  const bool whole = c0 + kChunk <= k_end;
  if constexpr (kVec && MAX_N == 1) {
    // A single column of B that is contiguous along K (ldb = 1): one float4 per float4 of A.
    if (b_k4) {
#pragma unroll
      for (int u = 0; u < kLoads; ++u) {
        const long long k = chunk_k<true>(c0, lane, u * 4);
        float b[4];
        if (whole || k + 4 <= k_end) {
          const float4 v = __ldg(reinterpret_cast<const float4*>(B + k));
          b[0] = v.x;
          b[1] = v.y;
          b[2] = v.z;
          b[3] = v.w;
        } else {
#pragma unroll
          for (int e = 0; e < 4; ++e) b[e] = k + e < k_end ? __ldg(B + k + e) : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < 4; ++e)
#pragma unroll
          for (int r = 0; r < ROWS; ++r) acc[r][0] = fmaf(a.v[r][u * 4 + e], b[e], acc[r][0]);
      }
      return;
    }
  }
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const long long k = chunk_k<kVec>(c0, lane, j);
    float b[MAX_N];
    load_b_row(b, B, ldb, N, k, whole || k < k_end, b_vec);
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int n = 0; n < MAX_N; ++n) acc[r][n] = fmaf(a.v[r][j], b[n], acc[r][n]);
  }
}

// A warp's share of the block's K range, chunk after chunk, the next chunk's loads issued before
// the current chunk's FMAs.
template <bool kVec>
static __device__ __forceinline__ void stream_rows(float (&acc)[ROWS][MAX_N],
                                                   const float* const* rows, KSlice slice,
                                                   int wk, int lane, const float* B,
                                                   long long ldb, int N, bool b_vec, bool b_k4) {
  constexpr long long kStep = static_cast<long long>(kWarpsK) * kChunk;
  long long c0 = slice.begin + static_cast<long long>(wk) * kChunk;
  if (c0 >= slice.end) return;
  AChunk x, y;
  load_chunk<kVec>(x, rows, c0, slice.end, lane);
  // Two chunks per iteration, so that the buffers swap roles without copies.
  for (;;) {
    if (c0 + kStep < slice.end) load_chunk<kVec>(y, rows, c0 + kStep, slice.end, lane);
    multiply_chunk<kVec>(acc, x, c0, slice.end, lane, B, ldb, N, b_vec, b_k4);
    c0 += kStep;
    if (c0 >= slice.end) return;
    if (c0 + kStep < slice.end) load_chunk<kVec>(x, rows, c0 + kStep, slice.end, lane);
    multiply_chunk<kVec>(acc, y, c0, slice.end, lane, B, ldb, N, b_vec, b_k4);
    c0 += kStep;
    if (c0 >= slice.end) return;
  }
}

// The wide shape (MAX_N = 8 or 16). With a lane per k, every lane reads its own row of B (MAX_N
// floats) for one float of A: 4 to 16 times the bytes of A through the read-only cache, from as
// many cache lines as lanes, which bounds the kernel far below the HBM rate. Here the block
// stages kStageK rows of B in shared memory once (all its warps share one K range), and a lane
// owns 4 consecutive k (one float4 of A per row) and a quarter of B's columns (kLaneCols): the 32
// lanes are kKLanes along K times kNGroups along N. A warp keeps ROWS = 4 rows of A, so each
// shared load of B (kLaneCols floats) serves ROWS x kLaneCols FMAs, and each float of A is
// loaded by the kNGroups lanes that share its k (one transaction). The rows of the stage are
// kStride floats apart, MAX_N + MAX_N / 4, so that the lanes of one shared load (8 of float4,
// 16 of float2) hit distinct banks.
constexpr int kNGroups = 4;
constexpr int kKLanes = 32 / kNGroups;
constexpr int kLaneCols = MAX_N / kNGroups > 0 ? MAX_N / kNGroups : 1;
constexpr int kWarpStepK = kKLanes * 4;  // k per warp and step
constexpr int kStageK = 128;             // rows of B per stage: 4 steps
constexpr int kStepsPerStage = kStageK / kWarpStepK;
constexpr int kStride = MAX_N + MAX_N / 4;
constexpr int kRowQuads = MAX_N >= 4 ? MAX_N / 4 : 1;  // float4s per row of the stage
// Floats of a stage each thread loads: 8 (MAX_N = 16) or 4 (MAX_N = 8), as float4s.
constexpr int kStageLoads = kWide ? kStageK * MAX_N / 4 / kThreads : 1;
static_assert(!kWide || (kStageK * MAX_N) % (4 * kThreads) == 0, "whole float4s per thread");
static_assert(kStepsPerStage % 2 == 0, "the A buffers swap roles twice per stage");

struct AQuad {
  float v[ROWS][4];
};

// A warp's ROWS rows of A at k..k+3 (zeros at or past k_end).
template <bool kVec>
static __device__ __forceinline__ void load_quad(AQuad& a, const float* const* rows, long long k,
                                                 long long k_end) {
#pragma unroll
  for (int r = 0; r < ROWS; ++r) {
    if (kVec && k + 4 <= k_end) {
      const float4 v = __ldg(reinterpret_cast<const float4*>(rows[r] + k));
      a.v[r][0] = v.x;
      a.v[r][1] = v.y;
      a.v[r][2] = v.z;
      a.v[r][3] = v.w;
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) a.v[r][e] = k + e < k_end ? __ldg(rows[r] + k + e) : 0.0f;
    }
  }
}

// This thread's kStageLoads float4s of the stage of B that starts at k0: element i is row
// q / kRowQuads, columns 4 * (q % kRowQuads) + 0..3 of the stage, q = threadIdx.x + i *
// kThreads. Zeros past k_end and N.
static __device__ __forceinline__ void load_b_stage(float4 (&b)[kStageLoads], const float* B,
                                                    long long ldb, int N, long long k0,
                                                    long long k_end, bool b_vec) {
#pragma unroll
  for (int i = 0; i < kStageLoads; ++i) {
    const int q = threadIdx.x + i * kThreads;
    const long long k = k0 + q / kRowQuads;
    const int n = 4 * (q % kRowQuads);
    const float* p = B + k * ldb + n;
    if (b_vec && k < k_end && n + 4 <= N) {
      b[i] = __ldg(reinterpret_cast<const float4*>(p));
    } else {
      float e[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) e[j] = k < k_end && n + j < N ? __ldg(p + j) : 0.0f;
      b[i] = make_float4(e[0], e[1], e[2], e[3]);
    }
  }
}

// A row of the stage starts 16-byte aligned only where kStride is a multiple of 4 (MAX_N = 16);
// at MAX_N = 8 (kStride 10) it is 8-byte aligned, so the float4 goes in as two float2s.
static_assert(!kWide || kStride % 2 == 0, "rows of the stage start 8-byte aligned");
static __device__ __forceinline__ void store_b_stage(float* stage, const float4 (&b)[kStageLoads]) {
#pragma unroll
  for (int i = 0; i < kStageLoads; ++i) {
    const int q = threadIdx.x + i * kThreads;
    float* p = stage + (q / kRowQuads) * kStride + 4 * (q % kRowQuads);
    if constexpr (kStride % 4 == 0) {
      *reinterpret_cast<float4*>(p) = b[i];
    } else {
      reinterpret_cast<float2*>(p)[0] = make_float2(b[i].x, b[i].y);
      reinterpret_cast<float2*>(p)[1] = make_float2(b[i].z, b[i].w);
    }
  }
}

// acc += the lane's 4 k of A (rows of the stage from `row`) times its columns of B.
static __device__ __forceinline__ void multiply_quad(float (&acc)[ROWS][kLaneCols], const AQuad& a,
                                                     const float* stage, int row, int nq) {
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float* p = stage + (row + e) * kStride + nq * kLaneCols;
    float b[kLaneCols];
    if constexpr (kLaneCols == 4) {
      const float4 v = *reinterpret_cast<const float4*>(p);
      b[0] = v.x;
      b[1] = v.y;
      b[2] = v.z;
      b[3] = v.w;
    } else if constexpr (kLaneCols == 2) {
      const float2 v = *reinterpret_cast<const float2*>(p);
      b[0] = v.x;
      b[1] = v.y;
    } else {
      b[0] = *p;
    }
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int c = 0; c < kLaneCols; ++c) acc[r][c] = fmaf(a.v[r][e], b[c], acc[r][c]);
  }
}

// The block's K range, stage after stage: the next stage of B and the next step of A are loaded
// into registers before the current ones' FMAs. Every thread of the block calls it (barriers).
template <bool kVec>
static __device__ __forceinline__ void stream_rows_wide(float (&acc)[ROWS][kLaneCols],
                                                        const float* const* rows, KSlice slice,
                                                        int lane, float* stage, const float* B,
                                                        long long ldb, int N, bool b_vec) {
  const int kq = lane / kNGroups, nq = lane % kNGroups;
  float4 next_b[kStageLoads];
  load_b_stage(next_b, B, ldb, N, slice.begin, slice.end, b_vec);
  AQuad x, y;
  // k and s0 in 32 bits, unsigned: they pass the slice's end (at most K, an int) by less than two
  // stages, which unsigned holds without wrapping; 64-bit counters cost the n = 16 variants the
  // registers of two blocks per SM.
  const unsigned end = static_cast<unsigned>(slice.end);
  unsigned k = static_cast<unsigned>(slice.begin + kq * 4);
  load_quad<kVec>(x, rows, k, end);
  for (unsigned s0 = static_cast<unsigned>(slice.begin); s0 < end; s0 += kStageK) {
    __syncthreads();  // every warp is done with the previous stage
    store_b_stage(stage, next_b);
    __syncthreads();
    if (s0 + kStageK < end) load_b_stage(next_b, B, ldb, N, s0 + kStageK, end, b_vec);
#pragma unroll 1  // unrolled, ptxas hoists the later steps' loads and spills at n = 16
    for (int step = 0; step < kStepsPerStage; step += 2) {
      load_quad<kVec>(y, rows, k + kWarpStepK, end);
      multiply_quad(acc, x, stage, step * kWarpStepK + kq * 4, nq);
      load_quad<kVec>(x, rows, k + 2 * kWarpStepK, end);
      multiply_quad(acc, y, stage, (step + 1) * kWarpStepK + kq * 4, nq);
      k += 2 * kWarpStepK;
    }
  }
}

#if A_RING
// The ring (A_RING > 0): per warp A_RING slots of one step each, a slot holding the warp's ROWS
// rows x kWarpStepK k of A as [row][k] (512 bytes). Lane l copies row l / kKLanes at k
// 4 (l % kKLanes) of the step, so a warp's copies of a step fill its slot front to back (lane l at
// float 4 l) and each of the lanes' float4 reads of a row (8 k-lanes, each read by its kNGroups
// column lanes) is 128 consecutive bytes.
static_assert(A_RING == 0 || (kWide && A_RING >= 2 && A_RING <= 16),
              "A_RING (steps of A in flight per warp) is 2 to 16, for the wide shape (MAX_N >= 8) only");
constexpr int kASlotFloats = ROWS * kWarpStepK;
static_assert(kASlotFloats == 4 * 32, "one float4 per lane and step");
constexpr int kARingFloats = kWarps * A_RING * kASlotFloats;

// This lane's float4 of a step: `row` at k..k+3 into `dst`, zeros at or past `end`.
template <bool kVec>
static __device__ __forceinline__ void copy_a_quad(unsigned dst, const float* row, unsigned k,
                                                   unsigned end) {
  if constexpr (kVec) {
    const unsigned floats = k < end ? min(end - k, 4u) : 0u;
    copy_async_or_zeros<16>(dst, floats > 0 ? row + k : row, floats * 4);
  } else {
#pragma unroll
    for (unsigned e = 0; e < 4; ++e) {
      const bool in = k + e < end;
      copy_async_or_zeros<4>(dst + e * 4, in ? row + k + e : row, in ? 4u : 0u);
    }
  }
}

// stream_rows_wide with A through the warp's ring: the warp keeps A_RING - 1 steps of copies in
// flight. Per step a lane waits for its own copies of the step, the warp's barrier makes every
// lane's copies visible to the others (and says that every lane has read the slot read last
// step), the lane refills that slot with the step A_RING - 1 further on, then reads its ROWS
// float4s of A and multiplies as stream_rows_wide does: the same FMAs in the same order, so the
// same bits. The stages of B and their barriers are stream_rows_wide's.
template <bool kVec>
static __device__ __forceinline__ void stream_rows_ring(float (&acc)[ROWS][kLaneCols],
                                                        const float* copy_row, KSlice slice,
                                                        int lane, float* stage, float* ring,
                                                        const float* B, long long ldb, int N,
                                                        bool b_vec) {
  const int kq = lane / kNGroups, nq = lane % kNGroups;
  float4 next_b[kStageLoads];
  load_b_stage(next_b, B, ldb, N, slice.begin, slice.end, b_vec);
  // Counters in 32 bits as in stream_rows_wide: they pass the slice's end by less than a ring.
  const unsigned end = static_cast<unsigned>(slice.end);
  const unsigned copy_k = static_cast<unsigned>(lane % kKLanes) * 4;
  const unsigned ring_dst = shared_address(ring + lane * 4);
  constexpr unsigned kSlotBytes = kASlotFloats * 4;
  unsigned k_copy = static_cast<unsigned>(slice.begin);  // the next step to copy
#pragma unroll
  for (int i = 0; i < A_RING - 1; ++i) {
    copy_a_quad<kVec>(ring_dst + i * kSlotBytes, copy_row, k_copy + copy_k, end);
    commit_copies();
    k_copy += kWarpStepK;
  }
  int slot = 0;  // the step to multiply; the one before it is the next to fill
  for (unsigned s0 = static_cast<unsigned>(slice.begin); s0 < end; s0 += kStageK) {
    __syncthreads();  // every warp is done with the previous stage
    store_b_stage(stage, next_b);
    __syncthreads();
    if (s0 + kStageK < end) load_b_stage(next_b, B, ldb, N, s0 + kStageK, end, b_vec);
#pragma unroll
    for (int step = 0; step < kStepsPerStage; ++step) {
      wait_copies<A_RING - 2>();  // this lane's copies of the step have landed
      __syncwarp();
      const int fill = slot == 0 ? A_RING - 1 : slot - 1;
      copy_a_quad<kVec>(ring_dst + fill * kSlotBytes, copy_row, k_copy + copy_k, end);
      commit_copies();  // one group per step, empty past the slice: every wait counts the same
      k_copy += kWarpStepK;
      AQuad a;
#pragma unroll
      for (int r = 0; r < ROWS; ++r) {
        const float4 v =
            *reinterpret_cast<const float4*>(ring + slot * kASlotFloats + r * kWarpStepK + kq * 4);
        a.v[r][0] = v.x;
        a.v[r][1] = v.y;
        a.v[r][2] = v.z;
        a.v[r][3] = v.w;
      }
      multiply_quad(acc, a, stage, step * kWarpStepK + kq * 4, nq);
      slot = slot + 1 == A_RING ? 0 : slot + 1;
    }
  }
  wait_copies<0>();  // the copies past the slice are empty, but none may land after the kernel
}
#endif

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) TILEMM_CLUSTER
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
#if A_RING
  // All dynamic (the ring alone may exceed the 48 KiB of static shared memory): the warp's sums
  // (kWarpsK is 1 in the wide shape), the stage of B, the warps' rings; each a multiple of 4 floats.
  extern __shared__ float4 dynamic_smem4[];
  float* const warp_sums = reinterpret_cast<float*>(dynamic_smem4);
  float* const block_sums = warp_sums;  // unused: kWarpsK is 1
  float* const b_stage = warp_sums + kOutputs;
  float* const a_ring = b_stage + kStageK * kStride;
#else
  // Per-warp sums (kWarpsK of each output), then the block's; the wide shape's stage of B.
  __shared__ float warp_sums[kWarpsK * kOutputs];
  __shared__ float block_sums[kWarpsK > 1 ? kOutputs : 1];
  __shared__ __align__(16) float b_stage[kWide ? kStageK * kStride : 1];
#endif
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int wk = warp % kWarpsK, wr = warp / kWarpsK;
  const long long row0 = static_cast<long long>(blockIdx.x) * kRowsPerBlock;
  const float* rows[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)  // rows past M read row M - 1: no guard in the loop
    rows[r] = A + min(row0 + wr * ROWS + r, static_cast<long long>(M) - 1) * lda;
  const KSlice slice = k_slice(K);

  if constexpr (kWide) {
    float acc[ROWS][kLaneCols] = {};
    const bool b_vec = aligned_rows(B, ldb, 4);
#if A_RING
    // The row this lane copies (rows past M read row M - 1, as `rows`), into its warp's ring.
    const float* const copy_row =
        A + min(row0 + wr * ROWS + lane / kKLanes, static_cast<long long>(M) - 1) * lda;
    float* const ring = a_ring + warp * A_RING * kASlotFloats;
    if (aligned_rows(A, lda, 4))
      stream_rows_ring<true>(acc, copy_row, slice, lane, b_stage, ring, B, ldb, N, b_vec);
    else
      stream_rows_ring<false>(acc, copy_row, slice, lane, b_stage, ring, B, ldb, N, b_vec);
#else
    if (aligned_rows(A, lda, 4))
      stream_rows_wide<true>(acc, rows, slice, lane, b_stage, B, ldb, N, b_vec);
    else
      stream_rows_wide<false>(acc, rows, slice, lane, b_stage, B, ldb, N, b_vec);
#endif
    // Sum over the kKLanes lanes of each column group (lane bits 2..4), in the same order on
    // every run; the lanes of k-group 0 write the warp's sums.
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int c = 0; c < kLaneCols; ++c) {
        float v = acc[r][c];
#pragma unroll
        for (int offset = 16; offset >= kNGroups; offset /= 2)
          v += __shfl_xor_sync(0xffffffffu, v, offset);
        if (lane < kNGroups) warp_sums[(wr * ROWS + r) * MAX_N + lane * kLaneCols + c] = v;
      }
  } else {
  float acc[ROWS][MAX_N] = {};
  const bool b_vec = aligned_rows(B, ldb, kBVec);
  const bool b_k4 = MAX_N == 1 && ldb == 1 && aligned_rows(B, 0, 4);
  if (aligned_rows(A, lda, 4))
    stream_rows<true>(acc, rows, slice, wk, lane, B, ldb, N, b_vec, b_k4);
  else
    stream_rows<false>(acc, rows, slice, wk, lane, B, ldb, N, b_vec, b_k4);

  // Butterfly over the lanes: every lane ends with every sum, in the same order on every run;
  // lane i % 32 writes value i, so the writes spread over the lanes.
#pragma unroll
  for (int r = 0; r < ROWS; ++r)
#pragma unroll
    for (int n = 0; n < MAX_N; ++n) {
      float v = acc[r][n];
#pragma unroll
      for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
      if (lane == (r * MAX_N + n) % 32) warp_sums[wk * kOutputs + (wr * ROWS + r) * MAX_N + n] = v;
    }
  }
  const float* sums = warp_sums;
  if constexpr (kWarpsK > 1) {
    __syncthreads();
    for (int o = threadIdx.x; o < kOutputs; o += kThreads) {
      float sum = warp_sums[o];
#pragma unroll
      for (int w = 1; w < kWarpsK; ++w) sum += warp_sums[w * kOutputs + o];
      block_sums[o] = sum;
    }
    sums = block_sums;
  }
  store_block_sums<kOutputs>(
      sums, [&](int o) { return row0 + o / MAX_N < M && o % MAX_N < N; },
      [&](int o, float sum) {
        float* c = C + (row0 + o / MAX_N) * ldc + o % MAX_N;
        *c = scale(alpha, sum, beta, c);
      });
}
