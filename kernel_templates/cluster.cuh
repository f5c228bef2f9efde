// Thread block cluster primitives as PTX (compute capability 9.0), shared by the templates whose
// split-K variants sum their slices through distributed shared memory (warptile.cu's clusterk,
// skinny.cuh's gemvn and gemvm), so that no template needs a CUDA header. cmake/embed_templates.cmake
// pastes this file into each template that includes it, so the template's hash covers it too.
#ifndef TILEMM_CLUSTER_CUH
#define TILEMM_CLUSTER_CUH

// Every thread of every block of the cluster arrives, then waits for all: the writes to shared
// memory before it are visible to the whole cluster after it.
static __device__ __forceinline__ void cluster_barrier() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// The address, in the cluster's shared window, of `p` (this block's shared memory) in the block
// of the cluster whose rank is `rank`.
static __device__ __forceinline__ unsigned cluster_address(const float* p, unsigned rank) {
  unsigned long long local;
  asm("cvta.to.shared.u64 %0, %1;" : "=l"(local) : "l"(p));
  unsigned remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
               : "=r"(remote)
               : "r"(static_cast<unsigned>(local)), "r"(rank));
  return remote;
}

// One float, or four, at an address of the cluster's shared window (cluster_address).
static __device__ __forceinline__ float cluster_load(unsigned address) {
  float v;
  asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(address) : "memory");
  return v;
}
static __device__ __forceinline__ float4 cluster_load4(unsigned address) {
  float4 v;
  asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
               : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
               : "r"(address)
               : "memory");
  return v;
}

#endif  // TILEMM_CLUSTER_CUH
