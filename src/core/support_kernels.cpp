#include "support_kernels.hpp"

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "cuda_check.hpp"
#include "kernel_sources.hpp"
#include "nvrtc_compiler.hpp"

namespace tilemm::detail {
namespace {

// The block shapes the launches below use: the defaults of the support files' macros.
constexpr unsigned kTransposeTile = 32, kTransposeRowsPerPass = 8;  // transpose.cu
constexpr unsigned kFillBlock = 256;                                // verification.cu
constexpr unsigned kReferenceBlock = 16;                            // REFERENCE_BLOCK
constexpr unsigned kCheckColumns = 32, kCheckRows = 8;              // CHECK_COLUMNS, CHECK_ROWS
// Enough blocks of the fill to cover any GPU many times over; each thread takes every
// (grid size)-th element beyond them.
constexpr std::uint64_t kMaxFillBlocks = std::uint64_t{1} << 16;

const EmbeddedTemplate& support_source(std::string_view file) {
  for (const auto& t : embedded_support_kernels())
    if (t.file == file) return t;
  throw Error(ErrorKind::internal, "tilemm: support kernel '" + std::string(file) + "' is not embedded");
}

const SupportModule& module_of(std::string_view kernel) {
  for (const auto& m : support_modules())
    if (std::find(m.kernels.begin(), m.kernels.end(), kernel) != m.kernels.end()) return m;
  throw Error(ErrorKind::internal, "tilemm: no support file lists the kernel '" + std::string(kernel) + "'");
}

// The support kernel called `name` on `device`. Its file is compiled and loaded the first time
// one of its kernels is asked for there, and kept for the process (see kernel_library.cpp for
// why libraries are never unloaded).
// The kernels loaded so far, by device and name, under their mutex; never destroyed (see
// kernel_library.cpp).
struct LoadedSupportKernels {
  std::mutex mutex;
  std::map<std::pair<int, std::string_view>, cudaKernel_t> by_name;
};
LoadedSupportKernels& loaded_support_kernels() {
  static auto* loaded = new LoadedSupportKernels();
  return *loaded;
}

cudaKernel_t support_kernel(const DeviceInfo& device, std::string_view name) {
  LoadedSupportKernels& loaded = loaded_support_kernels();
  auto* kernels = &loaded.by_name;
  std::lock_guard<std::mutex> lock(loaded.mutex);
  if (auto it = kernels->find({device.ordinal, name}); it != kernels->end()) return it->second;
  const SupportModule& module = module_of(name);
  const auto compiled = compile_template(support_source(module.file), std::string(module.kernels.front()),
                                         device.arch(), {});
  cudaLibrary_t library = nullptr;
  TILEMM_CUDA(cudaLibraryLoadData(&library, compiled.cubin.data(), nullptr, nullptr, 0, nullptr,
                                  nullptr, 0));
  for (const std::string_view k : module.kernels) {
    cudaKernel_t kernel = nullptr;
    const std::string symbol(k);
    check_cuda(cudaLibraryGetKernel(&kernel, library, symbol.c_str()),
               ("cudaLibraryGetKernel(" + symbol + ")").c_str());
    kernels->emplace(std::make_pair(device.ordinal, k), kernel);
  }
  return kernels->at({device.ordinal, name});
}

void launch_support(const DeviceInfo& device, std::string_view name, dim3 grid, dim3 block,
                    void** params, cudaStream_t stream) {
  const cudaKernel_t kernel = support_kernel(device, name);
  check_cuda(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, params, 0, stream),
             ("cudaLaunchKernel(" + std::string(name) + ")").c_str());
}

unsigned blocks_for(std::int64_t count, unsigned per_block) {
  return static_cast<unsigned>((count + per_block - 1) / per_block);
}

}  // namespace

const std::vector<SupportModule>& support_modules() {
  // Never destroyed: a background tuning may load its kernels while the process exits.
  static const auto& modules = *new std::vector<SupportModule>{
      {"transpose.cu", {"tilemm_transpose"}},
      {"verification.cu",
       {"tilemm_fill_uniform", "tilemm_reference_product", "tilemm_count_outside_bound"}},
      {"timing.cu", {"tilemm_hold_stream"}},
  };
  return modules;
}

bool transpose_loaded(const DeviceInfo& device) {
  LoadedSupportKernels& loaded = loaded_support_kernels();
  std::lock_guard<std::mutex> lock(loaded.mutex);
  return loaded.by_name.count({device.ordinal, "tilemm_transpose"}) > 0;
}

void transpose(const DeviceInfo& device, std::int64_t rows, std::int64_t cols, const float* src,
               std::int64_t lds, float* dst, std::int64_t ldd, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  // Tiles of rows go on grid y, which holds 65535 blocks: taller operands go in slabs.
  const std::int64_t slab = static_cast<std::int64_t>(device.max_grid_y) * kTransposeTile;
  for (std::int64_t r0 = 0; r0 < rows; r0 += slab) {
    const std::int64_t n = std::min(slab, rows - r0);
    const dim3 grid(blocks_for(cols, kTransposeTile), blocks_for(n, kTransposeTile));
    int r = static_cast<int>(n), c = static_cast<int>(cols);
    const float* s = src + r0 * lds;
    float* d = dst + r0;  // rows of src are columns of dst
    long long ls = lds, ld = ldd;
    void* params[] = {&r, &c, &s, &ls, &d, &ld};
    launch_support(device, "tilemm_transpose", grid, dim3(kTransposeTile, kTransposeRowsPerPass),
                   params, stream);
  }
}

void fill_uniform(const DeviceInfo& device, float* dst, std::size_t count, std::uint64_t seed,
                  cudaStream_t stream) {
  if (count == 0) return;
  const std::uint64_t blocks = std::min<std::uint64_t>((count + kFillBlock - 1) / kFillBlock, kMaxFillBlocks);
  unsigned long long n = count, s = seed;
  void* params[] = {&dst, &n, &s};
  launch_support(device, "tilemm_fill_uniform", dim3(static_cast<unsigned>(blocks)), dim3(kFillBlock),
                 params, stream);
}

void reference_product(const DeviceInfo& device, std::int64_t M, std::int64_t N, std::int64_t K,
                       const float* A, std::int64_t lda, const float* B, std::int64_t ldb,
                       float* reference, float* magnitude, cudaStream_t stream) {
  if (M == 0 || N == 0) return;
  // Rows beyond the grid's height are further passes of the kernel's loop.
  const dim3 grid(blocks_for(N, kReferenceBlock),
                  std::min(blocks_for(M, kReferenceBlock), static_cast<unsigned>(device.max_grid_y)));
  long long m = M, n = N, k = K, la = lda, lb = ldb;
  void* params[] = {&m, &n, &k, &A, &la, &B, &lb, &reference, &magnitude};
  launch_support(device, "tilemm_reference_product", grid, dim3(kReferenceBlock, kReferenceBlock),
                 params, stream);
}

void count_outside_bound(const DeviceInfo& device, std::int64_t M, std::int64_t N, const float* C,
                         std::int64_t ldc, const float* reference, const float* magnitude,
                         double unit, OutsideBound* result, cudaStream_t stream) {
  static_assert(sizeof(OutsideBound) == 2 * sizeof(unsigned long long) &&
                    sizeof(unsigned long long) == sizeof(std::uint64_t),
                "the kernel sees OutsideBound as unsigned long long[2]");
  // count = 0 and first = ~0, the identities of its atomicAdd and atomicMin.
  TILEMM_CUDA(cudaMemsetAsync(&result->count, 0, sizeof result->count, stream));
  TILEMM_CUDA(cudaMemsetAsync(&result->first, 0xFF, sizeof result->first, stream));
  if (M == 0 || N == 0) return;
  const dim3 grid(blocks_for(N, kCheckColumns),
                  std::min(blocks_for(M, kCheckRows), static_cast<unsigned>(device.max_grid_y)));
  long long m = M, n = N, lc = ldc;
  void* outside = result;
  void* params[] = {&m, &n, &C, &lc, &reference, &magnitude, &unit, &outside};
  launch_support(device, "tilemm_count_outside_bound", grid, dim3(kCheckColumns, kCheckRows), params,
                 stream);
}

void hold_stream(const DeviceInfo& device, const unsigned* release, unsigned ticket, double most_ms,
                 cudaStream_t stream) {
  auto most_ns = static_cast<unsigned long long>(std::max(0.0, most_ms) * 1e6);
  void* params[] = {&release, &ticket, &most_ns};
  launch_support(device, "tilemm_hold_stream", dim3(1), dim3(1), params, stream);
}

}  // namespace tilemm::detail
