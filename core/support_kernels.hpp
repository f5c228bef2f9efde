// tilemm's support kernels (kernel_templates/support/), compiled once per device and process.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "tilemm/device.hpp"

namespace tilemm::detail {

// Enqueues dst (cols x rows, ldd) = src (rows x cols, lds)^T, row-major, on `stream`. The first
// call on a device compiles the kernel with NVRTC. Throws tilemm::Error on failure.
void transpose(const DeviceInfo& device, std::int64_t rows, std::int64_t cols, const float* src,
               std::int64_t lds, float* dst, std::int64_t ldd, cudaStream_t stream);

}  // namespace tilemm::detail
