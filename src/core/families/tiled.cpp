// The tiled family (kernel_templates/tiled.cu): the textbook shared-memory tile, TILE x TILE
// threads per TILE x TILE block of C, with PAD floats of padding per shared row.
#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

LaunchGeometry tiled_geometry(const Variant& v, const Problem& p) {
  const int t = v.param("t");
  return grid_over_c(p.M, p.N, t, t, static_cast<unsigned>(t), static_cast<unsigned>(t));
}

// The static As and Bs tiles of TILE x (TILE + PAD) floats.
std::size_t tiled_shared_bytes(const Variant& v) {
  const auto t = static_cast<std::size_t>(v.param("t"));
  return 2 * t * (t + static_cast<std::size_t>(v.param("p"))) * sizeof(float);
}

}  // namespace

Family tiled_family() {
  Family f;
  f.name = "tiled";
  f.template_file = "tiled.cu";
  f.params = {{"t", "TILE", {8, 16, 32}}, {"p", "PAD", {0, 1}}};
  f.geometry = tiled_geometry;
  f.shared_bytes = tiled_shared_bytes;
  return f;
}
TILEMM_FAMILY(tiled_family, 200)

}  // namespace tilemm::detail
