// Runs a call with another device current, for the per-device objects that a library creates on
// whichever device is current (cuBLAS and cuBLASLt handles, their workspaces).
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace tilemm::detail {

// Makes `device` current, runs `call`, makes the caller's device current again and returns what
// `call` returned, unchecked: check it after, so that a failure leaves the caller's device current.
template <class Call>
auto with_device_current(int device, Call&& call) {
  int current = 0;
  TILEMM_CUDA(cudaGetDevice(&current));
  if (current != device) TILEMM_CUDA(cudaSetDevice(device));
  const auto result = call();
  if (current != device) TILEMM_CUDA(cudaSetDevice(current));
  return result;
}

}  // namespace tilemm::detail
