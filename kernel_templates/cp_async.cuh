// cp.async (compute capability 8.0 and newer), shared by the templates that include it
// (multistage.cu, and gemvn.cu and gemvm.cu through skinny.cuh): copies from global
// to shared memory that hold no registers while they fly, and that a thread waits for by commit
// group. cmake/embed_templates.cmake pastes this file into each template that includes it, so the
// template's hash covers it too.
#ifndef TILEMM_CP_ASYNC_CUH
#define TILEMM_CP_ASYNC_CUH

// The shared-memory address of `p` (a pointer into shared memory), as cp.async takes it.
__device__ __forceinline__ unsigned shared_address(const void* p) {
  unsigned long long address;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(address) : "l"(p));
  return static_cast<unsigned>(address);
}

// kBytes (16, 8 or 4) from global to shared memory, asynchronously. 16-byte copies go through
// the L2 only (.cg); the smaller ones cannot, and go through the L1 as well (.ca).
template <int kBytes>
__device__ __forceinline__ void copy_async(unsigned dst, const float* src) {
  static_assert(kBytes == 16 || kBytes == 8 || kBytes == 4, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(dst), "l"(src), "n"(kBytes)
                 : "memory");
}

// The same, of which only the first `bytes` are read and the rest are zeros (0: reads nothing).
template <int kBytes>
__device__ __forceinline__ void copy_async_or_zeros(unsigned dst, const float* src,
                                                    unsigned bytes) {
  static_assert(kBytes == 16 || kBytes == 8 || kBytes == 4, "cp.async copies 4, 8 or 16 bytes");
  if constexpr (kBytes == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src),
                 "n"(kBytes), "r"(bytes)
                 : "memory");
}

// Closes this thread's group of copies issued since the last commit (an empty group if none).
__device__ __forceinline__ void commit_copies() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

// Waits until at most `kPending` of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void wait_copies() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

#endif  // TILEMM_CP_ASYNC_CUH
