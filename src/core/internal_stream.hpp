// The streams tilemm makes for its own work: a tuning's bench and a candidate's first run. State
// that outlives a stream, kept by its id (the cuBLAS candidate's kept workspaces: a process keeps
// few, cublas_provider.hpp), would be spent on a new stream per tuning; a stream taken from a
// per-device pool spends it once for as many as run at once.
#pragma once

#include <cuda_runtime_api.h>

namespace tilemm::detail {

class InternalStream {
 public:
  // Takes a non-blocking stream of `device` that no one else holds, made where the pool has none
  // free; `device` must be current. Throws tilemm::Error (cuda) when a stream cannot be made.
  explicit InternalStream(int device);
  // Gives the stream back to the pool, with whatever it still has queued: the next holder's work
  // runs after it.
  ~InternalStream();
  InternalStream(const InternalStream&) = delete;
  InternalStream& operator=(const InternalStream&) = delete;

  cudaStream_t get() const { return stream_; }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
};

// How many streams the pool of `device` has made so far.
int internal_streams_made(int device);

}  // namespace tilemm::detail
