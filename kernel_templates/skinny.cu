// skinny: matrix-vector shaped products, where one of M and N is at most 16. Every tiled family
// stages both operands through shared memory in tiles of 64 or more rows and columns; with M = 1
// or N = 1 almost all of such a tile is padding, and the time goes to launching and synchronizing
// blocks that each read a sliver of the one large operand. Here the large operand is streamed
// once, straight from global memory into registers, and the small one is read through the
// read-only cache. Such a kernel is bound by the bytes it keeps in flight: every block is 256
// threads (8 warps), every lane issues its next batch of loads of the large operand (4 to 16
// floats) before the FMAs of the current one, and registers are capped so that several blocks
// share an SM.
//
// One of two kernel shapes, chosen by which macro is defined:
//  - MAX_N (gemvn family, N <= MAX_N): "a matrix times a few vectors". The large operand is A
//    (M x K), read along its rows. A warp owns ROWS consecutive rows; the block's warps are
//    kWarpsK along K times kWarpsR along rows, more of them along rows where B is wider, so that
//    each row of B a block reads serves about as many floats of A as it has (B's rows are read
//    once per block, not once per row). A warp streams its rows in chunks of 32 lanes x 4
//    consecutive floats x kLoads, interleaved with the block's other warps along K. For each k a
//    lane multiplies its A values by row k of B (MAX_N floats).
//  - MAX_M (gemvm family, M <= MAX_M): "a few row vectors times a matrix". The large operand is
//    B (K x N), read along its rows. A block covers 32 x COLS columns (COLS adjacent columns per
//    lane); its 8 warps split its K range in groups of kGroup consecutive rows of B, round robin.
//    A (M x K) is read with loads that are the same for all lanes of a warp (one broadcast
//    transaction), 4 consecutive k at a time.
//  At MAX_N or MAX_M = 8 and 16 both shapes are "wide": the small operand is staged in shared
//  memory once per block and reused from registers (see kWide in each section).
//  B_RING > 0 (gemvmring family, wide gemvm only) streams B through shared memory instead of
//  registers: each thread copies its own columns of the next B_RING groups of rows with cp.async
//  and later reads back only what it copied, so no barrier guards the ring, and a block keeps
//  B_RING groups of B in flight where the registers hold two (see stream_columns_ring).
//  A_RING > 0 (gemvnring family, wide gemvn only) streams A the same way: a warp copies the next
//  A_RING - 1 steps of its rows with cp.async, one float4 per lane and step, and its lanes read
//  them back after the warp's barrier (see stream_rows_ring), where the registers hold one step.
//
// Load widths are chosen at run time, not by the problem's alignment class: every variant runs
// every problem, and takes its float4 (or float2) path when the actual pointer and leading
// dimension of the operand allow it (a branch on kernel arguments, the same in every thread),
// else the scalar path, which is coalesced too (consecutive lanes read consecutive floats). So a
// dense N = 1 problem (ldb = ldc = 1, alignment class 1) still streams A with float4 loads.
//
// K is split twice, and both splits are summed in a fixed order: (a) over the warps of a block
// (gemvn's kWarpsK, gemvm's 8), reduced through shared memory in warp order; (b) with SPLIT_K > 1
// over the SPLIT_K blocks of a thread block cluster along grid.z (sm_90), whose ranks are their
// blockIdx.z, reduced through distributed shared memory in rank order, each rank writing its
// share of the block's outputs (as the clusterk kernel of warptile.cu does). No workspace, no
// second kernel, no atomics: the same bits on every run. The cluster split is what fills the
// machine when the large operand has too few rows (gemvn) or columns (gemvm) for enough blocks.
//
// Edges: rows of A (gemvn) and columns of B (gemvm) beyond the matrix are read from the last one
// and never stored; K beyond the block's slice and the small operand's rows or columns beyond the
// matrix are loaded as zeros; so every M, N, K >= 0 and every leading dimension is correct. K
// slices start at multiples of 4 floats, so a slice's float4 loads stay aligned. With beta == 0,
// C is not read: it may hold NaN.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME skinny
#endif
#if !defined(MAX_N) && !defined(MAX_M)
#define MAX_N 1
#endif
#if defined(MAX_N) && defined(MAX_M)
#error "define MAX_N (gemvn) or MAX_M (gemvm), not both"
#endif
#ifndef SPLIT_K
#define SPLIT_K 1
#endif
#ifndef B_RING
#define B_RING 0
#endif
#ifndef A_RING
#define A_RING 0
#endif

static_assert(SPLIT_K == 1 || SPLIT_K == 2 || SPLIT_K == 4 || SPLIT_K == 8,
              "SPLIT_K is 1, 2, 4 or 8 blocks of a cluster: more than 8 is not portable");

// Must match family_skinny.cpp: the threads of a block.
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Whether `p` and every row `ld` floats after it start on a multiple of `floats` floats.
static __device__ __forceinline__ bool aligned_rows(const float* p, long long ld, int floats) {
  const unsigned long long bytes = static_cast<unsigned long long>(floats) * 4;
  return ((reinterpret_cast<unsigned long long>(p) | static_cast<unsigned long long>(ld) * 4) &
          (bytes - 1)) == 0;
}

static __device__ __forceinline__ float scale(float alpha, float acc, float beta, const float* c) {
  return beta == 0.0f ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

// This block's slice of K, [begin, end) (both at most K, so ints): whole multiples of 4 floats, so that the first k of
// every slice keeps float4 loads aligned; a slice past the end is empty and contributes zeros.
struct KSlice {
  int begin, end;
};
static __device__ __forceinline__ KSlice k_slice(int K) {
#if SPLIT_K > 1
  const long long per = ((static_cast<long long>(K) + SPLIT_K - 1) / SPLIT_K + 3) / 4 * 4;
  const long long begin = min(static_cast<long long>(K), blockIdx.z * per);
  return {static_cast<int>(begin), static_cast<int>(min(static_cast<long long>(K), begin + per))};
#else
  return {0, K};
#endif
}

// cp.async (sm_80) for the rings: copies from global to shared memory that a thread waits for by
// commit group, without holding registers while they fly.
#include "cp_async.cuh"

#if SPLIT_K > 1
// Thread block cluster primitives as PTX (sm_90), so that the template needs no header; the
// same as warptile.cu's. Every thread of every block of the cluster arrives, then waits for all:
// the writes to shared memory before it are visible to the whole cluster after it.
static __device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
// The address, in the cluster's shared window, of `p` (this block's shared memory) in the block
// of the cluster whose rank is `rank`.
static __device__ __forceinline__ unsigned cluster_address(const float* p, unsigned rank) {
  unsigned long long local;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(local) : "l"(p));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(static_cast<unsigned>(local)), "r"(rank));
  return remote;
}
static __device__ __forceinline__ float cluster_load(unsigned address) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(address) : "memory");
  return v;
}
// The cluster spans grid.z: the SPLIT_K blocks that share the same outputs.
#define TILEMM_CLUSTER __cluster_dims__(1, 1, SPLIT_K)
#else
#define TILEMM_CLUSTER
#endif

// Stores the block's kOutputs sums: with SPLIT_K = 1 `sums` (this block's shared memory) as they
// are; with SPLIT_K > 1 the sum over the cluster's blocks of their `sums`, in rank order, each
// rank storing a contiguous share of the outputs. store(o, value) writes output o; wanted(o)
// says whether output o exists (only those are read). Every thread of the block calls it.
template <int kOutputs, typename Wanted, typename Store>
static __device__ __forceinline__ void store_block_sums(const float* sums, Wanted wanted,
                                                        Store store) {
#if SPLIT_K > 1
  cluster_barrier();  // every block's sums are complete
  unsigned remote[SPLIT_K];
#pragma unroll
  for (int z = 0; z < SPLIT_K; ++z) remote[z] = cluster_address(sums, static_cast<unsigned>(z));
  constexpr int kShare = (kOutputs + SPLIT_K - 1) / SPLIT_K;
  const int end = min(kOutputs, static_cast<int>(blockIdx.z + 1) * kShare);
  for (int o = static_cast<int>(blockIdx.z) * kShare + threadIdx.x; o < end; o += kThreads) {
    if (!wanted(o)) continue;
    const unsigned offset = static_cast<unsigned>(o) * 4u;
    float sum = cluster_load(remote[0] + offset);
#pragma unroll
    for (int z = 1; z < SPLIT_K; ++z) sum += cluster_load(remote[z] + offset);
    store(o, sum);
  }
  cluster_barrier();  // no block exits, freeing its sums, while another may still read them
#else
  __syncthreads();
  for (int o = threadIdx.x; o < kOutputs; o += kThreads)
    if (wanted(o)) store(o, sums[o]);
#endif
}

#ifdef MAX_N
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
#endif  // MAX_N

#ifdef MAX_M
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
#endif  // MAX_M
