// Running SGEMM: C = alpha * A * B + beta * C, row-major, all pointers in device memory.
//
//   A is M x K with leading dimension lda >= max(1, K)
//   B is K x N with leading dimension ldb >= max(1, N)
//   C is M x N with leading dimension ldc >= max(1, N)
//
// M, N or K == 0 is a valid no-op as in BLAS (K == 0 gives C = beta * C; beta == 0 never reads C,
// which may then hold NaN). Negative or over-large dimensions, null pointers that the call would
// read or write, and leading dimensions too small throw tilemm::InvalidArgument naming the argument,
// and nothing is launched. Launches are asynchronous on `stream` (0 is the legacy default stream);
// errors of the kernel itself surface at the next synchronizing call, as with any CUDA library.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tilemm/variant.hpp"

namespace tilemm {

struct GemmArgs {
  std::int64_t M = 0, N = 0, K = 0;
  float alpha = 1.0f;
  const float* A = nullptr;
  std::int64_t lda = 0;
  const float* B = nullptr;
  std::int64_t ldb = 0;
  float beta = 0.0f;
  float* C = nullptr;
  std::int64_t ldc = 0;

  // The Problem this call poses (shape, leading dimensions, alignment class).
  Problem problem() const;
};

// Throws tilemm::InvalidArgument if `args` is not a valid call (see the top of this file).
void validate(const GemmArgs& args);

// Runs exactly variant `v` on the current device, at the precision it computes at
// (precision_of(v): a tf32mma variant runs on tensor cores whatever Options say). The first call of a variant in a process
// compiles it with NVRTC (~20-120 ms) and loads it; later calls launch the kept kernel without
// compiling. Throws InvalidArgument for bad input, Error for a variant that cannot run this
// problem (with can_run's reason), CompileError when NVRTC fails (with its log).
void run_variant(const Variant& v, const GemmArgs& args, cudaStream_t stream = nullptr);

}  // namespace tilemm
