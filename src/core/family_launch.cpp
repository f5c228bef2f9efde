#include "family_launch.hpp"

#include <string>

#include "cuda_check.hpp"

namespace tilemm::detail {

void launch_kernel(cudaKernel_t kernel, const LaunchGeometry& g, void** params,
                   cudaStream_t stream) {
  const dim3 grid(g.grid[0], g.grid[1], g.grid[2]);
  const dim3 block(g.block[0], g.block[1], g.block[2]);
  TILEMM_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, params,
                               g.dynamic_shared_bytes, stream));
}

void launch_gemm_kernel(cudaKernel_t kernel, const LaunchGeometry& g, const GemmArgs& args,
                        cudaStream_t stream, std::initializer_list<void*> trailing) {
  // Dimensions as int (validated < 2^31), leading dimensions as 64-bit so that row * ld never
  // overflows.
  int M = static_cast<int>(args.M), N = static_cast<int>(args.N), K = static_cast<int>(args.K);
  float alpha = args.alpha, beta = args.beta;
  const float* A = args.A;
  const float* B = args.B;
  float* C = args.C;
  long long lda = args.lda, ldb = args.ldb, ldc = args.ldc;
  void* params[kMaxGemmParams] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
  std::size_t count = 11;
  if (trailing.size() > kMaxGemmParams - count)
    throw Error(ErrorKind::internal, "tilemm: launch_gemm_kernel takes at most " +
                                         std::to_string(kMaxGemmParams - count) +
                                         " trailing parameters");
  for (void* p : trailing) params[count++] = p;
  launch_kernel(kernel, g, params, stream);
}

}  // namespace tilemm::detail
