// Loaded kernels, kept per (device, variant) for the life of the process: a variant is compiled
// (or its CUBIN taken from the cache) and loaded once, and every later launch reuses it.
#pragma once

#include <cuda_runtime_api.h>

#include <vector>

#include "family_registry.hpp"
#include "tilemm/device.hpp"
#include "tilemm/variant.hpp"

namespace tilemm::detail {

struct LoadedKernel {
  Variant variant;
  const Family* family = nullptr;
  ModuleKernels kernels;  // the GEMM kernel and the family's extra_kernels(variant)
  int device = 0;
};

// The loaded kernel of `v` on `device`, or nullptr if it is not loaded yet. Never compiles.
const LoadedKernel* find_loaded(const DeviceInfo& device, const Variant& v);

// Loads `cubin` (a CUBIN of `v` for the device's architecture) unless `v` is already loaded
// there: the kernel named like `v` and those its family's extra_kernels lists. Throws
// tilemm::Error if the runtime rejects it or lacks one of those symbols.
const LoadedKernel& load_kernel(const DeviceInfo& device, const Variant& v,
                                const std::vector<char>& cubin);

// The loaded kernel of `v` on `device`, compiling it with NVRTC first if needed (once per
// process and key, also when several threads ask at the same time).
const LoadedKernel& kernel_for(const DeviceInfo& device, const Variant& v);

}  // namespace tilemm::detail
