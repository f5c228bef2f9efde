// What tilemm asks of a stream it is given. It must belong to the current device: a kernel
// launched on another device's stream fails (or, with peer access, silently reads the wrong
// memory). And whether it captures a graph, which refuses some of tilemm's work.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "cuda_check.hpp"
#include "tilemm/device.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {

inline void check_stream(cudaStream_t stream, const DeviceInfo& device) {
  if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return;
  // A stream capturing a graph keeps its device unchecked: the runtime refuses cudaStreamGetDevice
  // on it in every capture mode, and ends the capture with an error (on a stream that does not
  // capture, it answers during another's global capture). A failed query leaves the verdict to
  // cudaStreamGetDevice, which names the error.
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess)
    (void)cudaGetLastError();
  else if (capture != cudaStreamCaptureStatusNone)
    return;
  int owner = -1;
  const cudaError_t status = cudaStreamGetDevice(stream, &owner);
  if (status != cudaSuccess) {
    (void)cudaGetLastError();  // not sticky: clear it, the caller gets the exception instead
    throw InvalidArgument("stream", std::string("is not a usable CUDA stream: ") +
                                        cudaGetErrorString(status));
  }
  if (owner != device.ordinal)
    throw InvalidArgument("stream", "belongs to device " + std::to_string(owner) +
                                        ", but the current device is " +
                                        std::to_string(device.ordinal) +
                                        " (call cudaSetDevice first)");
}

// Whether work enqueued on `stream` now would be captured into a CUDA graph: the stream itself
// captures, or it is the legacy stream while a blocking stream of the device captures (which
// the runtime reports as an error of the query, and which makes any work on it fail).
inline bool captures_a_graph(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t asked = cudaStreamIsCapturing(stream, &status);
  if (asked == cudaErrorStreamCaptureImplicit) {
    (void)cudaGetLastError();
    return true;
  }
  check_cuda(asked, "cudaStreamIsCapturing of the stream a call is enqueued on");
  return status != cudaStreamCaptureStatusNone;
}

}  // namespace tilemm::detail
