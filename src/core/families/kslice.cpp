// The kslice family (kernel_templates/kslice.cu): split-K whose number of slices follows K, for
// small outputs with long K at any alignment. Its GEMM kernel stores one partial tile per block
// to a workspace of ceil(K / KL) slices of M x N floats, and <name>_reduce sums them into C in a
// fixed order.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "family_launch.hpp"
#include "family_registry.hpp"
#include "split_k_worth.hpp"

namespace tilemm::detail {
namespace {

constexpr unsigned kThreads = 256;  // both kernels: kThreads in kslice.cu

std::uint64_t slices(const Variant& v, const Problem& p) {
  return std::max<std::uint64_t>(1, ceil_div(p.K, v.param("k")));
}

LaunchGeometry kslice_geometry(const Variant& v, const Problem& p) {
  LaunchGeometry g = grid_over_c(p.M, p.N, v.param("m"), v.param("n"), kThreads, 1);
  g.grid_z64 = slices(v, p);
  g.grid[2] = static_cast<unsigned>(std::min<std::uint64_t>(g.grid_z64, 0xffffffffu));
  return g;
}

// As[32][TM + 1] and Bs[32][TN].
std::size_t kslice_shared_bytes(const Variant& v) {
  const auto tm = static_cast<std::size_t>(v.param("m"));
  const auto tn = static_cast<std::size_t>(v.param("n"));
  return 32 * ((tm + 1) + tn) * sizeof(float);
}

std::size_t kslice_workspace_bytes(const Variant& v, const Problem& p, const DeviceInfo&) {
  return static_cast<std::size_t>(slices(v, p)) * static_cast<std::size_t>(p.M) *
         static_cast<std::size_t>(p.N) * sizeof(float);
}

std::vector<std::string> reduce_kernel(const Variant&) { return {"_reduce"}; }

// Lanes per element of C in the reduction: about 8 slices per lane, at most a warp.
int reduce_group(std::uint64_t slice_count) {
  int group = 1;
  while (group < 32 && static_cast<std::uint64_t>(group) * 8 < slice_count) group *= 2;
  return group;
}

// The partial tiles into the workspace (the kernel ignores alpha and beta), then the reduction.
void enqueue_slices_then_reduce(const LaunchRequest& r) {
  GemmArgs partial = r.args;
  partial.C = r.workspace;
  partial.ldc = r.args.N;
  launch_gemm_kernel(r.kernels.gemm, kslice_geometry(r.variant, r.problem), partial, r.stream);

  const std::uint64_t slice_count = slices(r.variant, r.problem);
  int M = static_cast<int>(r.args.M), N = static_cast<int>(r.args.N);
  int S = static_cast<int>(slice_count);
  int group = reduce_group(slice_count);
  const float* W = r.workspace;
  float alpha = r.args.alpha, beta = r.args.beta;
  float* C = r.args.C;
  long long ldc = r.args.ldc;
  void* params[] = {&M, &N, &S, &group, &W, &alpha, &beta, &C, &ldc};
  const std::uint64_t threads = static_cast<std::uint64_t>(M) * static_cast<std::uint64_t>(N) *
                                static_cast<std::uint64_t>(group);
  LaunchGeometry g;
  g.grid[0] = static_cast<unsigned>(ceil_div(static_cast<std::int64_t>(threads), kThreads));
  g.block[0] = kThreads;
  launch_kernel(r.kernels.extra_kernel("_reduce"), g, params, r.stream);
}

// The family is for outputs too small to fill the machine; where its tiles alone keep every SM
// busy, or K fits in one slice, a family without the workspace's second pass does better.
std::string kslice_pruning_hint(const Variant& v, const DeviceInfo& device, const Problem& p) {
  const LaunchGeometry g = kslice_geometry(v, p);
  if (std::string filled = unsplit_grid_fills_the_sms(g.grid_x64 * g.grid_y64, device.sm_count);
      !filled.empty())
    return filled;
  if (g.grid_z64 < 2) return "K = " + std::to_string(p.K) + " fits in one slice";
  return {};
}

}  // namespace

Family kslice_family() {
  Family f;
  f.name = "kslice";
  f.template_file = "kslice.cu";
  f.params = {{"m", "TM", {16, 32, 64}}, {"n", "TN", {16, 32, 64}}, {"k", "KL", {64, 128, 256, 512, 1024}}};
  f.geometry = kslice_geometry;
  f.shared_bytes = kslice_shared_bytes;
  f.workspace_bytes = kslice_workspace_bytes;
  f.extra_kernels = reduce_kernel;
  f.enqueue = enqueue_slices_then_reduce;
  f.pruning_hint = kslice_pruning_hint;
  return f;
}
TILEMM_FAMILY(kslice_family, 1600)

}  // namespace tilemm::detail
