// The launch helpers a family's enqueue uses: every template's GEMM kernel has the same
// signature, and every launch is checked the same way.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <initializer_list>

#include "family.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::detail {

// cudaLaunchKernel of `kernel` with `g`'s grid, block and dynamic shared memory on `stream`.
// Throws tilemm::Error naming the call when the launch is refused. Asynchronous.
void launch_kernel(cudaKernel_t kernel, const LaunchGeometry& g, void** params,
                   cudaStream_t stream);

// Launches a GEMM kernel of any template on `args` (validated: dimensions < 2^31) with the
// signature they all share: (int M, int N, int K, float alpha, const float* A, long long lda,
// const float* B, long long ldb, float beta, float* C, long long ldc). Errors as launch_kernel.
// `trailing` points at the parameters a template takes after those (tf32wgmma's tensor map and
// work split), at most kMaxGemmParams - 11 of them.
inline constexpr std::size_t kMaxGemmParams = 16;
void launch_gemm_kernel(cudaKernel_t kernel, const LaunchGeometry& g, const GemmArgs& args,
                        cudaStream_t stream, std::initializer_list<void*> trailing = {});

}  // namespace tilemm::detail
