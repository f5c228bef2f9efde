// skinny.cuh: what the matrix-vector shaped kernels share, gemvn.cu (N <= 16) and gemvm.cu
// (M <= 16). Every tiled family stages both operands through shared memory in tiles of 64 or more
// rows and columns; with M = 1 or N = 1 almost all of such a tile is padding, and the time goes to
// launching and synchronizing blocks that each read a sliver of the one large operand. Here the
// large operand is streamed once, straight from global memory into registers, and the small one
// is read through the read-only cache. Such a kernel is bound by the bytes it keeps in flight:
// every block is 256 threads (8 warps), every lane issues its next batch of loads of the large
// operand (4 to 16 floats) before the FMAs of the current one, and registers are capped so that
// several blocks share an SM.
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
//
// cmake/embed_templates.cmake pastes this file, and the headers it includes, into each template
// that includes it, so the template's hash covers them too.
#ifndef TILEMM_SKINNY_CUH
#define TILEMM_SKINNY_CUH

#ifndef SPLIT_K
#define SPLIT_K 1
#endif

static_assert(SPLIT_K == 1 || SPLIT_K == 2 || SPLIT_K == 4 || SPLIT_K == 8,
              "SPLIT_K is 1, 2, 4 or 8 blocks of a cluster: more than 8 is not portable");

// Must match src/core/skinny_rules.hpp (kSkinnyThreads): the threads of a block.
constexpr int kThreads = 256;
constexpr int kWarps = kThreads / 32;

// Whether `p` and every row `ld` floats after it start on a multiple of `floats` floats.
static __device__ __forceinline__ bool aligned_rows(const float* p, long long ld, int floats) {
  const unsigned long long bytes = static_cast<unsigned long long>(floats) * 4;
  return ((reinterpret_cast<unsigned long long>(p) | static_cast<unsigned long long>(ld) * 4) &
          (bytes - 1)) == 0;
}

#include "epilogue.cuh"

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
// The cluster's barrier, addresses and loads (sm_90).
#include "cluster.cuh"
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

#endif  // TILEMM_SKINNY_CUH
