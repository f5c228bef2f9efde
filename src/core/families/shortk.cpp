// The shortk family (kernel_templates/shortk.cu): large outputs with K of at most KMAX (32), where
// the time is writing C. A block of 256 threads owns TM rows and 128 columns of C, with B's part in
// registers and A's in shared memory, and writes C in warp-wide runs at any alignment.
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

constexpr int kColumns = 128;  // of C per block: kColumns in shortk.cu

LaunchGeometry shortk_geometry(const Variant& v, const Problem& p) {
  return grid_over_c(p.M, p.N, v.param("m"), kColumns, 256, 1);
}

// As[TM][KMAX + 1] and Bs[KMAX][128].
std::size_t shortk_shared_bytes(const Variant& v) {
  const auto tm = static_cast<std::size_t>(v.param("m"));
  const auto kmax = static_cast<std::size_t>(v.param("k"));
  return (tm * (kmax + 1) + kmax * kColumns) * sizeof(float);
}

std::string check_shortk_problem(const Variant& v, const Problem& p) {
  if (p.K > v.param("k"))
    return "shortk serves K <= " + std::to_string(v.param("k")) + ", the problem has K = " +
           std::to_string(p.K);
  return {};
}

}  // namespace

Family shortk_family() {
  Family f;
  f.name = "shortk";
  f.template_file = "shortk.cu";
  f.params = {{"m", "TM", {32, 64, 128}}, {"k", "KMAX", {8, 16, 32}}};
  f.geometry = shortk_geometry;
  f.shared_bytes = shortk_shared_bytes;
  f.check_problem = check_shortk_problem;
  return f;
}
TILEMM_FAMILY(shortk_family, 1700)

}  // namespace tilemm::detail
