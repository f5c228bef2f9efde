#include "launch.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>

#include "cuda_check.hpp"

namespace tilemm::detail {
namespace {

// One stream-ordered pool per device (see StreamWorkspace in launch.hpp): an allocation is
// ordered with the kernels that use it on the caller's stream, so concurrent calls on different
// streams never share memory. The pool keeps freed memory (up to the threshold) for the next call
// instead of returning it to the driver at every synchronization, which is what the default pool
// would do. Never destroyed, like the loaded kernels.
constexpr std::uint64_t kPoolKeepBytes = std::uint64_t{512} << 20;

cudaMemPool_t workspace_pool(int device) {
  static std::mutex mutex;
  static auto* pools = new std::map<int, cudaMemPool_t>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = pools->find(device); it != pools->end()) return it->second;
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t pool = nullptr;
  TILEMM_CUDA(cudaMemPoolCreate(&pool, &props));
  std::uint64_t keep = kPoolKeepBytes;
  TILEMM_CUDA(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  (*pools)[device] = pool;
  return pool;
}

void launch_kernel(cudaKernel_t kernel, const LaunchGeometry& g, void** params,
                   cudaStream_t stream) {
  const dim3 grid(g.grid[0], g.grid[1], g.grid[2]);
  const dim3 block(g.block[0], g.block[1], g.block[2]);
  TILEMM_CUDA(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), grid, block, params,
                               g.dynamic_shared_bytes, stream));
}

// Plain launch of the kernel on `args`, which the caller has validated.
void launch_direct(const LoadedKernel& kernel, const GemmArgs& args, const LaunchGeometry& g,
                   cudaStream_t stream) {
  // The kernel signature shared by every template: dimensions as int (validated < 2^31),
  // leading dimensions as 64-bit so that row * ld never overflows.
  int M = static_cast<int>(args.M), N = static_cast<int>(args.N), K = static_cast<int>(args.K);
  float alpha = args.alpha, beta = args.beta;
  const float* A = args.A;
  const float* B = args.B;
  float* C = args.C;
  long long lda = args.lda, ldb = args.ldb, ldc = args.ldc;
  void* params[] = {&M, &N, &K, &alpha, &A, &lda, &B, &ldb, &beta, &C, &ldc};
  launch_kernel(kernel.kernel, g, params, stream);
}

// The GEMM kernel into slices of `workspace`, then <name>_reduce into C.
void launch_split(const LoadedKernel& kernel, const GemmArgs& args, const LaunchGeometry& g,
                  float* workspace, cudaStream_t stream) {
  GemmArgs partial = args;
  partial.alpha = 1.0f;
  partial.beta = 0.0f;
  partial.C = workspace;
  partial.ldc = aligned_ld(args.N);
  launch_direct(kernel, partial, g, stream);

  int M = static_cast<int>(args.M), N = static_cast<int>(args.N);
  const float* W = workspace;
  long long ldw = partial.ldc;
  float alpha = args.alpha, beta = args.beta;
  float* C = args.C;
  long long ldc = args.ldc;
  void* reduce_params[] = {&M, &N, &W, &ldw, &alpha, &beta, &C, &ldc};
  // Must match the reduce kernel of the template: 256 threads, each VEC columns of a row, the
  // grid's rows striding over M.
  constexpr std::int64_t kReduceThreads = 256;
  const std::int64_t columns_per_block = kReduceThreads * kernel.variant.param("v");
  LaunchGeometry r;
  r.grid[0] = static_cast<unsigned>((args.N + columns_per_block - 1) / columns_per_block);
  r.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(args.M, 4096));
  r.block[0] = static_cast<unsigned>(kReduceThreads);
  launch_kernel(kernel.reduce, r, reduce_params, stream);
}

// dst (rows x dst_ld, dst_ld a multiple of 4) = src (rows x cols, pitch src_ld), the columns
// beyond `cols` zero, with the <name>_copy kernel of the module (warptile.cu, ALIGNED_COPIES).
void copy_aligned(const LoadedKernel& kernel, float* dst, std::int64_t dst_ld, const float* src,
                  std::int64_t src_ld, std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  if (rows == 0 || cols == 0) return;
  int r = static_cast<int>(rows), c = static_cast<int>(cols);
  long long ls = src_ld, ld = dst_ld;
  void* params[] = {&r, &c, &src, &ls, &dst, &ld};
  // Must match the copy kernel: 256 threads, one float each, the grid's rows striding over rows.
  constexpr std::int64_t kCopyThreads = 256;
  LaunchGeometry g;
  g.grid[0] = static_cast<unsigned>((dst_ld + kCopyThreads - 1) / kCopyThreads);
  g.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(rows, 65535));
  g.block[0] = static_cast<unsigned>(kCopyThreads);
  launch_kernel(kernel.copy, g, params, stream);
}

// Everything that runs between the workspace's allocation and its release.
void launch_with_workspace(const LoadedKernel& kernel, const GemmArgs& args,
                           const LaunchGeometry& g, float* workspace, cudaStream_t stream) {
  GemmArgs run = args;
  float* next = workspace;
  if (kernel.family->aligned_copies) {
    // Layout as in workspace_bytes(): A (M x k4), then B (K x n4). C stays the caller's.
    const std::int64_t k4 = aligned_ld(args.K), n4 = aligned_ld(args.N);
    float* a = next;
    next += args.M * k4;
    float* b = next;
    next += args.K * n4;
    copy_aligned(kernel, a, k4, args.A, args.lda, args.M, args.K, stream);
    copy_aligned(kernel, b, n4, args.B, args.ldb, args.K, args.N, stream);
    run.A = a;
    run.lda = k4;
    run.B = b;
    run.ldb = n4;
  }
  if (kernel.reduce != nullptr)
    launch_split(kernel, run, g, next, stream);
  else
    launch_direct(kernel, run, g, stream);
}

}  // namespace

StreamWorkspace::StreamWorkspace(std::size_t bytes, int device, cudaStream_t stream)
    : stream_(stream) {
  TILEMM_CUDA(cudaMallocFromPoolAsync(&data_, bytes, workspace_pool(device), stream));
}

StreamWorkspace::~StreamWorkspace() {
  if (data_ != nullptr) (void)cudaFreeAsync(data_, stream_);
}

void StreamWorkspace::release() {
  void* data = data_;
  data_ = nullptr;
  if (data != nullptr) TILEMM_CUDA(cudaFreeAsync(data, stream_));
}

void launch(const LoadedKernel& kernel, const GemmArgs& args, cudaStream_t stream) {
  const LaunchGeometry g = kernel.family->geometry(kernel.variant, args.problem());
  const std::size_t bytes = workspace_bytes(*kernel.family, kernel.variant, args.problem());
  if (bytes == 0) {
    launch_direct(kernel, args, g, stream);
    return;
  }
  StreamWorkspace workspace(bytes, kernel.device, stream);
  launch_with_workspace(kernel, args, g, workspace.floats(), stream);
  workspace.release();
}

}  // namespace tilemm::detail
