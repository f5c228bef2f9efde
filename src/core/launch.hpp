// Launches a loaded kernel on one GEMM problem.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "kernel_library.hpp"
#include "tilemm/gemm.hpp"

namespace tilemm::detail {

// Enqueues `kernel` for `args` (already validated, M and N > 0, can_run passed) on `stream`:
// takes the family's workspace_bytes from the stream's pool when not 0, then lets the family
// enqueue its launches (Family::enqueue). Throws tilemm::Error if an allocation or a launch is
// refused. Nothing synchronizes.
void launch(const LoadedKernel& kernel, const GemmArgs& args, cudaStream_t stream);

// Device memory ordered on one stream: taken from tilemm's own pool for `device` when made, given
// back on the same stream when destroyed, so it is free once the work enqueued in between is
// done and nothing synchronizes. Families' workspaces (split-K slices, aligned copies) and the
// BLAS API's transposed operands all use it. The pool keeps up to 512 MiB of freed memory for the next call and leaves
// the device's default pool, which the application may use, alone.
// Creates the pool for `device` now where it does not exist yet. Kernels and vendor candidates
// call it when they are loaded or prepared: creating a pool is refused while any stream captures
// a graph in global mode, and a call captured later may take a workspace from it.
void prepare_workspace_pool(int device);
// Bytes of tilemm's pool for `device` held by live workspaces (cudaMemPoolAttrUsedMemCurrent):
// what a leak would grow, whatever other processes do with the device's memory.
std::uint64_t workspace_bytes_in_use(int device);

class StreamWorkspace {
 public:
  StreamWorkspace(std::size_t bytes, int device, cudaStream_t stream);
  ~StreamWorkspace();
  StreamWorkspace(const StreamWorkspace&) = delete;
  StreamWorkspace& operator=(const StreamWorkspace&) = delete;
  float* floats() const { return static_cast<float*>(data_); }
  // Gives the memory back now, checked; call it once the work that uses it is enqueued. The
  // destructor frees only what was not released (a call that failed part-way), unchecked, as the
  // failure that led there is the one to report.
  void release();

 private:
  void* data_ = nullptr;
  cudaStream_t stream_;
};

}  // namespace tilemm::detail
