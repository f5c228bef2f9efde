// sliced: a test-only family (tests/test_family_strategy.cpp) that shows what a family with its
// own launch mechanism is: SLICES blocks along grid.z each sum one run of K for one element of
// C into a workspace, and the module's own <name>_sum kernel, of SUM_THREADS threads per block,
// adds the slices into C. SLICES = 1 writes C directly and has no _sum kernel. Never part of the
// library: registered only by the test.
#ifndef TILEMM_KERNEL_NAME
#define TILEMM_KERNEL_NAME sliced
#endif
#ifndef SLICES
#define SLICES 1
#endif
#ifndef SUM_THREADS
#define SUM_THREADS 128
#endif
#ifndef PARTIALS_IN_WORKSPACE
#error "the family's extra_definitions must pass -DPARTIALS_IN_WORKSPACE=1"
#endif
static_assert(SUM_THREADS % 32 == 0, "SUM_THREADS must be a whole number of warps");

#define TILEMM_PASTE2(a, b) a##b
#define TILEMM_PASTE(a, b) TILEMM_PASTE2(a, b)

// One thread per element of C in 16 x 16 blocks; block z sums k in its run of K. With SLICES > 1
// the caller passes the workspace as C (alpha 1, beta 0, ldc = N), and slice z starts M * ldc
// floats after slice z - 1.
extern "C" __global__ void __launch_bounds__(256)
TILEMM_KERNEL_NAME(int M, int N, int K, float alpha, const float* __restrict__ A, long long lda,
                   const float* __restrict__ B, long long ldb, float beta, float* __restrict__ C,
                   long long ldc) {
  const int col = blockIdx.x * 16 + threadIdx.x;
  const int row = blockIdx.y * 16 + threadIdx.y;
  if (row >= M || col >= N) return;
  const int run = (K + SLICES - 1) / SLICES;
  const int k_begin = blockIdx.z * run;
  const int k_end = min(K, k_begin + run);
  float acc = 0.0f;
  for (int k = k_begin; k < k_end; ++k)
    acc = fmaf(A[static_cast<long long>(row) * lda + k], B[static_cast<long long>(k) * ldb + col],
               acc);
  float* c = C + static_cast<long long>(blockIdx.z) * M * ldc + static_cast<long long>(row) * ldc +
             col;
  *c = (beta == 0.0f) ? alpha * acc : fmaf(alpha, acc, beta * *c);
}

#if SLICES > 1
// C = alpha * (W[0] + ... + W[SLICES - 1]) + beta * C over the M x N elements (slices dense,
// leading dimension N), in that order; the grid strides over the elements.
extern "C" __global__ void __launch_bounds__(SUM_THREADS)
TILEMM_PASTE(TILEMM_KERNEL_NAME, _sum)(int M, int N, const float* __restrict__ W, float alpha,
                                      float beta, float* __restrict__ C, long long ldc) {
  const long long count = static_cast<long long>(M) * N;
  for (long long i = static_cast<long long>(blockIdx.x) * SUM_THREADS + threadIdx.x; i < count;
       i += static_cast<long long>(gridDim.x) * SUM_THREADS) {
    float sum = W[i];
    for (int z = 1; z < SLICES; ++z) sum += W[z * count + i];
    float* c = C + (i / N) * ldc + i % N;
    *c = (beta == 0.0f) ? alpha * sum : fmaf(alpha, sum, beta * *c);
  }
}
#endif
