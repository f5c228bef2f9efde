#include "launch.hpp"

#include <cstdint>
#include <map>
#include <mutex>

#include "cuda_check.hpp"
#include "tilemm/device.hpp"

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

}  // namespace

void prepare_workspace_pool(int device) { (void)workspace_pool(device); }

std::uint64_t workspace_bytes_in_use(int device) {
  std::uint64_t used = 0;
  TILEMM_CUDA(cudaMemPoolGetAttribute(workspace_pool(device), cudaMemPoolAttrUsedMemCurrent, &used));
  return used;
}

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
  const Family& family = *kernel.family;
  const Problem problem = args.problem();
  // By the kernel's ordinal, from memory: no CUDA call on this path.
  const DeviceInfo& device = device_info(kernel.device);
  const std::size_t bytes = family.workspace_bytes(kernel.variant, problem, device);
  if (bytes == 0) {
    family.enqueue({family, kernel.variant, kernel.kernels, args, problem, device, nullptr, stream});
    return;
  }
  StreamWorkspace workspace(bytes, kernel.device, stream);
  family.enqueue(
      {family, kernel.variant, kernel.kernels, args, problem, device, workspace.floats(), stream});
  workspace.release();
}

}  // namespace tilemm::detail
