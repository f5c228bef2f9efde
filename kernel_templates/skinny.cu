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

// This block's slice of K, [begin, end): whole multiples of 4 floats, so that the first k of
// every slice keeps float4 loads aligned; a slice past the end is empty and contributes zeros.
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
static_assert(ROWS == 1 || ROWS * MAX_N <= 4,
              "ROWS above 1 only where ROWS x MAX_N <= 4: more accumulators do not fit the "
              "registers of 4 blocks per SM");
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
constexpr int kMinBlocks = MAX_N >= 8 ? 2 : ROWS == 4 ? 3 : 4;

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

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) TILEMM_CLUSTER
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  // Per-warp sums (kWarpsK of each output), then the block's.
  __shared__ float warp_sums[kWarpsK][kOutputs];
  __shared__ float block_sums[kWarpsK > 1 ? kOutputs : 1];
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const int wk = warp % kWarpsK, wr = warp / kWarpsK;
  const long long row0 = static_cast<long long>(blockIdx.x) * kRowsPerBlock;
  const float* rows[ROWS];
#pragma unroll
  for (int r = 0; r < ROWS; ++r)  // rows past M read row M - 1: no guard in the loop
    rows[r] = A + min(row0 + wr * ROWS + r, static_cast<long long>(M) - 1) * lda;
  const KSlice slice = k_slice(K);

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
      if (lane == (r * MAX_N + n) % 32) warp_sums[wk][(wr * ROWS + r) * MAX_N + n] = v;
    }
  const float* sums = warp_sums[0];
  if constexpr (kWarpsK > 1) {
    __syncthreads();
    for (int o = threadIdx.x; o < kOutputs; o += kThreads) {
      float sum = warp_sums[0][o];
#pragma unroll
      for (int w = 1; w < kWarpsK; ++w) sum += warp_sums[w][o];
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
static_assert(COLS == 1 || COLS * MAX_M <= 4,
              "COLS above 1 only where COLS x MAX_M <= 4: more accumulators do not fit the "
              "registers of 4 blocks per SM");
constexpr int kColumns = 32 * COLS;  // columns of a block
// Consecutive rows of B per warp and group: 8 where a lane has one column and A few rows, else
// 4 (4 to 16 floats per lane), with the next group's in flight; a multiple of 4, so
// that A is read 4 k at a time from an aligned start.
constexpr int kGroup = MAX_M >= 4 || COLS > 1 ? 4 : 8;
constexpr int kOutputs = MAX_M * kColumns;
// Blocks per SM that the registers must allow (64 registers per thread for 4, 80 for 3, 128
// for 2), as gemvn's.
constexpr int kMinBlocks = MAX_M >= 8 ? 2 : COLS > 1 ? 3 : 4;
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

template <bool kVecB>
static __device__ __forceinline__ void stream_columns_a(float (&acc)[MAX_M][COLS], KSlice slice,
                                                        int warp, int lane, const float* A,
                                                        long long lda, int M, const float* B,
                                                        long long ldb, long long col0, int N) {
  if (aligned_rows(A, lda, 4))
    stream_columns<true, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);
  else
    stream_columns<false, kVecB>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);
}

extern "C" __global__ void __launch_bounds__(kThreads, kMinBlocks) TILEMM_CLUSTER
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  __shared__ float warp_sums[kWarps * kReduceRows * kColumns];
#if SPLIT_K > 1
  __shared__ float block_sums[kOutputs];
#endif
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  const long long col0 = static_cast<long long>(blockIdx.x) * kColumns;
  const KSlice slice = k_slice(K);

  float acc[MAX_M][COLS] = {};
  const bool b_vec = COLS > 1 && aligned_rows(B, ldb, COLS);
  if (b_vec)
    stream_columns_a<(COLS > 1)>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);
  else
    stream_columns_a<false>(acc, slice, warp, lane, A, lda, M, B, ldb, col0, N);

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
