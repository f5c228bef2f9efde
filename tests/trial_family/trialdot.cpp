// The trialdot family (tests/trial_family/trialdot.cu): a test-only family written as a library
// family is, registered by its TILEMM_FAMILY line alone. Its search order places it between
// tf32wgmma and tf32wgmmapad; as a family added after the library's, it comes after them all.
#include <string>

#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

// The template's static_assert, with its message.
std::string check_trialdot(const Variant& v) {
  if (v.param("u") == 4 && v.param("b") != 16) return "UNROLL 4 only with 16 x 16 blocks";
  return {};
}

LaunchGeometry trialdot_geometry(const Variant& v, const Problem& p) {
  const int b = v.param("b");
  return grid_over_c(p.M, p.N, b, b, static_cast<unsigned>(b), static_cast<unsigned>(b));
}

std::size_t trialdot_shared_bytes(const Variant&) { return 0; }

}  // namespace

Family trialdot_family() {
  Family f;
  f.name = "trialdot";
  f.template_file = "trialdot.cu";
  f.params = {{"b", "BLOCK", {8, 16}}, {"u", "UNROLL", {1, 2, 4}}};
  f.check_params = check_trialdot;
  f.geometry = trialdot_geometry;
  f.shared_bytes = trialdot_shared_bytes;
  return f;
}
TILEMM_FAMILY(trialdot_family, 1450)

}  // namespace tilemm::detail
