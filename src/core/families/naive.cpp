// The naive family (kernel_templates/naive.cu): one thread per element of C, 16 x 16 blocks; the
// verification reference and the variant of last resort.
#include "family_registry.hpp"

namespace tilemm::detail {
namespace {

// The template's BLOCK_X and BLOCK_Y defaults, which no parameter overrides.
constexpr int kBlock = 16;

LaunchGeometry naive_geometry(const Variant&, const Problem& p) {
  return grid_over_c(p.M, p.N, kBlock, kBlock, kBlock, kBlock);
}

std::size_t naive_shared_bytes(const Variant&) { return 0; }

}  // namespace

Family naive_family() {
  Family f;
  f.name = "naive";
  f.template_file = "naive.cu";
  f.geometry = naive_geometry;
  f.shared_bytes = naive_shared_bytes;
  return f;
}
TILEMM_FAMILY(naive_family, 100)

}  // namespace tilemm::detail
