// tf32wgmma: SGEMM on Hopper's warpgroup tensor-core instruction, wgmma.mma_async, with TF32
// inputs, for the precision modes `high` and `medium` (tilemm/precision.hpp). Compiled for sm_90a
// only (wgmma is an architecture-specific feature; the family says so and NVRTC gets
// --gpu-architecture=sm_90a). Over tf32mma's mma.sync it adds (docs/kernels.md):
//  - wgmma.mma_async.sync.aligned.m64nNk8.f32.tf32.tf32 with N = BN: a warpgroup (128 threads)
//    owns 64 rows x BN columns of C and multiplies them with one asynchronous instruction per k8
//    step, both operands read by the tensor cores straight from shared memory through matrix
//    descriptors; BM / 64 warpgroups per block, each with its own 64 rows.
//  - Operand planes. TF32 wgmma takes shared-memory operands only K-major (no transpose for
//    32-bit types). A (M x K, row-major) is K-major already; B (K x N, row-major, N contiguous) is
//    N-major, so it is transposed on chip. Both arrive by cp.async in their global layout into a
//    STAGES-deep ring of raw tiles, and one conversion pass per K tile writes them as "planes" in
//    the canonical no-swizzle K-major layout: 8 rows x 16 bytes core matrices (8 x 4 floats, 128
//    contiguous bytes), the K-adjacent core matrices 128 bytes apart (the descriptor's leading
//    byte offset), the next 8 rows BK * 32 bytes on (its stride byte offset). The same pass
//    rounds each input to TF32 with cvt.rna (SPLIT 1, medium: the hardware would otherwise
//    truncate), or splits it into big = tf32(x) and small = tf32(x - big) planes (SPLIT 3, high,
//    3xTF32: small_a big_b + big_a small_b + big_a big_b per k8 step, small_a small_b omitted):
//    on chip, with no extra pass over global memory.
//  - Two plane buffers: the conversion of K tile kt + 1 runs on the CUDA cores while the
//    wgmmas of tile kt run on the tensor cores.
//  - PROMOTE 1 (the default with SPLIT 3): the tensor core's accumulation aligns and truncates
//    instead of rounding to nearest, so the wgmmas of one K tile accumulate a partial sum started
//    from zero (scale-d 0 on the tile's first wgmma), and after the tile the partial is added to
//    the running sum with FADDs that round to nearest (the promotion of DeepSeek's FP8 GEMM, here
//    every BK / 8 k8 steps). It costs BN / 2 more registers per thread and a wait for the tile's
//    wgmmas before the next tile's may start. PROMOTE 0 accumulates in the wgmmas.
// Edge tiles load zeros (cp.async's src-size zero-fills what lies outside A or B) and guard their
// stores, so every M, N, K >= 0 is correct. 16-byte copies: alignment class 4 (A, B, C 16-byte
// aligned, lda, ldb, ldc multiples of 4). beta == 0 never reads C.
// Non-finite inputs: with SPLIT 3 an infinite input gives NaN where FP32 gives +-inf (its small
// part is inf - inf); SPLIT 1 keeps FP32's inf and NaN.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME tf32wgmma
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 16
#endif
#ifndef STAGES
#define STAGES 4
#endif
#ifndef SPLIT
#define SPLIT 3
#endif
#ifndef PROMOTE
#if SPLIT == 3
#define PROMOTE 1
#else
#define PROMOTE 0
#endif
#endif

namespace {

constexpr int kGroups = BM / 64;           // consumer warpgroups, 64 rows of C each
constexpr int kThreads = kGroups * 128;
constexpr int kAcc = BN / 2;               // accumulator floats per thread: 64 x BN / 128
constexpr int kPlanes = SPLIT == 3 ? 2 : 1;  // big (and small) per operand
constexpr int kChunks = BK / 4;            // 16-byte chunks of K per row
// Raw tiles as they arrive: A [BM][BK + 4] (the padding spreads the conversion's reads of 8 rows
// over distinct banks), B [BK][BN].
constexpr int kLdA = BK + 4;
constexpr int kRawA = BM * kLdA;
constexpr int kRawStage = kRawA + BK * BN;
// Planes, in floats: a row r, column k of a K-major plane is at
// (r / 8) * kStrideFloats + (k / 4) * 32 + (r % 8) * 4 + k % 4.
constexpr int kStrideFloats = kChunks * 32;
constexpr int kPlaneA = BM * BK;
constexpr int kPlaneB = BN * BK;
constexpr int kPlaneSet = kPlanes * (kPlaneA + kPlaneB);  // one buffer's planes
constexpr int kACopies = BM * kChunks / kThreads;         // cp.async per thread per K tile
constexpr int kBCopies = BK * BN / 4 / kThreads;
constexpr int kAConverts = BM * kChunks / kThreads;       // float4 conversions per thread
constexpr int kBConverts = BN * kChunks / kThreads;

static_assert(BM == 64 || BM == 128, "BM is one (64) or two (128) warpgroups of 64 rows");
static_assert(BN == 64 || BN == 128 || BN == 256, "BN is a wgmma N of 64, 128 or 256");
static_assert(BK == 16 || BK == 32, "BK is 16 or 32 (two or four k8 steps per K tile)");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES is 2, 3 or 4");
static_assert(SPLIT == 1 || SPLIT == 3, "SPLIT is 1 (medium: one TF32 pass) or 3 (high: 3xTF32)");
static_assert(PROMOTE == 0 || PROMOTE == 1, "PROMOTE is 0 (sums in the wgmmas) or 1 (FADDs)");
static_assert((BM * kChunks) % kThreads == 0 && (BK * BN / 4) % kThreads == 0 &&
                  (BN * kChunks) % kThreads == 0,
              "the tiles must split evenly into the block's copies and conversions");
static_assert(kRawStage * 4 % 1024 == 0 && kPlaneA * 4 % 1024 == 0 && kPlaneB * 4 % 1024 == 0,
              "every plane starts 1024-byte aligned");

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies `bytes` (0..16) of global `src` to shared `dst` asynchronously and zero-fills the rest
// of the 16. `src` must be 16-byte aligned even when bytes is 0.
__device__ __forceinline__ void copy_async(unsigned dst, const float* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most STAGES - 2 committed groups are still in flight.
__device__ __forceinline__ void wait_for_oldest_stage() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
}

__device__ __forceinline__ float to_tf32(float x) {
  unsigned r;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}

// The shared-memory matrix descriptor of a K-major, unswizzled operand whose first core matrix
// is at `plane`: start address, leading byte offset (the next 4 floats of K: 128 bytes on),
// stride byte offset (the next 8 rows), each in 16-byte units; base offset and swizzle 0.
__device__ __forceinline__ unsigned long long descriptor(const float* plane) {
  const unsigned long long start = (shared_address(plane) & 0x3FFFF) >> 4;
  constexpr unsigned long long kLeading = 128 >> 4;
  constexpr unsigned long long kStride = (kStrideFloats * 4) >> 4;
  return start | (kLeading << 16) | (kStride << 32);
}

// Orders the generic-proxy stores of this thread to shared memory before later reads of the same
// memory by wgmma (the async proxy).
__device__ __forceinline__ void fence_planes_for_wgmma() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

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

// d (64 x BN of C, this warpgroup's) = A * B + (accumulate ? d : 0), one k8 step: A from the
// descriptor `desc_a` (64 rows x 8 of K), B from `desc_b` (BN rows of N x 8 of K).
#if BN == 64
__device__ __forceinline__ void wgmma(float (&d)[32], unsigned long long desc_a,
                                      unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
      "}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}
#endif

#if BN == 128
__device__ __forceinline__ void wgmma(float (&d)[64], unsigned long long desc_a,
                                      unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
      "}, %64, %65, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}
#endif

#if BN == 256
__device__ __forceinline__ void wgmma(float (&d)[128], unsigned long long desc_a,
                                      unsigned long long desc_b, int accumulate) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 {"
      "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
      "}, %128, %129, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
        "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
        "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]),
        "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]),
        "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]),
        "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]),
        "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]),
        "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]),
        "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]),
        "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]), "+f"(d[65]),
        "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]),
        "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]),
        "+f"(d[78]), "+f"(d[79]), "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]),
        "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]), "+f"(d[89]),
        "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]),
        "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]),
        "+f"(d[102]), "+f"(d[103]), "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]),
        "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), "+f"(d[112]), "+f"(d[113]),
        "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]),
        "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
        "+f"(d[126]), "+f"(d[127])
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}
#endif

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  // Dynamic, above the 48 KiB static limit (the loader opts in). [STAGES] raw tiles, then two
  // plane buffers, each A big, (A small,) B big, (B small,).
  extern __shared__ __align__(1024) float4 smem4[];
  float* const raw = reinterpret_cast<float*>(smem4);
  float* const planes = raw + STAGES * kRawStage;

  const int tid = threadIdx.x;
  const int group = tid / 128;  // this thread's warpgroup: rows 64 * group.. of the block tile
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  // Remaining extents instead of m0 + row < M: no int overflow for M or N near 2^31.
  const int rem_m = M - m0;
  const int rem_n = N - n0;

  // Issues the copies of K tile `k0` into raw stage `stage`; what lies outside A or B is
  // zero-filled, so the wgmmas of an edge tile add zeros.
  auto load_tile = [&](int stage, int k0) {
    float* const as = raw + stage * kRawStage;
    float* const bs = as + kRawA;
#pragma unroll
    for (int i = 0; i < kACopies; ++i) {
      const int id = tid + i * kThreads;
      const int r = id / kChunks;
      const int c = (id % kChunks) * 4;
      const int in_k = min(max(K - k0 - c, 0), 4);
      const int floats = r < rem_m ? in_k : 0;
      const float* src = floats > 0 ? A + static_cast<long long>(m0 + r) * lda + k0 + c : A;
      copy_async(shared_address(as + r * kLdA + c), src, floats * 4);
    }
#pragma unroll
    for (int i = 0; i < kBCopies; ++i) {
      const int id = tid + i * kThreads;
      const int r = id / (BN / 4);
      const int c = (id % (BN / 4)) * 4;
      const int floats = r < K - k0 ? min(max(rem_n - c, 0), 4) : 0;
      const float* src = floats > 0 ? B + static_cast<long long>(k0 + r) * ldb + n0 + c : B;
      copy_async(shared_address(bs + r * BN + c), src, floats * 4);
    }
  };

  // Writes raw stage `stage` as the K-major planes of buffer `buffer`: rounded to TF32, or split
  // into big and small. Each float4 written is one row of one core matrix.
  auto convert_tile = [&](int stage, int buffer) {
    const float* const as = raw + stage * kRawStage;
    const float* const bs = as + kRawA;
    float* const a_big = planes + buffer * kPlaneSet;
    float* const b_big = a_big + kPlanes * kPlaneA;
    auto store = [](float* big, int plane_floats, int at, float4 x) {
      const float4 hi = make_float4(to_tf32(x.x), to_tf32(x.y), to_tf32(x.z), to_tf32(x.w));
      *reinterpret_cast<float4*>(big + at) = hi;
#if SPLIT == 3
      const float4 lo = make_float4(to_tf32(x.x - hi.x), to_tf32(x.y - hi.y), to_tf32(x.z - hi.z),
                                    to_tf32(x.w - hi.w));
      *reinterpret_cast<float4*>(big + plane_floats + at) = lo;
#else
      (void)plane_floats;
#endif
    };
    // A: chunk `id` is row (id / (8 kChunks)) * 8 + id % 8, K chunk (id / 8) % kChunks, which the
    // plane layout puts at 4 * id: eight lanes write one core matrix's 128 contiguous bytes and
    // read eight rows whose padded stride puts them on distinct banks.
#pragma unroll
    for (int i = 0; i < kAConverts; ++i) {
      const int id = tid + i * kThreads;
      const int row = (id / (8 * kChunks)) * 8 + id % 8;
      const int c = (id / 8) % kChunks;
      store(a_big, kPlaneA, 4 * id,
            *reinterpret_cast<const float4*>(as + row * kLdA + 4 * c));
    }
    // B, transposed: a warp takes 32 consecutive columns n of one K chunk, reading four raw rows
    // of 32 consecutive floats and writing, per eight lanes, one core matrix.
#pragma unroll
    for (int i = 0; i < kBConverts; ++i) {
      const int id = tid + i * kThreads;
      const int n = id % BN;
      const int c = id / BN;
      const float* col = bs + 4 * c * BN + n;
      store(b_big, kPlaneB, (n / 8) * kStrideFloats + c * 32 + (n % 8) * 4,
            make_float4(col[0], col[BN], col[2 * BN], col[3 * BN]));
    }
    fence_planes_for_wgmma();
  };

  const int k_tiles = (K + BK - 1) / BK;
  // The first wgmma of the sum ignores what its accumulators hold (scale-d 0), so they are set to
  // zero only where there is none: an instruction other than a wgmma defining them would make
  // ptxas serialize the wgmmas (C7515).
  float acc[kAcc];
#if PROMOTE
  float part[kAcc];  // one K tile's sum, from zero
#pragma unroll
  for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
#else
  if (k_tiles == 0) {
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] = 0.0f;
  }
#endif

  // The wgmmas of one K tile from plane buffer `buffer`, committed as one group.
  auto multiply_tile = [&](int buffer, bool first) {
    const float* const a_big = planes + buffer * kPlaneSet + group * 64 * BK;
    const float* const b_big = planes + buffer * kPlaneSet + kPlanes * kPlaneA;
#if PROMOTE
    float(&d)[kAcc] = part;
#else
    float(&d)[kAcc] = acc;
#endif
    pin(d);
    wgmma_fence();
#pragma unroll
    for (int s = 0; s < BK / 8; ++s) {
      // A k8 step is two core matrices of K: 256 bytes into every 8-row group.
      const unsigned long long a_hi = descriptor(a_big + s * 64);
      const unsigned long long b_hi = descriptor(b_big + s * 64);
#if SPLIT == 3
      const unsigned long long a_lo = descriptor(a_big + kPlaneA + s * 64);
      const unsigned long long b_lo = descriptor(b_big + kPlaneB + s * 64);
      // The small terms first, while the sum is small.
      wgmma(d, a_lo, b_hi, (PROMOTE || first) && s == 0 ? 0 : 1);
      wgmma(d, a_hi, b_lo, 1);
      wgmma(d, a_hi, b_hi, 1);
#else
      wgmma(d, a_hi, b_hi, (PROMOTE || first) && s == 0 ? 0 : 1);
#endif
    }
    wgmma_commit();
    pin(d);
  };

  // The pipeline. Raw tiles: STAGES - 1 in flight ahead of the one converted, one cp.async group
  // per tile (empty past the last) so that the wait count stays exact. Planes: tile kt + 1 is
  // converted into one buffer while tile kt's wgmmas read the other.
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s * BK);
    commit_copies();
  }
  if (k_tiles > 0) {
    wait_for_oldest_stage();
    __syncthreads();  // raw tile 0 is visible to every thread
    if (STAGES - 1 < k_tiles) load_tile(STAGES - 1, (STAGES - 1) * BK);
    commit_copies();
    convert_tile(0, 0);
    __syncthreads();  // planes 0 are written and fenced by every thread
    multiply_tile(0, true);
  }
  // Each iteration starts with tile kt's wgmmas in flight and ends by issuing tile kt + 1's.
  for (int kt = 0; kt < k_tiles; ++kt) {
    if (kt + 1 < k_tiles) {
      wait_for_oldest_stage();  // this thread's copies of raw tile kt + 1 have landed
      wgmma_wait<1>();          // this warpgroup's wgmmas of tile kt - 1 are done
      // Raw tile kt + 1 is visible; every warpgroup is done with the planes tile kt + 1 goes to;
      // every thread is done converting raw tile kt, whose stage the next copy overwrites.
      __syncthreads();
      const int ahead = kt + STAGES;
      if (ahead < k_tiles) load_tile(ahead % STAGES, ahead * BK);
      commit_copies();
      convert_tile((kt + 1) % STAGES, (kt + 1) % 2);
    }
#if PROMOTE
    wgmma_wait<0>();
    pin(part);
#pragma unroll
    for (int i = 0; i < kAcc; ++i) acc[i] += part[i];
    pin(part);  // the next tile's first wgmma (scale-d 0) writes part only after these reads
#endif
    __syncthreads();  // planes of tile kt + 1 are written and fenced by every thread
    if (kt + 1 < k_tiles) multiply_tile((kt + 1) % 2, false);
  }
  wgmma_wait<0>();
  pin(acc);

  // Accumulator layout of m64nNk8: warp w of the warpgroup holds rows 16 w + g and 16 w + g + 8
  // (g = lane / 4), and for each 8 columns j, acc[4 j + 0, 1] at columns 8 j + 2 t, + 1 of the
  // first row and acc[4 j + 2, 3] of the second (t = lane % 4).
  const int lane = tid % 32;
  const int row0 = group * 64 + ((tid % 128) / 32) * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int r = row0 + half * 8;
      const int c = j * 8 + 2 * (lane % 4);
      if (r >= rem_m || c >= rem_n) continue;
      float* const dst = C + static_cast<long long>(m0 + r) * ldc + n0 + c;
      const float v0 = alpha * acc[4 * j + 2 * half];
      const float v1 = alpha * acc[4 * j + 2 * half + 1];
      // Alignment class 4: C and ldc keep every even column 8-byte aligned.
      if (c + 1 < rem_n) {
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
    }
}
