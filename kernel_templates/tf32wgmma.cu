// tf32wgmma: SGEMM on Hopper's warpgroup tensor-core instruction, wgmma.mma_async, with TF32
// inputs, for the precision modes `high` and `medium` (tilemm/precision.hpp). Compiled for sm_90a
// only (wgmma is an architecture-specific feature; the family says so and NVRTC gets
// --gpu-architecture=sm_90a). What it does (docs/kernels.md has the reasons):
//  - Roles swapped: it computes C^T = B^T A^T. TF32 wgmma reads shared-memory operands only
//    K-major, and of row-major C = A B only A's tile is K-major. So wgmma's B operand is A^T
//    (K x BM), described in place: A tiles land by TMA (the tensor memory accelerator, through a
//    tensor map the host encodes per call) straight in the 128-byte-swizzled K-major layout of
//    the descriptor (BK = 32 floats = one 128-byte row per m), and nothing moves them again.
//    wgmma's A operand (64 x 8 per k8 step) is B^T, which may come from registers in any layout
//    its threads load: each thread reads its fragment from the raw,
//    row-padded B tile with two 8-byte loads per k8 step (the transposition is in the choice of
//    words, and bank-conflict free). Each warpgroup owns 64 columns of C (BN / 64 warpgroups)
//    and all BM rows (wgmma's N = BM): m64n<BM>k8, BM / 2 accumulators per thread, which are C
//    elements with the roles swapped back in the epilogue.
//  - Precision on chip. B, the register operand, is rounded with cvt.rna (SPLIT 1, medium) or
//    split in registers into big = rna(x) and small = rna(x - big) (SPLIT 3, high: 3xTF32). A,
//    the shared operand, goes raw: the tensor core reads an FP32 value as TF32 by dropping its 13
//    low mantissa bits, so A's big part is that truncation, free. With SPLIT 3 one pass over each
//    A tile writes small = rna(x - trunc(x)) to a plane beside it, and each k8 step is
//    small_b big_a + big_b small_a + big_b big_a (small_b small_a omitted). The bounds this gives
//    (truncated A, rounded B) are tuner/error_bound.cpp's, derived in docs/kernels.md.
//  - Warp-specialized pipeline: a producer warpgroup fills a STAGES-deep ring, A and B by TMA
//    (one thread starts both boxes, which complete on the stage's `landed` mbarrier), so that
//    every stage can be in flight and no producer thread waits for its copies. B came by the
//    producer threads' 16-byte cp.async before: TMA is faster where the power limit sets the
//    clock (docs/kernels.md). With SPLIT 3 the producer splits A once landed and hands the tile
//    over on the stage's `full` mbarrier (SPLIT 1: `landed` is `full`); the BN / 64
//    consumer warpgroups only load their B^T fragments, issue wgmmas and free a stage on its
//    `empty` mbarrier once their wgmmas that read it are done. setmaxnreg moves registers from
//    the producer to the consumers' accumulators. Register fragments are double-buffered so the
//    next tile's loads overlap the wgmmas of this one.
//  - PROMOTE 1 (the default with SPLIT 3): the tensor core's accumulation aligns and truncates
//    instead of rounding to nearest, so the wgmmas of one K tile accumulate a partial sum started
//    from zero (scale-d 0 on the tile's first wgmma), and after the tile the partial is added to
//    the running sum with FADDs that round to nearest (the promotion of DeepSeek's FP8 GEMM,
//    every BK / 8 k8 steps). It costs BM / 2 registers and a wait for the tile's wgmmas before
//    the next tile's may start. PROMOTE 0 accumulates in the wgmmas.
// Edge tiles load zeros (TMA zero-fills a box where it leaves A or B) and guard their stores, so
// every M, N, K >= 0 is correct. TMA and C's 8-byte accesses: alignment class 4 (A, B, C 16-byte
// aligned, lda, ldb, ldc multiples of 4). beta == 0 never reads C.
// ALIGNED_COPIES = 1 makes the `tf32wgmmapad` family's kernel, as warptile.cu's makes `padded`'s:
// A and B are copies whose rows start 128-byte aligned, made by <name>_copy of this module, and C
// is the caller's own, at any alignment, read and written one float at a time.
// Non-finite inputs: with SPLIT 3 an infinite input gives NaN where FP32 gives +-inf (its small
// part is inf - inf); SPLIT 1 keeps FP32's inf and NaN.

// ---------------------------------------------------------------------------------------------
// The index maps: every placement of an element in shared memory or in a register, in one place.
// They depend on no macro, and a host compiler can read them too: tests/test_tf32wgmma_family.cpp
// includes this file with TILEMM_TF32WGMMA_INDEX_MAPS_ONLY and checks them (bijections, the
// swizzle the descriptor reads, bank conflicts) without a GPU.
#include "stream_k.cuh"  // TILEMM_INDEX_MAP, and the stream-K work split of STREAM_K 1

namespace tf32wgmma_maps {

using namespace stream_k;

// The register fragment of wgmma's A operand, .tf32 m64nNk8 (PTX ISA, "Register Fragments and
// Shared Memory Matrix Layouts", the figure of matrix A for .tf32; CUTLASS's ALayout_64x8 says
// the same): the warpgroup's 64 x 8 is four warps' 16 x 8 slices, and lane l of warp w holds
// a[v] at row 16 w + l / 4 + 8 (v % 2), column (k) l % 4 + 4 (v / 2).
TILEMM_INDEX_MAP int fragment_row(int warp, int lane, int v) {
  return 16 * warp + lane / 4 + 8 * (v % 2);
}
TILEMM_INDEX_MAP int fragment_k(int lane, int v) { return lane % 4 + 4 * (v / 2); }

// The accumulators of m64nNk8 with .f32 (PTX ISA, the figure of matrix D; CUTLASS's
// CLayout_64xN): lane l of warp w holds d[i] at row 16 w + l / 4 + 8 ((i / 2) % 2), column
// 8 (i / 4) + 2 (l % 4) + i % 2.
TILEMM_INDEX_MAP int accumulator_row(int warp, int lane, int i) {
  return 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
}
TILEMM_INDEX_MAP int accumulator_column(int lane, int i) {
  return 8 * (i / 4) + 2 * (lane % 4) + i % 2;
}

// Which column of C (of the warpgroup's 64) a row of wgmma's A and D stands for. Any
// permutation is correct as long as the fragments and the epilogue use the same one; this one
// puts the rows g and g + 8 a thread holds on adjacent columns 2 g, 2 g + 1 of its warp's 16, so
// each thread loads its fragment with 8-byte loads and stores C two adjacent floats at a time.
TILEMM_INDEX_MAP int c_column_of_row(int row) {
  return (row / 16) * 16 + 2 * (row % 8) + (row % 16) / 8;
}

// The raw B tile: BK rows of K, each BN floats of N plus 8 of padding. The padding puts the rows
// k and k + 1 8 banks apart, so the four k (lane % 4) and eight column pairs (lane / 4) of a
// half-warp's 8-byte fragment loads cover the 32 banks once. The TMA fills it as one dense box
// BN + 8 floats wide: the padding holds the next 8 columns of B (or zeros), which nothing reads.
TILEMM_INDEX_MAP int b_row_floats(int bn) { return bn + 8; }
TILEMM_INDEX_MAP int b_tile_index(int k, int n, int bn) { return k * b_row_floats(bn) + n; }

// The A tile in the canonical K-major layout with the 128-byte swizzle (PTX ISA, "Shared Memory
// Matrix Layout", K-major, 128B swizzling mode; CUTLASS's Layout_K_SW128_Atom): row m (of BM) is
// 128 bytes = 32 floats of K, and its 16-byte chunk c is stored at chunk c ^ (m % 8). Rows are
// 128 bytes apart, so eight rows (one swizzle atom, 1024 bytes) are the descriptor's stride byte
// offset; the leading byte offset is unused with K within one swizzle row. The byte offset of
// chunk c of row m, from a 1024-byte aligned tile:
TILEMM_INDEX_MAP int a_chunk_offset(int m, int c) { return m * 128 + 16 * (c ^ (m % 8)); }

// What the tensor core does with a 128-byte swizzled address: it XORs bits 4-6 (the 16-byte
// chunk) with bits 7-9 (the row within the 1024-byte atom), which is why tiles start
// 1024-byte aligned and why a k8 step (32 bytes on) is addressed by adding 32 s to the start
// address of the descriptor.
TILEMM_INDEX_MAP int swizzle_128b(int byte_offset) {
  return byte_offset ^ (((byte_offset >> 7) & 7) << 4);
}

// Tile `tile`'s row and column of tiles in the grouped order (GROUP_ROWS > 1): groups of
// `group_rows` rows of tiles, column by column within a full group, so that the blocks resident at
// once share their rows of A and columns of B; row by row in a last group of fewer rows (no
// division by its row count).
struct TilePosition {
  int row, col;
};
TILEMM_INDEX_MAP TilePosition grouped_tile(int tile, int tiles_m, int tiles_n, int group_rows) {
  const int group = tile / (group_rows * tiles_n), within = tile - group * group_rows * tiles_n;
  if ((group + 1) * group_rows <= tiles_m)
    return {group * group_rows + within % group_rows, within / group_rows};
  return {group * group_rows + within / tiles_n, within % tiles_n};
}

}  // namespace tf32wgmma_maps

#ifndef TILEMM_TF32WGMMA_INDEX_MAPS_ONLY
// ---------------------------------------------------------------------------------------------
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME tf32wgmma
#endif
#ifndef BM
#define BM 256
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef STREAM_K
#define STREAM_K 0
#endif
#ifndef GROUP_ROWS
#define GROUP_ROWS 1
#endif
#ifndef ALIGNED_COPIES
#define ALIGNED_COPIES 0
#endif
#ifndef PROMOTE
#if SPLIT == 3
#define PROMOTE 1
#else
#define PROMOTE 0
#endif
#endif

#include "tf32.cuh"  // to_tf32

namespace {

using namespace tf32wgmma_maps;

constexpr int kGroups = BN / 64;           // consumer warpgroups, 64 columns of C each
constexpr int kThreads = (kGroups + 1) * 128;  // and one producer warpgroup
constexpr int kProducer = kGroups;         // the producer's warpgroup index
constexpr int kAcc = BM / 2;               // accumulators per thread: 64 x BM / 128
constexpr int kSteps = BK / 8;             // k8 steps (wgmmas per split part) per K tile
// Shared memory, in bytes from a 1024-byte aligned base: STAGES x (A tile, with SPLIT 3 the
// plane of A's small parts, B tile).
constexpr int kATileBytes = BM * 128;
constexpr int kSmallBytes = SPLIT == 3 ? kATileBytes : 0;
constexpr int kBTileBytes = BK * b_row_floats(BN) * 4;
constexpr int kStageBytes = kATileBytes + kSmallBytes + kBTileBytes;
static_assert(BK == 32, "BK is 32 floats: one 128-byte swizzle row of K per row of A");
static_assert(BM == 64 || BM == 128 || BM == 256, "BM is wgmma's N: 64, 128 or 256");
static_assert(BN == 64 || BN == 128, "BN is one or two warpgroups of 64 columns");
static_assert(STAGES == 3 || STAGES == 4, "STAGES is 3 or 4");
static_assert(SPLIT == 1 || SPLIT == 3, "SPLIT is 1 (medium: one TF32 pass) or 3 (high: 3xTF32)");
static_assert(PROMOTE == 0 || PROMOTE == 1, "PROMOTE is 0 (sums in the wgmmas) or 1 (FADDs)");
static_assert(STREAM_K == 0 || STREAM_K == 1,
              "STREAM_K is 0 (a block per tile) or 1 (persistent blocks, the last wave in K slices)");
static_assert(kATileBytes % 1024 == 0 && kBTileBytes % 1024 == 0,
              "every A tile and small plane starts 1024-byte aligned, as the swizzle needs");
static_assert(kATileBytes % (16 * 128) == 0,
              "an A tile splits evenly into the producer threads' 16-byte accesses");
static_assert(b_row_floats(BN) <= 256 && b_row_floats(BN) * 4 % 16 == 0,
              "a B tile's row is one TMA box row: at most 256 elements, a multiple of 16 bytes");

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// The stage barriers (mbarrier objects in shared memory): `landed` completes a phase when a
// tile's copies are in, `full` when the producer has handed the tile over (with SPLIT 1 the same
// barrier; SPLIT 3 first splits A), `empty` when every consumer thread is done reading it.
__device__ __forceinline__ void init_barrier(unsigned bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void arrive(unsigned bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits for the completion of the barrier's phase of parity `parity`.
__device__ __forceinline__ void wait_barrier(unsigned bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\n"
      "wait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// A tensor map the host encodes for each call (cuTensorMapEncodeTiled, core/tensor_map.cpp):
// A's in 128-byte swizzled boxes of BM x BK, B's in dense boxes of BK x (BN + 8). 128 opaque
// bytes, passed by value as a __grid_constant__ parameter so that its address is the parameter's
// own, which the tensor memory accelerator reads.
struct __align__(64) TensorMap {
  unsigned long long opaque[16];
};

// Fetches a tensor map into the TMA's cache ahead of its first copy.
__device__ __forceinline__ void prefetch_map(const TensorMap& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map))
               : "memory");
}

// Announces `bytes` more bytes that asynchronous copies will deliver to the barrier's current
// phase, and arrives on it once.
__device__ __forceinline__ void arrive_expecting(unsigned bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Copies the box of `map` at (x, y) (x the inner, contiguous coordinate) to shared `dst`, zeros
// where the box leaves the tensor; its bytes complete on barrier `bar`.
__device__ __forceinline__ void copy_box(unsigned dst, const TensorMap& map, int x, int y,
                                         unsigned bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

// Moves registers from the producer, which needs few, to the consumers, whose accumulators need
// many (sm_90a): a block of three warpgroups gets 65536 / 384 registers per thread otherwise,
// rounded down to 8 (168), and that is all the block holds: setmaxnreg.inc waits until the pool
// has what it asks for, so the consumers may take only what the producer gives back, or it
// waits forever.
constexpr int kLaunchRegisters = 65536 / 384 / 8 * 8;
constexpr int kProducerRegisters = 48;
constexpr int kConsumerRegisters = 224;
static_assert(128 * kProducerRegisters + 256 * kConsumerRegisters <= 384 * kLaunchRegisters,
              "the consumers of a two-consumer block take no more registers than the producer "
              "gives back");
template <int N>
__device__ __forceinline__ void registers_down() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void registers_up() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

#if SPLIT == 3
// What the tensor core makes of an FP32 value in a TF32 operand: the 13 low mantissa bits dropped.
__device__ __forceinline__ float truncate_to_tf32(float x) {
  return __uint_as_float(__float_as_uint(x) & 0xFFFFE000u);
}
#endif

// The shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") of a K-major A tile
// with the 128-byte swizzle whose k8 step starts at `step`: start address, leading byte offset
// (unused with this layout: 1, as CUTLASS writes it), stride byte offset 1024 (the next eight
// rows), each in 16-byte units; base offset 0 (the tile is 1024-byte aligned); bits 62-63 the
// swizzle mode, 1 = 128 bytes.
__device__ __forceinline__ unsigned long long descriptor(unsigned step) {
  const unsigned long long start = (step & 0x3FFFF) >> 4;
  constexpr unsigned long long kLeading = 1;
  constexpr unsigned long long kStride = 1024 >> 4;
  return start | (kLeading << 16) | (kStride << 32) | (1ull << 62);
}

#if SPLIT == 3
// 16-byte loads (and stores) per producer thread to split an A tile.
constexpr int kSplitLoads = kATileBytes / 16 / 128;

// Orders this thread's generic-proxy writes to shared memory (the split's) before later reads of
// the same memory by wgmma (the async proxy); a barrier then extends it to the block.
__device__ __forceinline__ void fence_for_wgmma() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
#endif

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most `N` committed wgmma groups of this warpgroup are in flight.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// Keeps the compiler from moving reads or writes of registers that an asynchronous wgmma owns
// across the wait that hands them back (or the fence that hands them over).
__device__ __forceinline__ void pin(float (&d)[kAcc]) {
#pragma unroll
  for (int i = 0; i < kAcc; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// One K tile's register operands: B^T's 64 x 8 per k8 step, as TF32 bit patterns, big (rounded
// to nearest) and with SPLIT 3 small (the rounded remainder).
struct Fragments {
  unsigned big[kSteps][4];
#if SPLIT == 3
  unsigned small[kSteps][4];
#endif
};

// The accumulator operands of a wgmma: read and written ("+f"), or only written ("=f") where the
// wgmma starts the sum from zero (scale-d 0), so that the registers hold nothing the compiler must
// keep before it (a persistent block's partial sums between its units).
#define TILEMM_READ_WRITE(x) "+f"(x)
#define TILEMM_WRITE(x) "=f"(x)
#define TILEMM_ACC4(c, i) c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3])
#define TILEMM_ACC16(c, i) \
  TILEMM_ACC4(c, i), TILEMM_ACC4(c, i + 4), TILEMM_ACC4(c, i + 8), TILEMM_ACC4(c, i + 12)
#define TILEMM_ACC32(c, i) TILEMM_ACC16(c, i), TILEMM_ACC16(c, i + 16)
#define TILEMM_ACC64(c, i) TILEMM_ACC32(c, i), TILEMM_ACC32(c, i + 32)
#define TILEMM_ACC128(c) TILEMM_ACC64(c, 0), TILEMM_ACC64(c, 64)

// d (this warpgroup's 64 columns of C x BM rows, transposed) = a * B-operand + (accumulate ? d
// : 0), one k8 step: a the register fragment (64 x 8 of B^T), desc_b the A tile's descriptor
// (8 of K x BM). kFromZero: accumulate is 0 and d's old values are not read.

#if BM == 64
#define TILEMM_WGMMA_TEXT \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}, {%32, %33, %34, %35}, %36, p, 1, 1;\n}\n"
template <bool kFromZero>
__device__ __forceinline__ void wgmma(float (&d)[32], const unsigned (&a)[4],
                                      unsigned long long desc_b, int accumulate) {
  if constexpr (kFromZero) {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC32(TILEMM_WRITE, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0)
                 : "memory");
    (void)accumulate;
  } else {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC32(TILEMM_READ_WRITE, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
                 : "memory");
  }
}
#endif

#if BM == 128
#define TILEMM_WGMMA_TEXT \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}, {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
template <bool kFromZero>
__device__ __forceinline__ void wgmma(float (&d)[64], const unsigned (&a)[4],
                                      unsigned long long desc_b, int accumulate) {
  if constexpr (kFromZero) {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC64(TILEMM_WRITE, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0)
                 : "memory");
    (void)accumulate;
  } else {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC64(TILEMM_READ_WRITE, 0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
                 : "memory");
  }
}
#endif

#if BM == 256
#define TILEMM_WGMMA_TEXT \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {" \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
  "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
  "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
  "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
  "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}, {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
template <bool kFromZero>
__device__ __forceinline__ void wgmma(float (&d)[128], const unsigned (&a)[4],
                                      unsigned long long desc_b, int accumulate) {
  if constexpr (kFromZero) {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC128(TILEMM_WRITE)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(0)
                 : "memory");
    (void)accumulate;
  } else {
    asm volatile(TILEMM_WGMMA_TEXT
                 : TILEMM_ACC128(TILEMM_READ_WRITE)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate)
                 : "memory");
  }
}
#endif

}  // namespace

// This block's units, in order, to `f`: one whole tile, or with STREAM_K its share.
template <typename F>
__device__ __forceinline__ void for_each_unit(const WorkSplit& split, int k_tiles, F&& f) {
#if STREAM_K
  for_each_stream_k_unit(split, k_tiles, static_cast<int>(blockIdx.x), f);
#else
  (void)split;
  f(Unit{static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x), 0, k_tiles});
#endif
}

extern "C" __global__ void __launch_bounds__(kThreads, 1)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc, const __grid_constant__ TensorMap a_map,
                   const __grid_constant__ TensorMap b_map, const WorkSplit split) {
  // Dynamic, above the 48 KiB static limit (the loader opts in), and 1 KiB more than the tiles
  // and barriers need so the tiles can start on a 1024-byte boundary whatever the base.
  extern __shared__ __align__(1024) unsigned char smem_raw[];
  const unsigned raw_base = shared_address(smem_raw);
  const unsigned base = (raw_base + 1023u) & ~1023u;
  unsigned char* const smem = smem_raw + (base - raw_base);
  // The stage barriers lie past the ring, 8 bytes each: STAGES full, STAGES empty, and where the
  // producer loads A by TMA and splits it, STAGES landed (the copies are in; `full`: the split
  // too).
  const unsigned full0 = base + STAGES * kStageBytes;
  const unsigned empty0 = full0 + 8 * STAGES;
  const unsigned landed0 = SPLIT == 3 ? empty0 + 8 * STAGES : full0;

  const int tid = threadIdx.x;
  const int group = tid / 128;  // this thread's warpgroup: consumers 0.., the producer last
  const int warp = (tid % 128) / 32;
  const int lane = tid % 32;
  const int k_tiles = (K + BK - 1) / BK;
  // A unit's tile: its first row and column of C, and the rows and columns left from there
  // (instead of m0 + row < M: no int overflow for M or N near 2^31).
  // (Tiles per row read where used, from the parameters: no register held for it.)
  auto tiles_n = [&] { return STREAM_K ? split.tiles_n : static_cast<int>(gridDim.x); };
#if GROUP_ROWS > 1
  auto row0 = [&](const Unit& u) {
    return grouped_tile(u.tile, (M + BM - 1) / BM, tiles_n(), GROUP_ROWS).row * BM;
  };
  auto col0 = [&](const Unit& u) {
    return grouped_tile(u.tile, (M + BM - 1) / BM, tiles_n(), GROUP_ROWS).col * BN;
  };
#else
  auto row0 = [&](const Unit& u) { return u.tile / tiles_n() * BM; };
  auto col0 = [&](const Unit& u) { return u.tile % tiles_n() * BN; };
#endif

  if (tid == 0) {
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {
      // landed: the A and B boxes' bytes and one arrival, from the thread that announces them.
      init_barrier(landed0 + 8 * s, 1);
      if (SPLIT == 3) init_barrier(full0 + 8 * s, 128);  // every producer thread, after the split
      init_barrier(empty0 + 8 * s, kGroups * 128);       // every consumer thread
    }
    // The tensor memory accelerator (the async proxy) completes the barriers' transactions.
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  // Every K tile this block handles, across its units, takes the next stage of the ring: the
  // g-th (from 0) stage g % STAGES in its phase g / STAGES.
  if (group == kProducer) {
    // The producer fills the ring: one thread announces a stage's A and B boxes' bytes on its
    // landed barrier and starts both TMA copies, and waits for nothing but the stage's empty
    // barrier (every consumer done with its last use), so every stage of the ring can be in
    // flight. With SPLIT 3 the whole warpgroup splits the A tiles that have landed.
    if (kGroups == 2) registers_down<kProducerRegisters>();
    const int ptid = tid - kProducer * 128;
#if SPLIT == 3
    // Splits landed stage-use g: writes the small parts of its A tile to the stage's small plane
    // at the same offsets, small = tf32(x - trunc(x)), where trunc(x) (x with its 13 low mantissa
    // bits cleared) is the TF32 value the tensor core reads from the raw tile as big
    // (elementwise, so the swizzle does not matter: linear 16-byte accesses, free of bank
    // conflicts); orders the writes before the wgmmas' reads (async proxy) and hands the tile
    // over on the full barrier.
    auto split_landed = [&](unsigned g) {
      const int stage = static_cast<int>(g % STAGES);
      wait_barrier(landed0 + 8 * stage, static_cast<int>((g / STAGES) & 1));
      const float4* const big = reinterpret_cast<const float4*>(smem + stage * kStageBytes);
      float4* const small = reinterpret_cast<float4*>(smem + stage * kStageBytes + kATileBytes);
#pragma unroll
      for (int i = 0; i < kSplitLoads; ++i) {
        const int id = ptid + i * 128;
        const float4 x = big[id];
        small[id] = make_float4(to_tf32(x.x - truncate_to_tf32(x.x)),
                                to_tf32(x.y - truncate_to_tf32(x.y)),
                                to_tf32(x.z - truncate_to_tf32(x.z)),
                                to_tf32(x.w - truncate_to_tf32(x.w)));
      }
      fence_for_wgmma();
      arrive(full0 + 8 * stage);
    };
    // The split of stage-use g comes STAGES - 1 behind the newest load, before the producer
    // waits for a stage to refill: consumers waiting for use g have freed every use before
    // g - 1, which is as far as the producer has waited by then, so neither waits for the other.
    constexpr int kSplitLag = STAGES - 1;
#endif
    if (ptid == 0 && k_tiles > 0) {
      prefetch_map(a_map);
      prefetch_map(b_map);
    }
    // Stage uses so far, in 32 bits: once past 2 STAGES it stays in [2 STAGES, 4 STAGES), which
    // keeps every use's stage, phase and the comparisons with STAGES below.
    unsigned g = 0;
    auto next_use = [](unsigned g) { return g + 1 == 4 * STAGES ? 2 * STAGES : g + 1; };
    for_each_unit(split, k_tiles, [&](const Unit& u) {
      const int m0 = row0(u), n0 = col0(u);
      for (int t = u.k_begin; t < u.k_end; ++t, g = next_use(g)) {
        const int stage = static_cast<int>(g % STAGES);
#if SPLIT == 3
        if (g >= kSplitLag) split_landed(g - kSplitLag);
#endif
        // The stage's previous use, g - STAGES, is done in every consumer thread.
        if (g >= STAGES) wait_barrier(empty0 + 8 * stage, static_cast<int>(((g / STAGES) + 1) & 1));
        const unsigned landed = landed0 + 8 * stage;
        if (ptid == 0) {
          arrive_expecting(landed, kATileBytes + kBTileBytes);
          copy_box(base + stage * kStageBytes, a_map, t * BK, m0, landed);
          copy_box(base + stage * kStageBytes + kATileBytes + kSmallBytes, b_map, n0, t * BK,
                   landed);
        }
      }
    });
#if SPLIT == 3
    for (unsigned h = g >= kSplitLag ? g - kSplitLag : 0; h < g; ++h) split_landed(h);
#endif
    return;
  }

  // The consumers.
  if (kGroups == 2) registers_up<kConsumerRegisters>();
#if STREAM_K
  // A consumer's index among the consumers (they come first), read where used.
  auto ctid = [] { return static_cast<int>(threadIdx.x); };
#endif

  // This thread's fragment rows 16 warp + lane / 4 (+ 8) are the block's columns n_frag (+ 1).
  const int n_frag = 64 * group + c_column_of_row(fragment_row(warp, lane, 0));

  // Loads stage `stage`'s B^T fragments: per k8 step, the floats (k, n_frag..+1) and
  // (k + 4, n_frag..+1) of the raw B tile with k = 8 s + lane % 4, i.e. a[0], a[1] and a[2], a[3].
  auto load_fragments = [&](int stage, Fragments& f) {
    const float* const b_tile =
        reinterpret_cast<const float*>(smem + stage * kStageBytes + kATileBytes + kSmallBytes);
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      const int k_lo = 8 * s + fragment_k(lane, 0), k_hi = 8 * s + fragment_k(lane, 2);
      const float2 lo = *reinterpret_cast<const float2*>(b_tile + b_tile_index(k_lo, n_frag, BN));
      const float2 hi = *reinterpret_cast<const float2*>(b_tile + b_tile_index(k_hi, n_frag, BN));
      const float x[4] = {lo.x, lo.y, hi.x, hi.y};
#pragma unroll
      for (int v = 0; v < 4; ++v) {
        const float big = to_tf32(x[v]);
        f.big[s][v] = __float_as_uint(big);
#if SPLIT == 3
        f.small[s][v] = __float_as_uint(to_tf32(x[v] - big));
#endif
      }
    }
  };

  // Readies stage-use g: waits until the producer has handed it over, and loads this thread's
  // fragments into `f`.
  auto prepare = [&](unsigned g, Fragments& f) {
    const int stage = static_cast<int>(g % STAGES);
    wait_barrier(full0 + 8 * stage, static_cast<int>((g / STAGES) & 1));
    load_fragments(stage, f);
  };
  // Use g's wgmmas are done in this warpgroup: its stage may be refilled once every consumer
  // thread says so. Each thread's arrival (a release) orders its own fragment loads from the stage
  // before the producer's copies that follow its wait (an acquire). One arrival per warp after a
  // __syncwarp would be as correct, but compute-sanitizer's racecheck did not follow it and
  // reported the one-warpgroup tiles' loads as racing the copies.
  auto release = [&](unsigned g) { arrive(empty0 + 8 * static_cast<int>(g % STAGES)); };

  // The first wgmma of a sum ignores what its accumulators hold (scale-d 0), so they are set to
  // zero only where there is none, and a unit's first tile is issued before its loop: an
  // instruction other than a wgmma defining them before a wgmma would make ptxas serialize the
  // wgmmas (C7515).
  float acc[kAcc];
#if PROMOTE
  float part[kAcc];  // one K tile's sum, from zero
#endif

  // Issues stage-use g's wgmmas from fragments `f` as one group; the first of the sum (of a
  // unit's first tile, or of every tile's partial with PROMOTE) starts from zero.
  auto multiply = [&](unsigned g, const Fragments& f, bool first) {
#if PROMOTE
    float(&d)[kAcc] = part;
    const bool from_zero = true;
    (void)first;
#else
    float(&d)[kAcc] = acc;
    const bool from_zero = first;
#endif
    const unsigned a_big = base + static_cast<int>(g % STAGES) * kStageBytes;
#if SPLIT == 3
    const unsigned a_small = a_big + kATileBytes;
#endif
    // With PROMOTE every tile's sum starts from zero: its first wgmma only writes the partial
    // sums, which hold nothing the compiler must keep before it.
    if (!(PROMOTE && STREAM_K)) pin(d);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
      // A k8 step is 32 bytes further along each 128-byte row.
      const int scale_d = from_zero && s == 0 ? 0 : 1;
#if SPLIT == 3
      // The small terms first, while the sum is small.
      if (PROMOTE && STREAM_K && s == 0)
        wgmma<true>(d, f.small[s], descriptor(a_big + 32 * s), 0);
      else
        wgmma<false>(d, f.small[s], descriptor(a_big + 32 * s), scale_d);
      wgmma<false>(d, f.big[s], descriptor(a_small + 32 * s), 1);
      wgmma<false>(d, f.big[s], descriptor(a_big + 32 * s), 1);
#else
      if (PROMOTE && STREAM_K && s == 0)
        wgmma<true>(d, f.big[s], descriptor(a_big + 32 * s), 0);
      else
        wgmma<false>(d, f.big[s], descriptor(a_big + 32 * s), scale_d);
#endif
    }
    wgmma_commit();
    pin(d);
  };

  // One iteration, local tile t of a unit of `len` starting at stage-use g0: tile t's wgmmas go
  // out; with accumulation in the wgmmas, tile t - 1's are waited for (so its fragments and stage
  // are free) while tile t's run, and tile t + 1 is prepared meanwhile; with PROMOTE, tile t + 1
  // is prepared while tile t's run, then they are waited for and the partial sum is added.
  auto iteration = [&](unsigned g0, int len, int t, const Fragments& f, Fragments& next,
                       bool first) {
    multiply(g0 + t, f, first);
#if !PROMOTE
    wgmma_wait<1>();
    if (t > 0) release(g0 + t - 1);
#endif
    if (t + 1 < len) prepare(g0 + t + 1, next);
#if PROMOTE
    wgmma_wait<0>();
    release(g0 + t);
    pin(part);
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] += part[i];
    pin(part);  // the next tile's first wgmma (scale-d 0) writes part only after these reads
#endif
  };

#if STREAM_K
  // The consumers alone (named barrier 1; __syncthreads is barrier 0).
  auto sync_consumers = [] { asm volatile("bar.sync 1, %0;\n" ::"n"(kGroups * 128) : "memory"); };
#endif

  // Stage uses so far, modulo 2 STAGES: all that the stage and its phase depend on (and one
  // register instead of a 64-bit count's two).
  unsigned g = 0;
  for_each_unit(split, k_tiles, [&](const Unit& u) {
    const int len = u.k_end - u.k_begin;
#if PROMOTE
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#endif
    // Two fragment buffers, alternating by tile: the loop goes two tiles at a time so that each
    // buffer stays the same registers, and branches only where no wgmma is in flight (the merge
    // of a branch may copy the accumulators, which ptxas would count as touching them
    // mid-pipeline).
    Fragments even, odd;
    if (len > 0) {
      prepare(g, even);
      iteration(g, len, 0, even, odd, true);
      int t = 1;
      for (; t + 1 < len; t += 2) {
        iteration(g, len, t, odd, even, false);
        iteration(g, len, t + 1, even, odd, false);
      }
      wgmma_wait<0>();
      pin(acc);
      if (t < len) {
        iteration(g, len, t, odd, even, false);
        wgmma_wait<0>();
        pin(acc);
      }
#if !PROMOTE
      release(g + len - 1);  // the unit's last tile: the next unit refills its stage
#endif
    } else {
#if !PROMOTE
#pragma unroll
      for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#endif
    }
    g = (g + static_cast<unsigned>(len)) % (2 * STAGES);

#if STREAM_K
    // A tile cut between blocks: a block without its last K tiles hands its partial sum on
    // (four accumulators per 16 bytes, thread-major, so the block that adds it reads it back with
    // the same thread and index, coalesced); the block with them adds the others' to its own in
    // block order. 16-byte stores and loads where ptxas then keeps every value in registers (the
    // two-warpgroup tiles with PROMOTE), one float at a time elsewhere: the choice that compiles
    // without spills (tests/test_nvrtc_compile.cpp checks every variant).
    constexpr int kConsumers = kGroups * 128;
    constexpr bool kVectorHandOn = PROMOTE && kGroups == 2;
    if (u.k_end < k_tiles) {
      float4* const mine =
          reinterpret_cast<float4*>(split.partials + static_cast<long long>(blockIdx.x) * BM * BN);
      if (kVectorHandOn) {
#pragma unroll
        for (int j = 0; j < kAcc / 4; ++j)
          __stcg(mine + j * kConsumers + ctid(),
                 make_float4(acc[4 * j], acc[4 * j + 1], acc[4 * j + 2], acc[4 * j + 3]));
      } else {
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          __stcg(reinterpret_cast<float*>(mine + i / 4 * kConsumers + ctid()) + i % 4, acc[i]);
      }
      sync_consumers();
      if (ctid() == 0) raise_flag(split, static_cast<int>(blockIdx.x));
      return;
    }
    if (u.k_begin > 0) {
      // The blocks before this one whose K tiles reach into this tile.
      const int first = first_block_of_tile(split, k_tiles, u.tile, static_cast<int>(blockIdx.x));
      if (ctid() == 0) wait_for_flags(split, first, static_cast<int>(blockIdx.x));
      sync_consumers();
      for (int c = first; c < static_cast<int>(blockIdx.x); ++c) {
        const float4* const theirs =
            reinterpret_cast<const float4*>(split.partials + static_cast<long long>(c) * BM * BN) +
            ctid();
#if PROMOTE
        // Through the partial sums' registers, which hold nothing now: the loads in flight
        // need no more.
        if (kVectorHandOn) {
#pragma unroll
          for (int j = 0; j < kAcc / 4; ++j) {
            const float4 x = __ldcg(theirs + j * kConsumers);
            part[4 * j] = x.x;
            part[4 * j + 1] = x.y;
            part[4 * j + 2] = x.z;
            part[4 * j + 3] = x.w;
          }
        } else {
#pragma unroll
          for (int i = 0; i < kAcc; ++i)
            part[i] = __ldcg(reinterpret_cast<const float*>(theirs + i / 4 * kConsumers) + i % 4);
        }
#pragma unroll
        for (int i = 0; i < kAcc; ++i) acc[i] += part[i];
#else
#pragma unroll
        for (int i = 0; i < kAcc; ++i)
          acc[i] += __ldcg(reinterpret_cast<const float*>(theirs + i / 4 * kConsumers) + i % 4);
#endif
      }
    }
#endif

    // acc[i] is D's (accumulator_row, accumulator_column): the block's column n (through
    // c_column_of_row) and row m. acc[i] and acc[i + 2] (i % 4 < 2) are columns n and n + 1 of
    // one row: one 8-byte store; a warp's store covers 4 rows x 64 contiguous bytes.
    const int m0 = row0(u), n0 = col0(u);
    const int rem_m = M - m0, rem_n = N - n0;
#pragma unroll
    for (int j = 0; j < kAcc / 4; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int i = 4 * j + h;
        const int m = accumulator_column(lane, i);
        const int n = 64 * group + c_column_of_row(accumulator_row(warp, lane, i));
        if (m >= rem_m || n >= rem_n) continue;
        float* const dst = C + static_cast<long long>(m0 + m) * ldc + n0 + n;
        const float v0 = alpha * acc[i];
        const float v1 = alpha * acc[i + 2];
        // Alignment class 4: C and ldc keep every even column 8-byte aligned. With
        // ALIGNED_COPIES C may have any alignment: one float at a time.
        if (!ALIGNED_COPIES && n + 1 < rem_n) {
          float2 out = make_float2(v0, v1);
          if (beta != 0.0f) {
            const float2 old = *reinterpret_cast<const float2*>(dst);
            out.x += beta * old.x;
            out.y += beta * old.y;
          }
          *reinterpret_cast<float2*>(dst) = out;
          continue;
        }
        dst[0] = beta != 0.0f ? v0 + beta * dst[0] : v0;
        if (ALIGNED_COPIES && n + 1 < rem_n) dst[1] = beta != 0.0f ? v1 + beta * dst[1] : v1;
      }
  });
}

#if ALIGNED_COPIES
#define TILEMM_PASTE2(a, b) a##b
#define TILEMM_PASTE(a, b) TILEMM_PASTE2(a, b)
// dst (rows x ldd) = src (rows x cols, pitch lds), the columns from cols to ldd zero: A and B
// copied for the kernel above, whose 16-byte copies and TMA need rows that start 16-byte
// aligned. What warptile.cu's copy kernel computes, with the same grid (each template compiles
// alone): one column per thread, 256 threads per block, the grid's x over ldd and its y striding
// over the rows. A thread loads kRowsInFlight rows before it stores them, so that an SM has that
// many loads in flight per thread where the copy's speed is the loads' latency.
extern "C" __global__ void __launch_bounds__(256)
TILEMM_PASTE(TILEMM_KERNEL_NAME, _copy)(int rows, int cols, const float* __restrict__ src,
                                       long long lds, float* __restrict__ dst, long long ldd) {
  constexpr int kRowsInFlight = 8;
  const long long col = static_cast<long long>(blockIdx.x) * 256 + threadIdx.x;
  if (col >= ldd) return;
  const bool inside = col < cols;
  const long long step = gridDim.y;
  for (long long row0 = blockIdx.y; row0 < rows; row0 += kRowsInFlight * step) {
    float v[kRowsInFlight];
#pragma unroll
    for (int j = 0; j < kRowsInFlight; ++j) {
      const long long row = row0 + j * step;
      v[j] = inside && row < rows ? src[row * lds + col] : 0.0f;
    }
#pragma unroll
    for (int j = 0; j < kRowsInFlight; ++j) {
      const long long row = row0 + j * step;
      if (row < rows) dst[row * ldd + col] = v[j];
    }
  }
}
#endif

#endif  // TILEMM_TF32WGMMA_INDEX_MAPS_ONLY
