#include "support_kernels.hpp"

#include <algorithm>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"

namespace tilemm::detail {
namespace {

const EmbeddedTemplate& support_source(std::string_view file) {
  for (const auto& t : embedded_support_kernels())
    if (t.file == file) return t;
  throw Error(ErrorKind::internal, "tilemm: support kernel '" + std::string(file) + "' is not embedded");
}

// The transpose kernel of each device, loaded once and kept for the process (see
// kernel_library.cpp for why libraries are never unloaded).
cudaKernel_t transpose_kernel(const DeviceInfo& device) {
  static std::mutex mutex;
  static auto* kernels = new std::map<int, cudaKernel_t>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = kernels->find(device.ordinal);
  if (it != kernels->end()) return it->second;
  const auto compiled = compile_template(support_source("transpose.cu"), "tilemm_transpose",
                                         device.arch(), {});
  cudaLibrary_t library = nullptr;
  TILEMM_CUDA(cudaLibraryLoadData(&library, compiled.cubin.data(), nullptr, nullptr, 0, nullptr,
                                  nullptr, 0));
  cudaKernel_t kernel = nullptr;
  TILEMM_CUDA(cudaLibraryGetKernel(&kernel, library, "tilemm_transpose"));
  kernels->emplace(device.ordinal, kernel);
  return kernel;
}

}  // namespace

void transpose(const DeviceInfo& device, std::int64_t rows, std::int64_t cols, const float* src,
               std::int64_t lds, float* dst, std::int64_t ldd, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  constexpr std::int64_t kTile = 32, kRowsPerPass = 8;  // the template's defaults
  const cudaKernel_t kernel = transpose_kernel(device);
  // Tiles of rows go on grid y, which holds 65535 blocks: taller operands go in slabs.
  const std::int64_t slab = static_cast<std::int64_t>(device.max_grid_y) * kTile;
  for (std::int64_t r0 = 0; r0 < rows; r0 += slab) {
    const std::int64_t n = std::min(slab, rows - r0);
    const dim3 grid(static_cast<unsigned>((cols + kTile - 1) / kTile),
                    static_cast<unsigned>((n + kTile - 1) / kTile));
    int r = static_cast<int>(n), c = static_cast<int>(cols);
    const float* s = src + r0 * lds;
    float* d = dst + r0;  // rows of src are columns of dst
    long long ls = lds, ld = ldd;
    void* params[] = {&r, &c, &s, &ls, &d, &ld};
    TILEMM_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid,
                                 dim3(kTile, kRowsPerPass), params, 0, stream));
  }
}

}  // namespace tilemm::detail
