#include "stream_hold.hpp"

#include "cuda_check.hpp"
#include "support_kernels.hpp"

namespace tilemm::detail {

StreamHold::StreamHold(const DeviceInfo& device) : device_(device) {
  void* host = nullptr;
  TILEMM_CUDA(cudaHostAlloc(&host, sizeof(unsigned), cudaHostAllocMapped));
  release_host_ = static_cast<unsigned*>(host);
  *release_host_ = 0;
  void* on_device = nullptr;
  const cudaError_t status = cudaHostGetDevicePointer(&on_device, host, 0);
  if (status != cudaSuccess) {
    cudaFreeHost(host);
    throw_cuda_error(status, "cudaHostGetDevicePointer(release flag)");
  }
  release_device_ = static_cast<unsigned*>(on_device);
}

StreamHold::~StreamHold() {
  // The flag may be read by a hold still waiting: release it for good first. A destructor
  // cannot throw; a failed free leaks one word.
  __atomic_store_n(release_host_, ticket_ + 0x40000000u, __ATOMIC_RELEASE);
  cudaFreeHost(release_host_);
}

void StreamHold::run_held(cudaStream_t stream, const std::function<void()>& enqueue) {
  const unsigned ticket = ++ticket_;
  hold_stream(device_, release_device_, ticket, kMostMs, stream);
  struct Release {
    unsigned* flag;
    unsigned ticket;
    ~Release() { __atomic_store_n(flag, ticket, __ATOMIC_RELEASE); }
  } release{release_host_, ticket};
  enqueue();
}

}  // namespace tilemm::detail
