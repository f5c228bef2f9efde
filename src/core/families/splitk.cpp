// The splitk family: the warptile kernel (kernel_templates/warptile.cu) with K split over
// grid.z, each slice's partial product stored to a workspace, then the module's own
// <name>_reduce kernel summing the slices into C in a fixed order. For small M x N with large
// K, where even 64x64 tiles leave SMs idle; its pruning hint keeps it out of the shapes where
// the unsplit grid already fills every SM, so it costs tuning time only on the shapes it serves.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "family_launch.hpp"
#include "family_registry.hpp"
#include "warptile_tiles.hpp"

namespace tilemm::detail {
namespace {

// The slices: k_slices dense M x aligned_ld(N) partial products, each row 16-byte aligned.
std::size_t slices_bytes(const Variant& v, const Problem& p, const DeviceInfo&) {
  return static_cast<std::size_t>(k_slices(v)) * static_cast<std::size_t>(p.M) *
         static_cast<std::size_t>(aligned_ld(p.N)) * sizeof(float);
}

std::vector<std::string> reduce_kernel(const Variant&) { return {"_reduce"}; }

// C = alpha * (W0 + ... + W(s-1)) + beta * C with <name>_reduce. Must match that kernel in the
// template: 256 threads, each VEC columns of a row, the grid's rows striding over M.
void enqueue_reduce(cudaKernel_t reduce, const Variant& v, const GemmArgs& args,
                    const float* slices, std::int64_t ld_slices, cudaStream_t stream) {
  constexpr std::int64_t kReduceThreads = 256;
  constexpr std::int64_t kMaxGridRows = 4096;  // enough rows of blocks; more only stride less
  int M = static_cast<int>(args.M), N = static_cast<int>(args.N);
  long long ldw = ld_slices;
  float alpha = args.alpha, beta = args.beta;
  float* C = args.C;
  long long ldc = args.ldc;
  void* params[] = {&M, &N, &slices, &ldw, &alpha, &beta, &C, &ldc};
  const std::int64_t columns_per_block = kReduceThreads * vec_alignment(v);
  LaunchGeometry g;
  g.grid[0] = static_cast<unsigned>((args.N + columns_per_block - 1) / columns_per_block);
  g.grid[1] = static_cast<unsigned>(std::min<std::int64_t>(args.M, kMaxGridRows));
  g.block[0] = static_cast<unsigned>(kReduceThreads);
  launch_kernel(reduce, g, params, stream);
}

// The GEMM kernel into the workspace's slices (alpha 1, beta 0), then the reduction into C.
void enqueue_split_then_reduce(const LaunchRequest& r) {
  GemmArgs partial = r.args;
  partial.alpha = 1.0f;
  partial.beta = 0.0f;
  partial.C = r.workspace;
  partial.ldc = aligned_ld(r.args.N);
  launch_gemm_kernel(r.kernels.gemm, split_geometry(r.variant, r.problem), partial, r.stream);
  enqueue_reduce(r.kernels.extra_kernel("_reduce"), r.variant, r.args, r.workspace, partial.ldc,
                 r.stream);
}

}  // namespace

Family splitk_family() {
  Family f;
  f.name = "splitk";
  f.template_file = "warptile.cu";
  f.params = split_params({2, 3, 4, 6, 8});
  f.check_params = check_split;
  f.geometry = split_geometry;
  f.shared_bytes = warptile_shared_bytes;
  f.required_alignment = vec_alignment;
  f.workspace_bytes = slices_bytes;
  f.extra_kernels = reduce_kernel;
  f.enqueue = enqueue_split_then_reduce;
  f.pruning_hint = split_k_pruning_hint;
  return f;
}
TILEMM_FAMILY(splitk_family, 400)

}  // namespace tilemm::detail
