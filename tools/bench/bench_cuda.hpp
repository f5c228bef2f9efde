// The benchmarks' check of a CUDA runtime call: a failure ends the benchmark with the call's name
// and CUDA's reason (tool_conventions turns the exception into the error line and exit code).
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tilemm::bench {

inline void cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

}  // namespace tilemm::bench
