// Times short kernels at the GPU's pace, not the host's. A kernel of a few microseconds ends
// before the host has enqueued the next launch and its events, so timings taken back to back
// would include the host's launch cost, which differs between kernels (a cluster launch costs the
// host more than a plain one) and with the host's load. A StreamHold enqueues a kernel that keeps
// the stream waiting while the host enqueues a batch of timed launches, then lets the batch run
// back to back (kernel_templates/support/timing.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <functional>

#include "tilemm/device.hpp"

namespace tilemm::detail {

class StreamHold {
 public:
  // Allocates one word of mapped host memory (the release flag). Throws tilemm::Error (cuda)
  // when the allocation fails. Call on the device's thread (cudaSetDevice done).
  explicit StreamHold(const DeviceInfo& device);
  ~StreamHold();
  StreamHold(const StreamHold&) = delete;
  StreamHold& operator=(const StreamHold&) = delete;

  // Enqueues the hold on `stream`, then calls `enqueue` (which enqueues the batch on `stream`),
  // then releases the hold, also when `enqueue` throws. Synchronizes nothing. The hold ends by
  // itself after kMostMs if never released (a host thread stalled for that long). A batch
  // should stay well under the launches a stream queues before cudaLaunchKernel blocks (about
  // a thousand commands): a host blocked on a full queue cannot release the hold until kMostMs.
  void run_held(cudaStream_t stream, const std::function<void()>& enqueue);

  static constexpr double kMostMs = 50.0;

 private:
  DeviceInfo device_;
  unsigned* release_host_ = nullptr;
  unsigned* release_device_ = nullptr;
  unsigned ticket_ = 0;
};

}  // namespace tilemm::detail
