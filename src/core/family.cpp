// The defaults of Family's fields, and the lookup of a module's extra kernels.
#include "family.hpp"

#include "family_launch.hpp"
#include "tilemm/error.hpp"

namespace tilemm::detail {

LaunchGeometry grid_over_c(std::int64_t M, std::int64_t N, int tile_m, int tile_n, unsigned bx,
                           unsigned by) {
  LaunchGeometry g;
  g.grid_x64 = ceil_div(N, tile_n);
  g.grid_y64 = ceil_div(M, tile_m);
  g.grid[0] = static_cast<unsigned>(g.grid_x64);
  g.grid[1] = static_cast<unsigned>(g.grid_y64);
  g.block[0] = bx;
  g.block[1] = by;
  return g;
}

cudaKernel_t ModuleKernels::extra_kernel(std::string_view suffix) const {
  for (const auto& [name, kernel] : extra)
    if (name == suffix) return kernel;
  throw Error(ErrorKind::internal, "tilemm: the module has no kernel with the suffix '" +
                                       std::string(suffix) +
                                       "': its family's extra_kernels does not list it");
}

std::string any_combination(const Variant&) { return {}; }
int any_alignment(const Variant&) { return 1; }
std::size_t no_workspace(const Variant&, const Problem&, const DeviceInfo&) { return 0; }
std::vector<std::string> no_extra_kernels(const Variant&) { return {}; }
std::string might_win(const Variant&, const DeviceInfo&, const Problem&) { return {}; }
std::string any_problem(const Variant&, const Problem&) { return {}; }
Precision computes_fp32(const Variant&) { return Precision::highest; }
Precision computes_tf32_split(const Variant& v) {
  return v.param("sp") == 3 ? Precision::high : Precision::medium;
}

void enqueue_gemm(const LaunchRequest& r) {
  launch_gemm_kernel(r.kernels.gemm, r.family.geometry(r.variant, r.problem), r.args, r.stream);
}

}  // namespace tilemm::detail
