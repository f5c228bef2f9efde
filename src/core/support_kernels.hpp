// tilemm's support kernels (kernel_templates/support/), compiled once per device and process.
// Every function here enqueues on `stream` and synchronizes nothing; the first call on a device
// that needs a support file compiles it with NVRTC and loads it. Each throws tilemm::Error when
// the compilation, the load or a launch fails.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tilemm/device.hpp"

namespace tilemm::detail {

// A support file and the kernels the functions below look up in it: the list that the loader
// uses and that tests compile.
struct SupportModule {
  std::string_view file;                  // "transpose.cu", in kernel_templates/support/
  std::vector<std::string_view> kernels;  // extern "C" symbols
};
const std::vector<SupportModule>& support_modules();

// Whether transpose() on `device` would launch without first compiling and loading its kernel,
// which a stream capture refuses.
bool transpose_loaded(const DeviceInfo& device);

// Enqueues dst (cols x rows, ldd) = src (rows x cols, lds)^T, row-major.
void transpose(const DeviceInfo& device, std::int64_t rows, std::int64_t cols, const float* src,
               std::int64_t lds, float* dst, std::int64_t ldd, cudaStream_t stream);

// Enqueues dst[i] = uniform random in [-1, 1) (2^24 evenly spaced values) for i < count, a hash
// of (seed, i): the same seed always gives the same values. Writes count floats; costs one
// write of them.
void fill_uniform(const DeviceInfo& device, float* dst, std::size_t count, std::uint64_t seed,
                  cudaStream_t stream);

// Enqueues reference = A B and magnitude = |A| |B| (both M x N, leading dimension N), row-major
// A (M x K, lda) and B (K x N, ldb): one thread per element, one FMA chain per output in the
// order of k, which is the naive family's arithmetic: reference equals the naive kernel's C
// (alpha 1, beta 0) bit for bit. Costs what the naive kernel costs, once for both.
void reference_product(const DeviceInfo& device, std::int64_t M, std::int64_t N, std::int64_t K,
                       const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
                       float* reference, float* magnitude, cudaStream_t stream);

// Where count_outside_bound leaves its answer, in device memory.
struct OutsideBound {
  std::uint64_t count = 0;  // elements outside the bound
  std::uint64_t first = 0;  // the smallest row * N + col among them; ~0 when count is 0
};

// Enqueues the check of C (M x N, ldc) against reference and magnitude (M x N, leading dimension
// N): *result = how many elements have !(|C - reference| <= unit magnitude + 1e-30), computed
// in double, so that NaN is outside, and the first of them. Resets *result itself first. Reads
// the three matrices once; the answer is 16 bytes to download.
void count_outside_bound(const DeviceInfo& device, std::int64_t M, std::int64_t N, const float* C,
                         std::int64_t ldc, const float* reference, const float* magnitude,
                         double unit, OutsideBound* result, cudaStream_t stream);

// Enqueues a single-thread kernel that keeps `stream` waiting until *release reaches `ticket`
// (release: mapped host memory, as the device sees it), or for at most `most_ms`
// (src/core/stream_hold.hpp).
void hold_stream(const DeviceInfo& device, const unsigned* release, unsigned ticket, double most_ms,
                 cudaStream_t stream);

}  // namespace tilemm::detail
