// Launches a loaded kernel on one GEMM problem.
#pragma once

#include <cuda_runtime_api.h>

#include "kernel_library.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::detail {

// Enqueues `kernel` for `args` (already validated, M and N > 0, can_run passed) on `stream`.
// Throws tilemm::Error if the launch itself is refused.
void launch(const LoadedKernel& kernel, const GemmArgs& args, cudaStream_t stream);

}  // namespace tilemm::detail
