// tf32mma: SGEMM on the TF32 tensor cores (sm_80+), for the precision modes `high` and `medium`
// (tilemm/precision.hpp). Over warptile's FFMA it adds (docs/kernels.md):
//  - mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 through inline PTX: each warp owns a
//    WM x WN tile of C as (WM/16) x (WN/8) accumulators of 16 x 8, four floats per thread;
//  - a multistage pipeline (STAGES 2-4) of shared-memory tiles filled by cp.async, so that the
//    loads of STAGES - 1 K tiles are in flight while one is multiplied, with one barrier per K
//    tile and no staging registers;
//  - A fragments loaded with ldmatrix (an 8 x 4 block of 32-bit words is an 8 x 8 matrix of
//    16-bit ones, and the lane-to-word mapping of ldmatrix is the one mma wants for A), B
//    fragments with scalar shared loads; rows padded (A by 4 floats, B by 8) so that both are
//    free of bank conflicts;
//  - SPLIT 1 (medium): each input rounded once to TF32 (cvt.rna), one MMA per step. SPLIT 3
//    (high, "3xTF32"): each input split on chip into big = tf32(x) and small = tf32(x - big), and
//    a*b computed as small_a*big_b + big_a*small_b + big_a*big_b (small*small, ~2^-22 of the
//    product, omitted): no extra pass over global memory.
//  - PROMOTE 1 (the default with SPLIT 3): the tensor core's D = A*B + C aligns and truncates
//    rather than rounding to nearest, and thousands of such additions into one accumulator bias
//    the sum far beyond FP32's error. So the MMAs only form the partial sums of one k8 step,
//    started from zero (hi = big*big; lo = small*big + big*small), and the running sum lives in
//    ordinary registers, added to with FADD (round to nearest): acc += lo; acc += hi. PROMOTE 0
//    accumulates in the MMAs (SPLIT 1's form; TF32's input rounding dominates its error).
// Edge tiles load zeros (cp.async's src-size zero-fills what lies outside the matrix) and guard
// their stores, so every M, N, K >= 0 and every leading dimension >= the row length is correct.
// VEC 4 copies 16 bytes per cp.async and needs alignment class 4 (A, B, C 16-byte aligned,
// lda, ldb, ldc multiples of 4); VEC 1 copies 4 bytes and runs any alignment. beta == 0 never
// reads C.
// Non-finite inputs: with SPLIT 3 an infinite input gives NaN where FP32 gives +-inf (its small
// part is inf - inf); SPLIT 1 keeps FP32's inf and NaN.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME tf32mma
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
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 32
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef SPLIT
#define SPLIT 3
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef PROMOTE
#if SPLIT == 3
#define PROMOTE 1
#else
#define PROMOTE 0
#endif
#endif

#include "tf32.cuh"  // tf32_bits

namespace {

constexpr int kWarpsN = BN / WN;
constexpr int kThreads = (BM / WM) * kWarpsN * 32;
constexpr int kMi = WM / 16;  // 16-row MMA tiles per warp
constexpr int kNi = WN / 8;   // 8-column MMA tiles per warp
// Row strides of the shared tiles in floats. A's fragments read rows g (0..7) at column t
// (0..3): stride = 4 mod 32 puts the 32 lanes on 32 banks, and ldmatrix's 8 rows of 16 bytes on
// 8 disjoint groups of 4 banks. B's read rows t at column g: stride = 8 mod 32 does the same.
// Both keep rows 16-byte aligned for cp.async and ldmatrix.
constexpr int kLdA = BK + 4;
constexpr int kLdB = BN + 8;
constexpr int kAStage = BM * kLdA;
constexpr int kBStage = BK * kLdB;
constexpr int kALoads = BM * BK / VEC / kThreads;  // cp.async per thread per K tile, A
constexpr int kBLoads = BK * BN / VEC / kThreads;  // and B

static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles must divide the block tile");
static_assert(WM % 16 == 0 && WN % 8 == 0, "a warp tile is made of 16 x 8 MMA tiles");
static_assert(BK % 8 == 0, "BK must be a multiple of the MMA's K (8)");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES is 2, 3 or 4");
static_assert(SPLIT == 1 || SPLIT == 3, "SPLIT is 1 (medium: one TF32 pass) or 3 (high: 3xTF32)");
static_assert(VEC == 1 || VEC == 4, "VEC is 1 (4-byte copies) or 4 (16-byte copies)");
static_assert(PROMOTE == 0 || PROMOTE == 1, "PROMOTE is 0 (sums in the MMAs) or 1 (in FADDs)");
static_assert(BK % VEC == 0 && BN % VEC == 0, "a copy stays inside one row of a tile");
static_assert((BM * BK / VEC) % kThreads == 0 && kALoads > 0,
              "the A tile must split evenly into the block's copies");
static_assert((BK * BN / VEC) % kThreads == 0 && kBLoads > 0,
              "the B tile must split evenly into the block's copies");

__device__ __forceinline__ unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Copies `bytes` (0..4 * VEC) floats' bytes from global `src` to shared `dst` asynchronously
// and zero-fills the rest of the VEC floats. `src` must be VEC-float aligned even when bytes is 0.
__device__ __forceinline__ void copy_async(unsigned dst, const float* src, int bytes) {
#if VEC == 4
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
#else
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
               : "memory");
#endif
}

__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most STAGES - 2 committed groups are still in flight.
__device__ __forceinline__ void wait_for_oldest_stage() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2) : "memory");
}

// One input in the form the MMAs take: big = tf32(x), and with SPLIT 3 small = tf32(x - big)
// (x - big is exact in FP32: big is x rounded to 11 significant bits).
struct Split {
  unsigned big;
#if SPLIT == 3
  unsigned small;
#endif
};

__device__ __forceinline__ Split split(float x) {
  Split s;
  s.big = tf32_bits(x);
#if SPLIT == 3
  s.small = tf32_bits(x - __uint_as_float(s.big));
#endif
  return s;
}

__device__ __forceinline__ void mma(float (&d)[4], unsigned a0, unsigned a1, unsigned a2,
                                    unsigned a3, unsigned b0, unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// d = a*b, the partial sum of one k8 step started from zero (PROMOTE's MMAs).
__device__ __forceinline__ void mma_from_zero(float (&d)[4], unsigned a0, unsigned a1,
                                              unsigned a2, unsigned a3, unsigned b0,
                                              unsigned b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%10,%10,%10,%10};\n"
      : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(0.0f));
}

}  // namespace

extern "C" __global__ void __launch_bounds__(kThreads)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  // Dynamic, so that tiles above the 48 KiB static limit work (the loader opts in).
  extern __shared__ float4 smem4[];
  float* const As = reinterpret_cast<float*>(smem4);  // [STAGES][BM][kLdA]
  float* const Bs = As + STAGES * kAStage;             // [STAGES][BK][kLdB]

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  const int g = lane / 4;  // the MMA fragments' groupID
  const int t = lane % 4;  // and threadID_in_group
  const int warp_m = (warp / kWarpsN) * WM;
  const int warp_n = (warp % kWarpsN) * WN;
  const int m0 = blockIdx.y * BM;
  const int n0 = blockIdx.x * BN;
  // Remaining extents instead of m0 + row < M: no int overflow for M or N near 2^31.
  const int rem_m = M - m0;
  const int rem_n = N - n0;

  // Issues the copies of K tile `k0` into `stage`; what lies outside A or B is zero-filled, so
  // the MMAs of an edge tile add zeros.
  // With VEC 1 the loops stay rolled: unrolled, the compiler hoists each copy's 64-bit source
  // address out of the K loop (16 to 24 of them live through it), which pushed the 64x32 warp
  // tiles to 255 registers and spills.
  auto load_tile = [&](int stage, int k0) {
    float* const as = As + stage * kAStage;
    float* const bs = Bs + stage * kBStage;
#if VEC == 1
#pragma unroll 1
#else
#pragma unroll
#endif
    for (int i = 0; i < kALoads; ++i) {
      const int id = tid + i * kThreads;
      const int r = id / (BK / VEC);
      const int c = (id % (BK / VEC)) * VEC;
      const int in_k = min(max(K - k0 - c, 0), VEC);
      const int floats = r < rem_m ? in_k : 0;
      const float* src = floats > 0 ? A + static_cast<long long>(m0 + r) * lda + k0 + c : A;
      copy_async(shared_address(as + r * kLdA + c), src, floats * 4);
    }
#if VEC == 1
#pragma unroll 1
#else
#pragma unroll
#endif
    for (int i = 0; i < kBLoads; ++i) {
      const int id = tid + i * kThreads;
      const int r = id / (BN / VEC);
      const int c = (id % (BN / VEC)) * VEC;
      const int floats = r < K - k0 ? min(max(rem_n - c, 0), VEC) : 0;
      const float* src = floats > 0 ? B + static_cast<long long>(k0 + r) * ldb + n0 + c : B;
      copy_async(shared_address(bs + r * kLdB + c), src, floats * 4);
    }
  };

  float acc[kMi][kNi][4];
#pragma unroll
  for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNi; ++ni)
#pragma unroll
      for (int q = 0; q < 4; ++q) acc[mi][ni][q] = 0.0f;

  // The MMAs of one K tile in `stage`.
  auto multiply_tile = [&](int stage) {
    const float* const as = As + stage * kAStage;
    const float* const bs = Bs + stage * kBStage;
#pragma unroll
    for (int kk = 0; kk < BK; kk += 8) {
      // A fragments: ldmatrix.x4 gives lane (g, t) the words (row g, col t) of four 8 x 4 blocks:
      // rows 0-7 / 8-15 (lanes 0-7 / 8-15 give their addresses) at columns 0-3, then at 4-7
      // (lanes 16-31): a0..a3 of the m16n8k8 A fragment.
      Split a[kMi][4];
#pragma unroll
      for (int mi = 0; mi < kMi; ++mi) {
        const int row = warp_m + mi * 16 + (lane & 7) + ((lane >> 3) & 1) * 8;
        const int col = kk + (lane >> 4) * 4;
        unsigned w0, w1, w2, w3;
        asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                     : "=r"(w0), "=r"(w1), "=r"(w2), "=r"(w3)
                     : "r"(shared_address(as + row * kLdA + col))
                     : "memory");
        a[mi][0] = split(__uint_as_float(w0));
        a[mi][1] = split(__uint_as_float(w1));
        a[mi][2] = split(__uint_as_float(w2));
        a[mi][3] = split(__uint_as_float(w3));
      }
#pragma unroll
      for (int ni = 0; ni < kNi; ++ni) {
        // B fragment: b0 = B[k = t][n = g], b1 = B[k = t + 4][n = g].
        const int col = warp_n + ni * 8 + g;
        const Split b0 = split(bs[(kk + t) * kLdB + col]);
        const Split b1 = split(bs[(kk + t + 4) * kLdB + col]);
#pragma unroll
        for (int mi = 0; mi < kMi; ++mi) {
#if PROMOTE
          // The k8 step's partial sums from zero, then two round-to-nearest FADDs, the smaller
          // first; the temporaries die at once, so they cost a few registers, not a fragment's.
          float hi[4];
          mma_from_zero(hi, a[mi][0].big, a[mi][1].big, a[mi][2].big, a[mi][3].big, b0.big,
                        b1.big);
#if SPLIT == 3
          float lo[4];
          mma_from_zero(lo, a[mi][0].small, a[mi][1].small, a[mi][2].small, a[mi][3].small,
                        b0.big, b1.big);
          mma(lo, a[mi][0].big, a[mi][1].big, a[mi][2].big, a[mi][3].big, b0.small, b1.small);
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[mi][ni][q] += lo[q];
#endif
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[mi][ni][q] += hi[q];
#else
#if SPLIT == 3
          // The small terms first: they are the least significant, added while the sum is small.
          mma(acc[mi][ni], a[mi][0].small, a[mi][1].small, a[mi][2].small, a[mi][3].small,
              b0.big, b1.big);
          mma(acc[mi][ni], a[mi][0].big, a[mi][1].big, a[mi][2].big, a[mi][3].big, b0.small,
              b1.small);
#endif
          mma(acc[mi][ni], a[mi][0].big, a[mi][1].big, a[mi][2].big, a[mi][3].big, b0.big,
              b1.big);
#endif
        }
      }
    }
  };

  // The pipeline: STAGES - 1 tiles in flight before the first multiply; then per K tile, wait
  // for the oldest, one barrier (its stage is visible to all, and every warp is done with the
  // stage the next copy overwrites), issue the copy STAGES - 1 tiles ahead, multiply. A group is
  // committed every time, empty past the last tile, so that the wait count stays exact.
  const int k_tiles = (K + BK - 1) / BK;
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) {
    if (s < k_tiles) load_tile(s, s * BK);
    commit_copies();
  }
  for (int kt = 0; kt < k_tiles; ++kt) {
    wait_for_oldest_stage();
    __syncthreads();
    const int ahead = kt + STAGES - 1;
    if (ahead < k_tiles) load_tile(ahead % STAGES, ahead * BK);
    commit_copies();
    multiply_tile(kt % STAGES);
  }

  // C fragment: c0, c1 at (row g, cols 2t, 2t + 1), c2, c3 at row g + 8.
#pragma unroll
  for (int mi = 0; mi < kMi; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNi; ++ni)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = warp_m + mi * 16 + g + half * 8;
        const int c = warp_n + ni * 8 + 2 * t;
        if (r >= rem_m || c >= rem_n) continue;
        float* const dst = C + static_cast<long long>(m0 + r) * ldc + n0 + c;
        const float v0 = alpha * acc[mi][ni][2 * half];
        const float v1 = alpha * acc[mi][ni][2 * half + 1];
#if VEC == 4
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
#endif
        dst[0] = beta != 0.0f ? v0 + beta * dst[0] : v0;
        if (c + 1 < rem_n) dst[1] = beta != 0.0f ? v1 + beta * dst[1] : v1;
      }
}
