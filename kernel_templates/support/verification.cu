// verification: the tuner bench's work on the GPU (tuner/gpu_bench.cpp), so that setting up a
// bench and checking a candidate move no operand through the host. Not a GEMM family.
//
//   tilemm_fill_uniform         random inputs: a counter-based hash of (seed, index), so any
//                               element is computed alone, in parallel, and the same seed gives
//                               the same values;
//   tilemm_reference_product    C = A B and |A| |B| in one pass, one thread per element and one
//                               FMA chain each in the order of k: the naive family's arithmetic,
//                               with no tiling to get wrong;
//   tilemm_count_outside_bound  how many elements of a candidate's C lie outside the error bound,
//                               and the first of them.
//
// The three are one file so that a process compiles them with one NVRTC run per device: that
// compilation is part of the first tuning's setup.
#ifndef REFERENCE_BLOCK
#define REFERENCE_BLOCK 16
#endif
#ifndef CHECK_ROWS
#define CHECK_ROWS 8
#endif
// A block of the check is CHECK_ROWS warps, each over 32 consecutive columns of one row, so that
// a warp sums its counts with shuffles before one atomic.
#define CHECK_COLUMNS 32

// splitmix64's finalizer: a bijection of 64-bit words whose every output bit depends on every
// input bit.
__device__ __forceinline__ unsigned long long mix64(unsigned long long x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

// dst[i] for i < count: one of the 2^24 evenly spaced floats of [-1, 1), each as likely (what
// std::uniform_real_distribution<float>(-1, 1) draws). splitmix64's sequence for a start that
// the seed decides: different seeds are far apart in it.
extern "C" __global__ void tilemm_fill_uniform(float* __restrict__ dst, unsigned long long count,
                                               unsigned long long seed) {
  const unsigned long long start = mix64(seed);
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    const unsigned long long h = mix64(start + i * 0x9e3779b97f4a7c15ull);
    // 24 bits k: k 2^-23 - 1 is exact in a float.
    dst[i] = static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
  }
}

// reference (M x N, leading dimension N) = A B and magnitude (the same) = |A| |B|. Rows past the
// grid's height (65535 blocks) are taken in further passes.
extern "C" __global__ void __launch_bounds__(REFERENCE_BLOCK * REFERENCE_BLOCK)
tilemm_reference_product(long long M, long long N, long long K, const float* __restrict__ A,
                         long long lda, const float* __restrict__ B, long long ldb,
                         float* __restrict__ reference, float* __restrict__ magnitude) {
  // threadIdx.x walks a row, as in the naive kernel: a warp reads B and writes coalesced.
  const long long col = static_cast<long long>(blockIdx.x) * REFERENCE_BLOCK + threadIdx.x;
  if (col >= N) return;
  const long long row_stride = static_cast<long long>(gridDim.y) * REFERENCE_BLOCK;
  for (long long row = static_cast<long long>(blockIdx.y) * REFERENCE_BLOCK + threadIdx.y; row < M;
       row += row_stride) {
    const float* a = A + row * lda;
    const float* b = B + col;
    float acc = 0.0f, mag = 0.0f;
    for (long long k = 0; k < K; ++k, b += ldb) {
      const float x = a[k], y = *b;
      acc = fmaf(x, y, acc);
      mag = fmaf(fabsf(x), fabsf(y), mag);
    }
    reference[row * N + col] = acc;
    magnitude[row * N + col] = mag;
  }
}

// outside[0] += how many C[i][j] (leading dimension ldc) have
//   !(|C[i][j] - reference[i][j]| <= unit magnitude[i][j] + 1e-30)   (in double: NaN is outside),
// outside[1] = min(outside[1], the smallest i N + j among them). reference and magnitude have
// leading dimension N. The caller sets outside to {0, ~0} first.
extern "C" __global__ void __launch_bounds__(CHECK_COLUMNS * CHECK_ROWS)
tilemm_count_outside_bound(long long M, long long N, const float* __restrict__ C, long long ldc,
                           const float* __restrict__ reference,
                           const float* __restrict__ magnitude, double unit,
                           unsigned long long* __restrict__ outside) {
  const long long col = static_cast<long long>(blockIdx.x) * CHECK_COLUMNS + threadIdx.x;
  const long long row_stride = static_cast<long long>(gridDim.y) * CHECK_ROWS;
  unsigned long long count = 0, first = ~0ull;
  if (col < N) {
    // Rows ascend, so a thread's first element outside is its smallest index.
    for (long long row = static_cast<long long>(blockIdx.y) * CHECK_ROWS + threadIdx.y; row < M;
         row += row_stride) {
      const long long i = row * N + col;
      const double err = fabs(static_cast<double>(C[row * ldc + col]) - static_cast<double>(reference[i]));
      if (!(err <= unit * static_cast<double>(magnitude[i]) + 1e-30)) {
        if (count++ == 0) first = static_cast<unsigned long long>(i);
      }
    }
  }
  // Every lane reaches the shuffles (no early return above): the warp's sums land in lane 0.
  for (int d = CHECK_COLUMNS / 2; d > 0; d /= 2) {
    count += __shfl_down_sync(0xffffffffu, count, d);
    first = min(first, __shfl_down_sync(0xffffffffu, first, d));
  }
  if (threadIdx.x == 0 && count != 0) {
    atomicAdd(&outside[0], count);
    atomicMin(&outside[1], first);
  }
}
