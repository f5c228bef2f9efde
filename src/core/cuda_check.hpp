// Turns a failed CUDA runtime call into a tilemm::Error that names the call and the CUDA error.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tilemm/error.hpp"

namespace tilemm::detail {

[[noreturn]] inline void throw_cuda_error(cudaError_t status, const char* call) {
  throw Error(ErrorKind::cuda, std::string("tilemm: ") + call + " failed: " +
                                   cudaGetErrorName(status) + " (" + cudaGetErrorString(status) +
                                   ")");
}

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess) throw_cuda_error(status, call);
}

}  // namespace tilemm::detail

// TILEMM_CUDA(cudaMalloc(&p, n)): the call's own text becomes the error's subject.
#define TILEMM_CUDA(call) ::tilemm::detail::check_cuda((call), #call)
