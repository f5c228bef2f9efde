// Makes a device current for one call of the library (which works on the current device, as
// CUDA libraries do) and restores the caller's device afterwards, so that an array on device 1
// is multiplied there whatever device the calling thread had current.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tilemm/error.hpp"

namespace tilemm::python {

inline void check_cuda(cudaError_t status, const char* call) {
  if (status != cudaSuccess)
    throw Error(ErrorKind::cuda, std::string(call) + " failed: " + cudaGetErrorString(status));
}

class DeviceGuard {
 public:
  // device < 0: leave the current device as it is.
  explicit DeviceGuard(int device) {
    if (device < 0) return;
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ == device) return;
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    switched_ = true;
  }
  ~DeviceGuard() {
    if (switched_) (void)cudaSetDevice(previous_);  // best effort: a destructor cannot throw
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool switched_ = false;
};

}  // namespace tilemm::python
